// The communication readers on hand-written files whose figures are worked
// out in the comments, and the collective-name helpers
// (importers/common/collectives.h) on the formats' own examples.

#include <string>

#include <gtest/gtest.h>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/ascend_communication/ascend_communication_importer.h"
#include "importers/common/collectives.h"
#include "importers/common/run_files.h"
#include "trace/trace.h"

namespace mi::importers {
namespace {

struct Reading {
  StringPool strings;
  Trace trace{&strings};
  DiagnosticSink diagnostics;
  SourceId source;
  Status Json(std::string_view text,
              std::string path = "r/communication.json") {
    ImportContext ctx = Context(std::move(path));
    Status s = ImportAscendCommunicationFromBuffer(text, ctx);
    source = ctx.source;
    return s;
  }
  Status Csv(std::string_view text,
             std::string path = "r/step_trace_time.csv") {
    ImportContext ctx = Context(std::move(path));
    Status s = ImportAscendStepTraceFromBuffer(text, ctx);
    source = ctx.source;
    return s;
  }
  ImportContext Context(std::string path) {
    ImportContext ctx;
    ctx.path = std::move(path);
    ctx.trace = &trace;
    ctx.diagnostics = &diagnostics;
    ctx.source = source;
    return ctx;
  }
  const CommunicationTables& comm() const { return trace.communication(); }
};

TEST(Collectives, GroupHashOfTheCheckedExample) {
  // cluster-formats.md: msprof-analyze's double_hash of this HCCL group
  // name; the op names of the group carry its last three digits (210).
  EXPECT_EQ(HcclGroupHash("90.91.105.46%enp189s0f0_60000_0_1736410538306028"),
            17148521525495523210ULL);
  EXPECT_EQ(HcclGroupHash(""), 0u);
  // One byte: high = low = the byte.
  EXPECT_EQ(HcclGroupHash("a"), (uint64_t{97} << 32) | 97);
}

TEST(Collectives, HcclOpNames) {
  auto op = ParseHcclOpName("hcom_allReduce__538_2_1");
  ASSERT_TRUE(op);
  EXPECT_EQ(op->collective, "allReduce");
  EXPECT_EQ(op->group_tag, "538");
  EXPECT_EQ(op->sequence, 2);
  EXPECT_EQ(op->trailer, 1);
  op = ParseHcclOpName("hcom_send__822_0");  // 2023: no trailing number
  ASSERT_TRUE(op);
  EXPECT_EQ(op->sequence, 0);
  EXPECT_EQ(op->trailer, -1);
  EXPECT_FALSE(ParseHcclOpName("hcom_allReduce_"));
  EXPECT_FALSE(ParseHcclOpName("hcom_allReduce__x_1_1"));
  EXPECT_FALSE(ParseHcclOpName("MatMul"));
}

TEST(Collectives, TypesOfEveryNaming) {
  EXPECT_EQ(CollectiveTypeOfName("hcom_allReduce__538_0_1"),
            CollectiveType::kAllReduce);
  EXPECT_EQ(CollectiveTypeOfName("hcom_reduceScatter__1_0_1"),
            CollectiveType::kReduceScatter);
  EXPECT_EQ(CollectiveTypeOfName("hcom_receive__822_1"),
            CollectiveType::kReceive);
  EXPECT_EQ(CollectiveTypeOfName("_allgather_base"),
            CollectiveType::kAllGather);
  EXPECT_EQ(CollectiveTypeOfName("reduce_scatter_tensor"),
            CollectiveType::kReduceScatter);
  EXPECT_EQ(CollectiveTypeOfName("all_to_all"), CollectiveType::kAllToAll);
  EXPECT_EQ(CollectiveTypeOfName("AllToAllV"), CollectiveType::kAllToAll);
  EXPECT_EQ(CollectiveTypeOfName("broadcast"), CollectiveType::kBroadcast);
  EXPECT_EQ(CollectiveTypeOfName("gather"), CollectiveType::kGather);
  EXPECT_EQ(CollectiveTypeOfName("MatMul"), CollectiveType::kUnknown);
}

TEST(Collectives, NcclKernelNames) {
  EXPECT_TRUE(IsNcclKernelName("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_FALSE(IsNcclKernelName("nccl:_all_gather_base"));  // annotation
  NcclKernelName n = ParseNcclKernelName(
      "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(n.collective, "AllGather");
  EXPECT_EQ(n.algorithm, "RING");
  EXPECT_EQ(n.protocol, "LL");
  n = ParseNcclKernelName("ncclKernel_AllReduce_TREE_LL128_Sum_bf16(x)");
  EXPECT_EQ(n.collective, "AllReduce");
  EXPECT_EQ(n.algorithm, "TREE");
  EXPECT_EQ(n.protocol, "LL128");
  n = ParseNcclKernelName("ncclDevKernel_SendRecv(x)");
  EXPECT_EQ(n.collective, "SendRecv");
  EXPECT_EQ(n.algorithm, "");
}

TEST(Collectives, BytesAsNcclTestsDefineS) {
  EXPECT_EQ(DtypeSize("BFloat16"), 2);
  EXPECT_EQ(DtypeSize("Float"), 4);
  EXPECT_EQ(DtypeSize("FP16"), 2);
  EXPECT_EQ(DtypeSize("Long"), 8);
  EXPECT_EQ(DtypeSize("Whatever"), -1);
  // All-gather of 25136 per rank on 8 ranks: S = 201088 x 2 bytes.
  EXPECT_EQ(CollectiveBytes(25136, 201088, 2), 402176);
  EXPECT_EQ(CollectiveBytes(-1, -1, 2), -1);
  EXPECT_EQ(CollectiveBytes(10, 10, -1), -1);
  EXPECT_EQ(CollectiveBytes(INT64_MAX, 0, 8), -1);  // overflow
}

TEST(Collectives, RankLists) {
  EXPECT_EQ(*ParseRankList("[0, 1, 2]"), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(*ParseRankList("(0,1)"), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(*ParseRankList("7"), (std::vector<int32_t>{7}));
  EXPECT_TRUE(ParseRankList("[]")->empty());
  EXPECT_FALSE(ParseRankList("(0, x)"));
  EXPECT_FALSE(ParseRankList("[0, 1"));
  EXPECT_FALSE(ParseRankList("-1"));
}

// A communication.json of one op with no timeline: the record comes from the
// table alone. 1.5 ms elapse = 0.5 transit + 0.75 wait + 0.25 idle.
constexpr std::string_view kCommunication = R"json({"step7": {"p2p": {},
 "collective": {"hcom_broadcast__483_1_1@9350434047717501483": {
  "Communication Time Info": {"Start Timestamp(us)": 1000.5,
   "Elapse Time(ms)": 1.5, "Transit Time(ms)": 0.5, "Wait Time(ms)": 0.75,
   "Synchronization Time(ms)": 0.125, "Idle Time(ms)": 0.25,
   "Wait Time Ratio": 0.6, "Synchronization Time Ratio": 0.2},
  "Communication Bandwidth Info": {
   "HCCS": {"Transit Size(MB)": 2.0, "Transit Time(ms)": 0.5,
            "Bandwidth(GB/s)": 4.0, "Large Packet Ratio": 0.0,
            "Size Distribution": {"1.0": [2, 0.5]}},
   "SDMA": {"Transit Size(MB)": 2.0, "Transit Time(ms)": 0.5,
            "Bandwidth(GB/s)": 4.0, "Large Packet Ratio": 0,
            "Size Distribution": {}}}},
 "Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 1.5},
  "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 2.0,
   "Transit Time(ms)": 0.5, "Size Distribution": {}}}}}}})json";

TEST(AscendCommunication, OpWithoutTimelineAndItsBandwidth) {
  Reading r;
  ASSERT_TRUE(r.Json(kCommunication).ok());
  ASSERT_EQ(r.comm().collectives.size(), 1u);
  const CollectiveRecord& c = r.comm().collectives[0];
  EXPECT_EQ(r.trace.str(c.name), "hcom_broadcast__483_1_1");
  EXPECT_EQ(c.type, CollectiveType::kBroadcast);
  EXPECT_EQ(c.sequence, 1);
  EXPECT_EQ(r.trace.str(c.group), "9350434047717501483");
  EXPECT_EQ(r.trace.str(c.step_label), "step7");
  EXPECT_FALSE(c.task.valid());
  EXPECT_EQ(c.start_ns, 1000500);
  EXPECT_EQ(c.end_ns - c.start_ns, 1500000);
  EXPECT_EQ(c.transit_ns, 500000);
  EXPECT_EQ(c.wait_ns, 750000);
  EXPECT_EQ(c.synchronization_ns, 125000);
  EXPECT_EQ(c.idle_ns, 250000);
  // HCCS, SDMA (its own row, never added to HCCS) and the total's HCCS.
  ASSERT_EQ(r.comm().bandwidth.size(), 3u);
  EXPECT_EQ(r.trace.str(r.comm().bandwidth[1].transport), "SDMA");
  EXPECT_EQ(r.comm().bandwidth[0].size_bytes, 2000000);
  EXPECT_EQ(r.comm().bandwidth[0].bandwidth_gbps, 4.0);
  EXPECT_EQ(r.trace.str(r.comm().bandwidth[2].op_name), "Total Op Info");
  EXPECT_EQ(r.comm().bandwidth[2].bandwidth_gbps, -1);  // none written
}

TEST(AscendCommunication, MetadataGroupsNameTheTimelineGroups) {
  Reading r;
  // Group hash 17148521525495523210 (tag 210) from the HCCL name.
  ASSERT_TRUE(r.Json(R"json({"ENV_VARIABLES": {}, "distributed_args":
    {"world_size": 16}, "parallel_group_info": {
    "90.91.105.46%enp189s0f0_60000_0_1736410538306028":
      {"group_name": "dp", "group_rank": 1, "global_ranks": [0, 8]}}})json",
                     "r/profiler_metadata.json")
                  .ok());
  const SourceInfo& s = r.trace.source(r.source);
  EXPECT_EQ(s.world_size, 16);
  ASSERT_EQ(s.process_groups.size(), 1u);
  const ProcessGroupInfo& g = s.process_groups[0];
  EXPECT_EQ(r.trace.str(g.name), "17148521525495523210");
  EXPECT_EQ(r.trace.str(g.long_name),
            "90.91.105.46%enp189s0f0_60000_0_1736410538306028");
  EXPECT_EQ(r.trace.str(g.description), "dp");
  EXPECT_EQ(g.group_rank, 1);
  EXPECT_EQ(g.global_ranks, (std::vector<int32_t>{0, 8}));
  // An HCCL op task of that group: its record takes the full hash.
  TrackInfo track;
  track.source = r.source;
  track.kind = TrackKind::kDeviceStream;
  TaskRow row;
  row.track = r.trace.AddTrack(track);
  row.name = r.strings.Intern("hcom_allReduce__210_0_1");
  row.kind = TaskKind::kCompute;
  row.task_class = r.strings.Intern(kTaskClassCommunication);
  row.start_ns = 10;
  row.duration_ns = 5;
  r.trace.AddTask(row);
  ASSERT_EQ(AddHcclCollectiveRecords(r.trace, r.source, 0), 1u);
  const CollectiveRecord& c = r.comm().collectives[0];
  EXPECT_EQ(r.trace.str(c.group), "17148521525495523210");
  EXPECT_EQ(c.group_size, 2);
  EXPECT_EQ(c.sequence, 0);
  EXPECT_EQ(c.end_ns, 15);
}

TEST(AscendCommunication, MetadataWithOtherKeysAddsNothing) {
  Reading r;
  ASSERT_TRUE(r.Json(R"json({"some_future_key": {"a": 1}})json",
                     "r/profiler_metadata.json")
                  .ok());
  EXPECT_EQ(r.trace.source(r.source).world_size, -1);
  EXPECT_TRUE(r.trace.source(r.source).process_groups.empty());
  EXPECT_TRUE(r.comm().empty());
}

TEST(AscendCommunication, MatrixLinks) {
  Reading r;
  ASSERT_TRUE(r.Json(R"json({"step1": {"p2p": {}, "collective": {
    "allreduce-top1@5": {"0-2": {"Transport Type": "HCCS",
      "Transit Size(MB)": 1.5, "Transit Time(ms)": 0.25,
      "Bandwidth(GB/s)": 6.0, "Op Name": "hcom_allReduce__005_0_1"}},
    "allreduce-total@5": {"0-0": {"Transport Type": "LOCAL",
      "Transit Size(MB)": 3, "Transit Time(ms)": 0.01,
      "Bandwidth(GB/s)": 300}}}}})json",
                     "r/communication_matrix.json")
                  .ok());
  ASSERT_EQ(r.comm().links.size(), 2u);
  const CommunicationLinkRow& a = r.comm().links[0];
  EXPECT_EQ(r.trace.str(a.statistic), "allreduce-top1");
  EXPECT_EQ(r.trace.str(a.group), "5");
  EXPECT_EQ(a.src_rank, 0);
  EXPECT_EQ(a.dst_rank, 2);
  EXPECT_EQ(a.size_bytes, 1500000);
  EXPECT_EQ(a.transit_ns, 250000);
  EXPECT_EQ(r.trace.str(r.comm().links[1].op_name), "");
}

TEST(AscendCommunication, JsonErrorsNamePlace) {
  Reading r;
  Status s = r.Json("{\"step1\": {\"collective\": [1,]}}");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("r/communication.json:1:"), std::string::npos)
      << s.message();
  s = r.Json(R"json({"step1": {"collective": {"x@1": 5}}})json");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at \"step1\".\"collective\".\"x@1\""),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(r.Json("").ok());
  EXPECT_FALSE(r.Json("[1]").ok());
}

TEST(AscendStepTrace, WithDeviceIdAndRounding) {
  Reading r;
  // 9847.663999999999 us = 9847664 ns (rounded at the ns).
  ASSERT_TRUE(r.Csv("Device_id,Step,Computing,Communication(Not Overlapped),"
                    "Overlapped,Communication,Free,Stage,Bubble,"
                    "Communication(Not Overlapped and Exclude Receive),"
                    "Preparing\r\n"
                    "3,50,9847.663999999999,1.5,0.25,1.75,2,3,0,1.5,1e-05\r\n")
                  .ok());
  ASSERT_EQ(r.comm().step_trace.size(), 1u);
  const StepTraceRow& row = r.comm().step_trace[0];
  EXPECT_EQ(row.device, 3);
  EXPECT_EQ(r.trace.str(row.step), "50");
  EXPECT_EQ(row.computing_ns, 9847664);
  EXPECT_EQ(row.communication_ns, 1750);
  EXPECT_EQ(row.free_ns, 2000);
  EXPECT_EQ(row.preparing_ns, 0);  // 0.01 ns
  EXPECT_EQ(row.line, 2u);
}

TEST(AscendStepTrace, ClusterRowsStagesAndParallelIndexColumns) {
  Reading r;
  // DB export writes stage tuples without spaces; DP/PP/TP Index columns
  // follow when distributed_args were recorded.
  ASSERT_TRUE(r.Csv("Step,Type,Index,Computing,Communication(Not Overlapped),"
                    "Overlapped,Communication,Free,Stage,Bubble,"
                    "Communication(Not Overlapped and Exclude Receive),"
                    "DP Index,PP Index,TP Index\n"
                    "1,rank,3,10,1,0,1,2,13,0,1,0,1,1\n"
                    "1,stage,\"(0,1,2,3)\",10,1,0,1,2,13,0,1,,,\n"
                    "1,stage,\"(4, 5)\",10,1,0,1,2,13,0,1,,,\n",
                    "out/cluster_step_trace_time.csv")
                  .ok());
  ASSERT_EQ(r.comm().step_trace.size(), 3u);
  EXPECT_EQ(r.trace.str(r.comm().step_trace[0].type), "rank");
  EXPECT_EQ(r.comm().step_trace[0].ranks, (std::vector<int32_t>{3}));
  EXPECT_EQ(r.comm().step_trace[1].ranks, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.comm().step_trace[2].ranks, (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(r.comm().step_trace[0].stage_ns, 13000);
  EXPECT_EQ(r.comm().step_trace[0].preparing_ns, -1);  // no such column
}

TEST(AscendStepTrace, ErrorsNameLineAndColumn) {
  Reading r;
  Status s = r.Csv("Step,Computing,Communication\n50,abc,1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("r/step_trace_time.csv:2:4: Computing 'abc'"),
            std::string::npos)
      << s.message();
  s = r.Csv("Step,Computing,Communication\n50,1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(":2:"), std::string::npos) << s.message();
  s = r.Csv("Step,Type,Index,Computing,Communication\n1,stage,\"(0, 1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(":2:9: quoted cell"), std::string::npos)
      << s.message();
  s = r.Csv("Name,Duration\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(":1:1: header lacks 'Step'"), std::string::npos)
      << s.message();
  EXPECT_FALSE(r.Csv("").ok());
}

TEST(ClusterAnalysisOutput, IsOneSourceOfItsOwn) {
  std::vector<RunFiles::File> files;
  for (std::string f :
       {"job/cluster_analysis_output/cluster_step_trace_time.csv",
        "job/cluster_analysis_output/cluster_communication.json",
        "job/cluster_analysis_output/cluster_communication_matrix.json",
        "job/cluster_analysis_output/cluster_analysis.db",
        "job/other/cluster_communication.json"}) {
    files.push_back({f, f});
  }
  RunFiles run(files, /*named=*/false);
  ascend_communication::ClaimClusterAnalysisOutput(run);
  const RunFiles::Source* a = run.source_of(0);
  const RunFiles::Source* b = run.source_of(1);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a, b);
  EXPECT_EQ(a->key, "job/cluster_analysis_output");
  EXPECT_EQ(a->rank, -1);
  ASSERT_EQ(run.left_out().size(), 1u);
  EXPECT_EQ(run.left_out()[0].paths,
            (std::vector<std::string>{"job/cluster_analysis_output/"
                                      "cluster_communication_matrix.json"}));
  EXPECT_FALSE(run.claimed(3));  // the SQLite importer's
  EXPECT_FALSE(run.claimed(4));  // not in such a folder
}

}  // namespace
}  // namespace mi::importers
