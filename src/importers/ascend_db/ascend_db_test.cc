// The torch_npu DB importer on the real 2-rank DB exports copied into
// test/fixtures/samples/cluster (origins: test/fixtures/samples/SOURCES.md)
// and on small databases written here with libsqlite3.
//
// Expected figures and where they come from:
// - facts.json of the shared cluster samples (bars/lib/cluster_facts.py,
//   an independent Python reader), repeated in SOURCES.md: per rank the
//   COMMUNICATION_OP row count and summed endNs - startNs, TASK rows,
//   STEP_TIME rows, RANK_DEVICE_MAP; per analysis.db the CommAnalyzerTime
//   rows and summed elapse_time.
// - shared/formats/cluster.md 1.3 / 2.1, checked there with sqlite3: the
//   2025 group name hashes to 17148521525495523210 (msprof-analyze's
//   double_hash; the op names carry its last digits "210"), the 2024 DBs
//   hold the hash 6071070343286431307 itself, COMMUNICATION_OP.waitNs of
//   2025-L1 rank 0 is 693394 then 0s and rank 1 has no such column,
//   StepTraceTime.communication of 2025-L1 rank 0 is 102108.1 us.
// - the rows of COMMUNICATION_OP read with the sqlite3 command line (dtype
//   id 4 = FP32 in ENUM_HCCL_DATA_TYPE, count 4097000 for op 0,
//   algType MESH-RING, host name "ubuntu" in HOST_INFO).
// - hand-made databases: the values written are the values expected.

#include "importers/ascend_db/ascend_db_importer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/collectives.h"
#include "importers/common/run_files.h"
#include "trace/trace.h"

namespace mi::importers {
namespace {

namespace fs = std::filesystem;

const fs::path kCluster =
    fs::path(MI_SOURCE_DIR) / "test/fixtures/samples/cluster";

fs::path DbOf(const std::string& set, int rank, bool analysis = false) {
  fs::path p =
      kCluster / set / ("rank" + std::to_string(rank) + "_ascend_pt") /
      "ASCEND_PROFILER_OUTPUT" /
      (analysis ? std::string("analysis.db")
                : "ascend_pytorch_profiler_" + std::to_string(rank) + ".db");
  // A missing fixture fails; it never skips.
  EXPECT_TRUE(fs::exists(p)) << p;
  return p;
}

struct Loaded {
  StringPool strings;
  Trace trace{&strings};
  DiagnosticSink diagnostics;
  SourceId source;
  AscendDbStats profiler;
  AscendDbStats analysis;
  Status status;
};

// Both databases of one rank folder into one source, as the session reads
// them (profiler DB first).
void Load(Loaded& l, const fs::path& profiler, const fs::path& analysis = {},
          int32_t folder_rank = -1) {
  l.source = l.trace.FindOrAddSource(l.strings.Intern("rank_folder"));
  l.trace.mutable_source(l.source).rank = folder_rank;
  for (const fs::path& path : {profiler, analysis}) {
    if (path.empty()) continue;
    ImportContext ctx;
    ctx.path = path.string();
    ctx.trace = &l.trace;
    ctx.diagnostics = &l.diagnostics;
    ctx.source = l.source;
    l.status =
        ImportAscendDb(ctx, path == profiler ? &l.profiler : &l.analysis);
    if (!l.status.ok()) return;
  }
}

// Device-side communication (execution tasks): the host's Hccl@ API calls
// are communication by name too, but runtime calls.
bool IsDeviceCommunication(const Trace& trace, TaskId t) {
  return IsExecutionKind(trace.task_kind(t)) && IsCommunicationTask(trace, t);
}

int64_t SumCommunicationTaskNs(const Trace& trace) {
  int64_t sum = 0;
  for (size_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    if (IsDeviceCommunication(trace, t)) sum += trace.task_duration_ns(t);
  }
  return sum;
}

size_t CountCommunicationTasks(const Trace& trace) {
  size_t n = 0;
  for (size_t i = 0; i < trace.task_count(); ++i) {
    if (IsDeviceCommunication(trace, TaskId(static_cast<uint32_t>(i)))) ++n;
  }
  return n;
}

// facts.json, per set and rank: COMMUNICATION_OP rows and summed duration
// (ns; facts.json gives us with 3 decimals), TASK rows, analysis.db
// CommAnalyzerTime rows (0 at Level0).
struct RankFacts {
  const char* set;
  int rank;
  int64_t comm_ops;
  int64_t comm_ns;
  uint64_t task_rows;
  uint64_t comm_time_rows;
};
constexpr RankFacts kFacts[] = {
    {"msinsight_pt_db_level1_2rank_2025", 0, 4, 102108100, 552, 4},
    {"msinsight_pt_db_level1_2rank_2025", 1, 4, 98590190, 552, 4},
    {"msinsight_pt_db_level1_2rank_2024", 0, 4, 32528325, 1742, 4},
    {"msinsight_pt_db_level1_2rank_2024", 1, 4, 22665868, 1742, 4},
    {"msinsight_pt_db_level0_2rank_2025", 0, 4, 89880576, 550, 0},
    {"msinsight_pt_db_level0_2rank_2025", 1, 4, 93993858, 550, 0},
};

TEST(AscendDb, EveryRankMatchesTheSharedFacts) {
  for (const RankFacts& f : kFacts) {
    SCOPED_TRACE(std::string(f.set) + " rank " + std::to_string(f.rank));
    Loaded l;
    Load(l, DbOf(f.set, f.rank), DbOf(f.set, f.rank, true));
    ASSERT_TRUE(l.status.ok()) << l.status.ToString();
    EXPECT_EQ(l.profiler.device_tasks, f.task_rows);
    EXPECT_EQ(l.profiler.communication_ops, static_cast<uint64_t>(f.comm_ops));
    EXPECT_EQ(l.profiler.steps, 1u);
    EXPECT_EQ(l.profiler.rows_skipped, 0u);
    // The communication tasks are exactly the HCCL ops (their sub-tasks on
    // the streams are syncs and copies, never counted twice).
    EXPECT_EQ(CountCommunicationTasks(l.trace),
              static_cast<size_t>(f.comm_ops));
    EXPECT_EQ(SumCommunicationTaskNs(l.trace), f.comm_ns);
    const auto& records = l.trace.communication().collectives;
    ASSERT_EQ(records.size(), static_cast<size_t>(f.comm_ops));
    int64_t record_ns = 0;
    for (const CollectiveRecord& c : records) {
      record_ns += c.end_ns - c.start_ns;
      EXPECT_TRUE(c.task.valid());
      EXPECT_EQ(c.type, CollectiveType::kAllReduce);
      EXPECT_EQ(l.strings.Get(c.step_label), "step50");
      EXPECT_EQ(l.trace.str(l.trace.runs()[static_cast<size_t>(c.run)].name),
                "ProfilerStep#50");
    }
    EXPECT_EQ(record_ns, f.comm_ns);
    // Sequence <k> of hcom_allReduce__<G>_<k>_1: 0..3 in start order.
    for (size_t i = 0; i < records.size(); ++i) {
      EXPECT_EQ(records[i].sequence, static_cast<int64_t>(i));
    }
    // RANK_DEVICE_MAP [[r, r]]: the rank, with no folder rank to confirm.
    EXPECT_EQ(l.trace.source(l.source).rank, f.rank);
    EXPECT_EQ(l.trace.source(l.source).time_base, TimeBase::kEpoch);
    EXPECT_EQ(l.analysis.comm_time_matched, f.comm_time_rows);
    EXPECT_EQ(l.analysis.comm_time_added, 0u);
    EXPECT_EQ(l.analysis.step_trace_rows, 1u);
    if (f.comm_time_rows > 0) {
      // HCCL's split: Elapse = Transit + Wait + Idle per op (cluster.md
      // 2.1), and Σ elapse = Σ COMMUNICATION_OP durations (cross-check 4);
      // each figure is rounded to the ns once.
      int64_t split = 0;
      for (const CollectiveRecord& c : records) {
        ASSERT_GE(c.transit_ns, 0);
        ASSERT_GE(c.idle_ns, 0);
        ASSERT_GE(c.synchronization_ns, 0);
        split += c.transit_ns + c.wait_ns + c.idle_ns;
      }
      EXPECT_NEAR(static_cast<double>(split), static_cast<double>(f.comm_ns),
                  12.0);
    }
  }
}

TEST(AscendDb, GroupsOf2025AreHashedAnd2024AreAsWritten) {
  EXPECT_EQ(HcclGroupHash("90.91.105.46%enp189s0f0_60000_0_1736410538306028"),
            17148521525495523210ull);
  {
    Loaded l;
    Load(l, DbOf("msinsight_pt_db_level1_2rank_2025", 0));
    ASSERT_TRUE(l.status.ok()) << l.status.ToString();
    const SourceInfo& source = l.trace.source(l.source);
    ASSERT_EQ(source.process_groups.size(), 1u);
    const ProcessGroupInfo& g = source.process_groups[0];
    EXPECT_EQ(l.strings.Get(g.name), "17148521525495523210");
    EXPECT_EQ(l.strings.Get(g.long_name),
              "90.91.105.46%enp189s0f0_60000_0_1736410538306028");
    EXPECT_EQ(l.strings.Get(source.host), "ubuntu");
    const CollectiveRecord& c = l.trace.communication().collectives[0];
    EXPECT_EQ(l.strings.Get(c.name), "hcom_allReduce__210_0_1");
    EXPECT_EQ(l.strings.Get(c.group), "17148521525495523210");
    EXPECT_TRUE(l.strings.Get(c.group).ends_with(
        ParseHcclOpName(l.strings.Get(c.name))->group_tag));
    EXPECT_EQ(l.strings.Get(c.dtype), "FP32");
    EXPECT_EQ(c.in_elements, 4097000);
    EXPECT_EQ(c.out_elements, 4097000);
    EXPECT_EQ(c.bytes, 4097000 * 4);
    EXPECT_EQ(l.strings.Get(c.algorithm), "MESH-RING");
    EXPECT_EQ(c.group_size, -1);  // no parallel_group_info in the sample
  }
  {
    Loaded l;
    Load(l, DbOf("msinsight_pt_db_level1_2rank_2024", 1));
    ASSERT_TRUE(l.status.ok()) << l.status.ToString();
    const SourceInfo& source = l.trace.source(l.source);
    ASSERT_EQ(source.process_groups.size(), 1u);
    EXPECT_EQ(l.strings.Get(source.process_groups[0].name),
              "6071070343286431307");
    EXPECT_EQ(source.process_groups[0].long_name, StringPool::kEmpty);
    EXPECT_EQ(l.strings.Get(source.host), "ubuntu125");
    for (const CollectiveRecord& c : l.trace.communication().collectives) {
      EXPECT_EQ(l.strings.Get(c.group), "6071070343286431307");
    }
  }
}

// Schema drift inside one job: 2025-L1 rank 0 has COMMUNICATION_OP.waitNs
// (and TASK.depth), rank 1 has not; both read, only rank 0 has the wait.
TEST(AscendDb, MixedSchemaInsideOneJob) {
  Loaded r0, r1;
  Load(r0, DbOf("msinsight_pt_db_level1_2rank_2025", 0));
  Load(r1, DbOf("msinsight_pt_db_level1_2rank_2025", 1));
  ASSERT_TRUE(r0.status.ok()) << r0.status.ToString();
  ASSERT_TRUE(r1.status.ok()) << r1.status.ToString();
  const auto& c0 = r0.trace.communication().collectives;
  const auto& c1 = r1.trace.communication().collectives;
  ASSERT_EQ(c0.size(), 4u);
  ASSERT_EQ(c1.size(), 4u);
  EXPECT_EQ(c0[0].wait_ns, 693394);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(c0[i].wait_ns, 0);
  for (const CollectiveRecord& c : c1) EXPECT_EQ(c.wait_ns, -1);
  // Same op names on both ranks (the cross-rank key, cluster.md 2.1).
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r0.strings.Get(c0[i].name), r1.strings.Get(c1[i].name));
    EXPECT_EQ(r0.strings.Get(c0[i].group), r1.strings.Get(c1[i].group));
  }
}

TEST(AscendDb, StepTraceAndTablesOfAnalysisDb) {
  Loaded l;
  Load(l, DbOf("msinsight_pt_db_level1_2rank_2025", 0),
       DbOf("msinsight_pt_db_level1_2rank_2025", 0, true));
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  const CommunicationTables& tables = l.trace.communication();
  ASSERT_EQ(tables.step_trace.size(), 1u);
  EXPECT_EQ(l.strings.Get(tables.step_trace[0].step), "50");
  // StepTraceTime.communication = Σ COMMUNICATION_OP (cross-check 4).
  EXPECT_EQ(tables.step_trace[0].communication_ns, 102108100);
  // Per (op, transport): 4 ops x (HCCS, SDMA) of the 12 packet-size rows.
  EXPECT_EQ(tables.bandwidth.size(), 8u);
  EXPECT_EQ(tables.links.size(), 48u);  // CommAnalyzerMatrix rows
  // Overlapped = Communication - Communication(Not Overlapped).
  const StepTraceRow& s = tables.step_trace[0];
  EXPECT_NEAR(static_cast<double>(s.overlapped_ns),
              static_cast<double>(s.communication_ns -
                                  s.communication_not_overlapped_ns),
              2.0);
}

// The sub-tasks HCCL runs on the streams keep the timeline's kinds: Notify
// Wait / Write Value are syncs (IsSyncTask), SDMA is data movement; each
// HCCL op spans exactly its sub-tasks (cluster.md cross-check 5); device
// tasks find their host launch by connectionId.
TEST(AscendDb, DeviceTaskKindsAndLaunches) {
  Loaded l;
  Load(l, DbOf("msinsight_pt_db_level1_2rank_2025", 1));
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  const Trace& trace = l.trace;
  std::map<std::string, int> syncs, data;
  int compute = 0;
  for (size_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    const std::string name(trace.str(trace.task_name(t)));
    if (IsSyncTask(trace, t)) ++syncs[name];
    if (trace.task_kind(t) == TaskKind::kDataMovement) ++data[name];
    if (trace.task_kind(t) == TaskKind::kCompute &&
        !IsCommunicationTask(trace, t)) {
      ++compute;
    }
  }
  // TASK.taskType counts of rank 1 (sqlite3: Notify Wait 112, Write Value
  // 112, EVENT_RECORD 16, EVENT_WAIT 10, SDMA 72, MEMCPY_ASYNC 24;
  // compute: KERNEL_AIVEC 149 + KERNEL_AICORE 39 + AI_CORE 9 + MIX_AIV 5,
  // and STARS_COMMON 2, whose COMPUTE_TASK_INFO.taskType is DSA_SQE).
  EXPECT_EQ(syncs["Notify Wait"], 112);
  EXPECT_EQ(syncs["Write Value"], 112);
  EXPECT_EQ(syncs["EVENT_RECORD"], 16);
  EXPECT_EQ(syncs["EVENT_WAIT"], 10);
  EXPECT_EQ(data["SDMA"], 72);
  EXPECT_EQ(data["MEMCPY_ASYNC"], 24);
  // 4 of the 9 AI_CORE rows are the HCCL ops themselves (no
  // COMPUTE_TASK_INFO, an op's connectionId, its whole interval): read as
  // the ops only (sqlite3: AI_CORE rows on stream 4 with the connectionIds
  // 1175, 1204, 1235, 1596 of the rank's four COMMUNICATION_OP rows).
  EXPECT_EQ(l.profiler.op_rows, 4u);
  EXPECT_EQ(compute, 149 + 39 + 9 - 4 + 5 + 2);
  EXPECT_GT(l.profiler.launches, 0u);
  // Every HCCL op was launched by the host (COMMUNICATION_OP.connectionId
  // = a node-level CANN_API launch).
  for (const CollectiveRecord& c : trace.communication().collectives) {
    TaskId launch = trace.task_launch(c.task);
    ASSERT_TRUE(launch.valid());
    EXPECT_EQ(trace.track(trace.task_track(launch)).kind,
              TrackKind::kHostThread);
    EXPECT_EQ(trace.task_correlation(launch), trace.task_correlation(c.task));
  }
}

// ---- hand-made databases ----

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (fs::temp_directory_path() / "ascend_db_test_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void Exec(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(h);
}

Status ImportOne(const fs::path& path, Loaded& l) {
  Load(l, path);
  return l.status;
}

constexpr char kMinimalProfiler[] =
    "CREATE TABLE STRING_IDS(id INTEGER, value TEXT);"
    "INSERT INTO STRING_IDS VALUES (1, 'hcom_allGather__001_0_1'),"
    " (2, 'grp%eth0_1'), (3, 'hcom_allGather_'), (4, 'RING'),"
    " (5, 'Notify Wait'), (6, 'launch');"
    "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER,"
    " connectionId INTEGER, globalTaskId INTEGER, globalPid INTEGER,"
    " taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER,"
    " modelId INTEGER);"
    "INSERT INTO TASK VALUES (1000, 1500, 3, 7, 1, 0, 5, 0, 9, 1, 0);"
    "CREATE TABLE COMMUNICATION_OP(opName INTEGER, startNs INTEGER,"
    " endNs INTEGER, connectionId INTEGER, groupName INTEGER, opId INTEGER,"
    " relay INTEGER, retry INTEGER, dataType INTEGER, algType INTEGER,"
    " count INTEGER, opType INTEGER);"
    "INSERT INTO COMMUNICATION_OP VALUES (1, 900, 1600, 7, 2, 1, 0, 0, 11, 4,"
    " 1000, 3);"
    "CREATE TABLE CANN_API(startNs INTEGER, endNs INTEGER, type INTEGER,"
    " globalTid INTEGER, connectionId INTEGER, name INTEGER);"
    "INSERT INTO CANN_API VALUES (100, 200, 10000, 4294967298, 7, 6);"
    "CREATE TABLE META_DATA(name TEXT, value TEXT);"
    "INSERT INTO META_DATA VALUES ('parallel_group_info',"
    " '{\"grp%eth0_1\": {\"group_name\": \"dp\", \"group_rank\": 1,"
    " \"global_ranks\": [4, 5, 6, 7]}}');";

// parallel_group_info gives the group its global ranks; an all-gather's
// count is per rank, so its whole array is 4 x 1000 BFP16 (id 11) = 8000 B.
TEST(AscendDb, HandMadeProfilerDbWithParallelGroupInfo) {
  TempDir dir;
  const fs::path db = dir.path() / "ascend_pytorch_profiler_5.db";
  Exec(db, kMinimalProfiler);
  Loaded l;
  ASSERT_TRUE(ImportOne(db, l).ok()) << l.status.ToString();
  const SourceInfo& source = l.trace.source(l.source);
  ASSERT_EQ(source.process_groups.size(), 1u);
  const ProcessGroupInfo& g = source.process_groups[0];
  EXPECT_EQ(l.strings.Get(g.name), std::to_string(HcclGroupHash("grp%eth0_1")));
  EXPECT_EQ(l.strings.Get(g.long_name), "grp%eth0_1");
  EXPECT_EQ(l.strings.Get(g.description), "dp");
  EXPECT_EQ(g.global_ranks, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(g.group_rank, 1);
  const CollectiveRecord& c = l.trace.communication().collectives.at(0);
  EXPECT_EQ(c.type, CollectiveType::kAllGather);
  EXPECT_EQ(c.group, g.name);
  EXPECT_EQ(c.group_size, 4);
  EXPECT_EQ(c.in_elements, 1000);
  EXPECT_EQ(c.out_elements, 4000);
  EXPECT_EQ(l.strings.Get(c.dtype), "BFP16");
  EXPECT_EQ(c.bytes, 8000);
  EXPECT_EQ(c.start_ns, 900);
  EXPECT_EQ(c.end_ns, 1600);
  // No STEP_TIME: one run "whole trace", the step label "step".
  ASSERT_EQ(l.trace.runs().size(), 1u);
  EXPECT_EQ(l.strings.Get(l.trace.runs()[0].name), "whole trace");
  EXPECT_EQ(l.strings.Get(c.step_label), "step");
  // The HCCL op sits on device 3 (the only device of the tasks); the
  // Notify Wait and the op were both launched by Node@launch.
  const TrackInfo& hccl = l.trace.track(l.trace.task_track(c.task));
  EXPECT_EQ(l.strings.Get(hccl.process_name), "HCCL");
  EXPECT_EQ(hccl.device, 3);
  ASSERT_TRUE(l.trace.task_launch(c.task).valid());
  EXPECT_EQ(l.trace.str(l.trace.task_name(l.trace.task_launch(c.task))),
            "Node@launch");
  const TrackInfo& host =
      l.trace.track(l.trace.task_track(l.trace.task_launch(c.task)));
  EXPECT_EQ(host.pid, 1);
  EXPECT_EQ(host.tid, 2);
}

// RANK_DEVICE_MAP without importing (facts.json: [[0, 0]] and [[1, 1]]).
TEST(AscendDb, RankDeviceMapAlone) {
  for (int rank : {0, 1}) {
    auto rd = ReadAscendDbRankDevice(
        DbOf("msinsight_pt_db_level1_2rank_2024", rank).string());
    ASSERT_TRUE(rd.ok()) << rd.status().ToString();
    EXPECT_EQ(rd->rank, rank);
    EXPECT_EQ(rd->device, rank);
  }
  // analysis.db has no such table.
  auto none = ReadAscendDbRankDevice(
      DbOf("msinsight_pt_db_level1_2rank_2024", 0, true).string());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->rank, -1);
}

TEST(AscendDb, RankDisagreementIsADiagnostic) {
  Loaded l;
  Load(l, DbOf("msinsight_pt_db_level1_2rank_2024", 1), {}, /*rank=*/7);
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  EXPECT_EQ(l.trace.source(l.source).rank, 7);
  bool reported = false;
  for (const Diagnostic& d : l.diagnostics.log()) {
    if (d.code == DiagnosticCode::kRankMismatch) {
      reported = true;
      EXPECT_NE(d.message.find("rank 1"), std::string::npos) << d.message;
    }
  }
  EXPECT_TRUE(reported);
}

// A WAL-mode database opens read-only and immutable: nothing is created
// beside it, even in a folder that could take a -wal / -shm file.
TEST(AscendDb, WalModeDatabaseOpensWithoutCreatingFiles) {
  TempDir dir;
  const fs::path src = DbOf("msinsight_pt_db_level1_2rank_2025", 0);
  {
    std::ifstream in(src, std::ios::binary);
    char header[20];
    in.read(header, 20);
    ASSERT_EQ(header[18], 2);  // WAL journal mode (SQLite file format)
    ASSERT_EQ(header[19], 2);
  }
  const fs::path db = dir.path() / "ascend_pytorch_profiler_0.db";
  fs::copy_file(src, db);
  Loaded l;
  ASSERT_TRUE(ImportOne(db, l).ok()) << l.status.ToString();
  EXPECT_EQ(l.profiler.device_tasks, 552u);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"ascend_pytorch_profiler_0.db"});
}

void ExpectError(const fs::path& path, StatusCode code,
                 std::vector<std::string> fragments) {
  SCOPED_TRACE(path.string());
  Loaded l;
  Status status = ImportOne(path, l);
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(path.string()), std::string::npos)
      << status.message();
  for (const std::string& f : fragments) {
    EXPECT_NE(status.message().find(f), std::string::npos)
        << "'" << f << "' not in: " << status.message();
  }
}

TEST(AscendDb, BadInputsSayFileAndWhat) {
  TempDir dir;
  // Not SQLite at all.
  const fs::path text = dir.path() / "analysis.db";
  std::ofstream(text) << "step,computing\n50,1.0\n";
  ExpectError(text, StatusCode::kMalformedInput, {"not an SQLite database"});
  // Empty.
  const fs::path empty = dir.path() / "ascend_pytorch_profiler_1.db";
  std::ofstream(empty).close();
  ExpectError(empty, StatusCode::kMalformedInput, {"empty file"});
  // Truncated: the first page of a real profiler DB (the schema lies
  // beyond it).
  const fs::path cut = dir.path() / "ascend_pytorch_profiler_2.db";
  {
    std::ifstream in(DbOf("msinsight_pt_db_level1_2rank_2024", 0),
                     std::ios::binary);
    std::string page(4096, '\0');
    in.read(page.data(), 4096);
    std::ofstream(cut, std::ios::binary) << page;
  }
  ExpectError(cut, StatusCode::kMalformedInput, {});
  // Corrupt: a real DB whose schema page has an invalid b-tree page type
  // (byte 100, the first of page 1's b-tree header, set to 0x01).
  const fs::path corrupt = dir.path() / "ascend_pytorch_profiler_3.db";
  {
    std::ifstream in(DbOf("msinsight_pt_db_level1_2rank_2024", 0),
                     std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    all[100] = '\x01';
    std::ofstream(corrupt, std::ios::binary) << all;
  }
  ExpectError(corrupt, StatusCode::kMalformedInput, {});
  // SQLite, but someone else's tables.
  const fs::path other = dir.path() / "other.db";
  Exec(other, "CREATE TABLE notes(a, b);");
  ExpectError(other, StatusCode::kMalformedInput,
              {"without torch_npu's tables", "notes", "StepTraceTime"});
  // A profiler DB lacking TASK.
  const fs::path no_task = dir.path() / "ascend_pytorch_profiler_4.db";
  Exec(no_task, "CREATE TABLE STRING_IDS(id, value);");
  ExpectError(no_task, StatusCode::kMalformedInput, {"no table TASK"});
  // TASK lacking a column.
  const fs::path no_stream = dir.path() / "ascend_pytorch_profiler_5.db";
  Exec(no_stream,
       "CREATE TABLE STRING_IDS(id, value);"
       "CREATE TABLE TASK(startNs, endNs, deviceId, taskType);");
  ExpectError(no_stream, StatusCode::kMalformedInput,
              {"table TASK has no column 'streamId'"});
  // COMMUNICATION_OP lacking a column.
  const fs::path no_group = dir.path() / "ascend_pytorch_profiler_6.db";
  Exec(no_group,
       "CREATE TABLE STRING_IDS(id, value);"
       "CREATE TABLE TASK(startNs, endNs, deviceId, streamId, taskType);"
       "CREATE TABLE COMMUNICATION_OP(opName, startNs, endNs, opType);");
  ExpectError(no_group, StatusCode::kMalformedInput,
              {"table COMMUNICATION_OP has no column 'groupName'"});
  // A row without its times is skipped and reported, not fatal.
  const fs::path null_row = dir.path() / "ascend_pytorch_profiler_7.db";
  Exec(null_row,
       "CREATE TABLE STRING_IDS(id, value);"
       "CREATE TABLE TASK(startNs, endNs, deviceId, streamId, taskType);"
       "INSERT INTO TASK VALUES (NULL, 5, 0, 1, 1), (1, 2, 0, 1, 1);");
  Loaded l;
  ASSERT_TRUE(ImportOne(null_row, l).ok()) << l.status.ToString();
  EXPECT_EQ(l.profiler.device_tasks, 1u);
  EXPECT_EQ(l.profiler.rows_skipped, 1u);
}

TEST(AscendDb, SniffsSqliteHeadsByNameOrTables) {
  std::unique_ptr<Importer> importer = CreateAscendDbImporter();
  const std::string sqlite("SQLite format 3\0rest", 20);
  EXPECT_EQ(importer->Sniff(sqlite, "x/ascend_pytorch_profiler_3.db"), 100);
  EXPECT_EQ(importer->Sniff(sqlite, "x/analysis.db"), 100);
  EXPECT_EQ(importer->Sniff(sqlite + "CREATE TABLE StepTraceTime", "a.sqlite"),
            90);
  EXPECT_EQ(importer->Sniff(sqlite, "x/other.db"), 0);
  EXPECT_EQ(importer->Sniff("step,computing", "x/analysis.db"), 1);
  EXPECT_EQ(importer->Sniff("step,computing", "x/other.db"), 0);
  EXPECT_TRUE(ascend_db::IsProfilerDbFileName("ascend_pytorch_profiler.db"));
  EXPECT_TRUE(ascend_db::IsProfilerDbFileName("ascend_pytorch_profiler_12.db"));
  EXPECT_FALSE(ascend_db::IsProfilerDbFileName("ascend_pytorch_profiler_x.db"));
}

TEST(AscendDb, ClaimsTheDbFilesOfEachRankFolder) {
  const std::string set = "msinsight_pt_db_level1_2rank_2025";
  std::vector<RunFiles::File> listing;
  for (int rank : {1, 0}) {
    for (bool analysis : {true, false}) {
      fs::path p = DbOf(set, rank, analysis);
      listing.push_back({p.string(), fs::relative(p, kCluster).string()});
    }
  }
  RunFiles files(listing, /*named=*/false);
  ascend_db::ClaimDbFiles(files);
  std::vector<size_t> order = files.LoadOrder();
  ASSERT_EQ(order.size(), 4u);
  // Profiler DBs first (rank folders in path order), then analysis.db.
  std::vector<std::string> names;
  for (size_t i : order) {
    names.push_back(fs::path(listing[i].path).filename().string());
    const RunFiles::Source* s = files.source_of(i);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->rank, s->key.ends_with("rank0_ascend_pt") ? 0 : 1) << s->key;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ascend_pytorch_profiler_0.db",
                                             "ascend_pytorch_profiler_1.db",
                                             "analysis.db", "analysis.db"}));
  // Beside a text timeline, the DB files are left out.
  std::vector<RunFiles::File> both = {
      {"r/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
       "r/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"},
      {"r/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
       "r/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
       "ascend_pytorch_profiler_0.db"}};
  RunFiles with_text(both, false);
  ascend_db::ClaimDbFiles(with_text);
  EXPECT_FALSE(with_text.claimed(0));
  EXPECT_TRUE(with_text.claimed(1));
  EXPECT_EQ(with_text.left_out().size(), 1u);
}

}  // namespace
}  // namespace mi::importers
