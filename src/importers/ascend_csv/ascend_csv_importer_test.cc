#include "importers/ascend_csv/ascend_csv_importer.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "importers/common/ascend_task_type.h"
#include "importers/common/trace_fuzz_util.h"

namespace mi::importers {
namespace {

struct CsvRun : TraceImportRun<ImportAscendCsvFromBuffer> {
  CsvRun() { path = "op_summary_0.csv"; }
  TaskId Find(std::string_view name) const {
    for (uint32_t i = 0; i < trace.task_count(); ++i) {
      if (strings.Get(trace.task_name(TaskId(i))) == name) return TaskId(i);
    }
    return TaskId::Invalid();
  }
};

// Current op_summary header, quoted tab-suffixed time, """a,b;c""" shapes,
// an HCCL row with N/A ids that is shorter than the header.
constexpr std::string_view kOpSummary =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
    "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num,"
    "Mix Block Num,HF32 Eligible,Input Shapes,Output Shapes,Context ID\r\n"
    "0,4294967295,11,2,Conv2D1,Conv2D,static,AI_CORE,"
    "\"1717575960208020.758\t\",313.886,0,32,0,NO,"
    "\"\"\"32,3,224,224;64,3,11,11\"\"\",\"\"\"32,4,55,55,16\"\"\",N/A\r\n"
    "0,4294967295,N/A,N/A,hcom_allReduce__1,hcom_allReduce_,N/A,"
    "COMMUNICATION,1717575960208500.5,790.52\r\n";

TEST(AscendCsvTest, RowsBecomeTasksAtEveryChunking) {
  for (size_t chunk : {size_t{1}, size_t{5}, size_t{64}, kOpSummary.size()}) {
    CsvRun r;
    ASSERT_TRUE(r.Import(kOpSummary, chunk).ok()) << chunk;
    ASSERT_EQ(r.trace.task_count(), 2u) << chunk;
    TaskId conv = r.Find("Conv2D1");
    ASSERT_TRUE(conv.valid());
    EXPECT_EQ(r.trace.task_start_ns(conv), 1717575960208020758) << chunk;
    EXPECT_EQ(r.trace.task_duration_ns(conv), 313886);
    EXPECT_EQ(r.strings.Get(r.trace.task_op_type(conv)), "Conv2D");
    EXPECT_EQ(r.strings.Get(r.trace.task_shapes(conv)),
              "32,3,224,224;64,3,11,11");
    EXPECT_EQ(r.trace.task_kind(conv), TaskKind::kCompute);
    TaskId hccl = r.Find("hcom_allReduce__1");
    ASSERT_TRUE(hccl.valid());
    EXPECT_EQ(r.trace.task_kind(hccl), TaskKind::kCompute);
    EXPECT_EQ(
        r.strings.Get(r.trace.track(r.trace.task_track(hccl)).thread_name),
        "Communication");
  }
}

// memory_record.csv (torch_npu, MB; rows as in the msinsight sample): one
// allocator sample per row, per component, for the memory analysis.
TEST(AscendCsvTest, MemoryRecordRowsBecomeAllocatorSamples) {
  constexpr std::string_view kMemoryRecord =
      "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),"
      "Total Active(MB),Stream Ptr,Device Type\r\n"
      "APP,1736408883573957.920\t,,2109.6015625,,,NPU:0\r\n"
      "PTA,1736408883694624.810\t,954.3701171875,1452.0,954.3701171875,"
      "897357296,NPU:0\r\n"
      "PTA+GE,1736408883694625.000,0.5,2.0,,,NPU:3\r\n";
  for (size_t chunk : {size_t{1}, size_t{7}, kMemoryRecord.size()}) {
    CsvRun r;
    r.path = "memory_record.csv";
    ASSERT_TRUE(r.Import(kMemoryRecord, chunk).ok()) << chunk;
    EXPECT_EQ(r.trace.task_count(), 0u);
    const auto& samples = r.trace.allocator_samples();
    ASSERT_EQ(samples.size(), 3u) << chunk;
    EXPECT_EQ(r.strings.Get(samples[0].component), "APP");
    EXPECT_EQ(samples[0].total_allocated_bytes, -1);
    EXPECT_EQ(samples[0].total_reserved_bytes,
              static_cast<int64_t>(2109.6015625 * 1048576));
    EXPECT_EQ(samples[1].time_ns, 1736408883694624810);
    EXPECT_EQ(samples[1].total_allocated_bytes,
              static_cast<int64_t>(954.3701171875 * 1048576));
    EXPECT_EQ(samples[1].device, 0);
    EXPECT_EQ(samples[2].device, 3);
    EXPECT_EQ(r.strings.Get(samples[2].component), "PTA+GE");
  }
  EXPECT_EQ(
      CreateAscendCsvImporter()->Sniff(kMemoryRecord, "memory_record.csv"), 90);
}

// npu_module_mem.csv (torch_npu, MB; rows as in the msinsight sample):
// one per-module sample per row (reserved only), which the timeline draws
// and the memory analysis leaves out.
TEST(AscendCsvTest, ModuleMemoryRowsBecomePerModuleSamples) {
  constexpr std::string_view kModuleMem =
      "Component,Timestamp(us),Total Reserved(MB),Device\r\n"
      "SLOG,1736408883657086.220\t,0.0,NPU:0\r\n"
      "APP,1736408883657086.220\t,2109.6015625,NPU:0\r\n"
      "HCCL,1736408883677036.730\t,44.5,NPU:1\r\n";
  for (size_t chunk : {size_t{1}, size_t{9}, kModuleMem.size()}) {
    CsvRun r;
    r.path = "npu_module_mem.csv";
    ASSERT_TRUE(r.Import(kModuleMem, chunk).ok()) << chunk;
    EXPECT_EQ(r.trace.task_count(), 0u);
    const auto& samples = r.trace.allocator_samples();
    ASSERT_EQ(samples.size(), 3u) << chunk;
    for (const AllocatorSample& s : samples) {
      EXPECT_TRUE(s.per_module);
      EXPECT_EQ(s.total_allocated_bytes, -1);
    }
    EXPECT_EQ(r.strings.Get(samples[0].component), "SLOG");
    EXPECT_EQ(samples[0].time_ns, 1736408883657086220);
    EXPECT_EQ(samples[0].total_reserved_bytes, 0);
    // 2109.6015625 MB = 2109 * 1048576 + 0.6015625 * 1048576 = 2211446784 +
    // 630784 = 2212077568 bytes.
    EXPECT_EQ(samples[1].total_reserved_bytes, 2212077568);
    // 44.5 MB = 46661632 bytes.
    EXPECT_EQ(samples[2].total_reserved_bytes, 46661632);
    EXPECT_EQ(samples[2].device, 1);
    EXPECT_TRUE(r.diagnostics.log().empty());
  }
  EXPECT_EQ(CreateAscendCsvImporter()->Sniff(kModuleMem, "npu_module_mem.csv"),
            90);
}

// A memory row whose time or size is not a number is skipped with a
// diagnostic naming the file, its line and the cell; the good rows stay.
TEST(AscendCsvTest, BadMemoryRowsAreSkippedWithTheirLine) {
  CsvRun r;
  r.path = "memory_record.csv";
  ASSERT_TRUE(r.Import("Component,Timestamp(us),Total Allocated(MB),"
                       "Total Reserved(MB),Device Type\n"
                       "PTA,1736408883694624.810,1.0,2.0,NPU:0\n"
                       "PTA,yesterday,1.0,2.0,NPU:0\n"
                       "PTA,1736408883694625.000,lots,2.0,NPU:0\n"
                       "PTA,1736408883694626.000,-3,2.0,NPU:0\n"
                       "PTA,1736408883694627.000,,2.0,NPU:0\n",
                       0)
                  .ok());
  // Rows 2 and 6 (lines 2, 6) kept: an empty size is no value, not a bad one.
  ASSERT_EQ(r.trace.allocator_samples().size(), 2u);
  EXPECT_EQ(r.trace.allocator_samples()[1].total_allocated_bytes, -1);
  const auto& log = r.diagnostics.log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].code, DiagnosticCode::kCsvRowSkipped);
  EXPECT_EQ(log[0].location.file, "memory_record.csv");
  EXPECT_EQ(log[0].location.line, 3u);
  EXPECT_NE(log[0].message.find("Timestamp(us) is not a number"),
            std::string::npos);
  EXPECT_EQ(log[0].snippet, "yesterday");
  EXPECT_EQ(log[1].location.line, 4u);
  EXPECT_NE(log[1].message.find("Total Allocated is not a size"),
            std::string::npos);
  EXPECT_EQ(log[1].snippet, "lots");
  EXPECT_EQ(log[2].location.line, 5u);
  EXPECT_EQ(log[2].snippet, "-3");
}

TEST(AscendCsvTest, ErrorsNameTheLine) {
  CsvRun r;
  Status s = r.Import(
      "Op Name,Task Start Time(us),Task Duration(us)\n"
      "a,1.0,2.0\n"
      "b,3.0,4.0,5\n",
      0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("op_summary_0.csv:3:"), std::string::npos)
      << s.message();
  CsvRun q;
  s = q.Import("Op Name,Task Start Time(us),Task Duration(us)\n\"a,1.0,2.0\n",
               0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("op_summary_0.csv:2:"), std::string::npos)
      << s.message();
}

// The CSV join with two devices in one profiler output folder (one
// source) and a second folder (another rank): the timeline's devices are
// numbered by process (ordinals 0, 1), the table says Device_id 4 and 5.
// Each device ran Conv2D1 on stream 2 at the very same start, so name,
// stream and time cannot tell the rows apart: the device does. Rows that
// only one device could take (Cast1, Add1) tie the devices to the ids;
// the Conv2D1 row read before any tie waits for them.
struct TwoDeviceTimeline : CsvRun {
  SourceId folder, other_rank;
  TaskId conv[2], cast, add, other_conv;

  TwoDeviceTimeline() {
    path = "PROF_1/mindstudio_profiler_output/op_summary_1.csv";
    folder = trace.FindOrAddSource(strings.Intern("PROF_1"));
    other_rank = trace.FindOrAddSource(strings.Intern("PROF_2"));
    for (SourceId s : {folder, other_rank}) {
      trace.mutable_source(s).dialect = strings.Intern("ascend");
    }
    TrackId streams[2];
    for (int32_t d = 0; d < 2; ++d) {
      TrackInfo info;
      info.kind = TrackKind::kDeviceStream;
      info.source = folder;
      info.device = d;
      info.stream = 2;
      streams[d] = trace.AddTrack(info);
    }
    TrackInfo elsewhere;
    elsewhere.kind = TrackKind::kDeviceStream;
    elsewhere.source = other_rank;
    elsewhere.device = 0;
    elsewhere.stream = 2;
    TrackId other = trace.AddTrack(elsewhere);
    auto task = [&](TrackId track, std::string_view name, int64_t start) {
      TaskRow row;
      row.kind = TaskKind::kCompute;
      row.track = track;
      row.name = strings.Intern(name);
      row.start_ns = start;
      row.duration_ns = 1000;
      return trace.AddTask(row);
    };
    // Another rank's identical task comes first: never a candidate.
    other_conv = task(other, "Conv2D1", 5000000);
    conv[0] = task(streams[0], "Conv2D1", 5000000);
    conv[1] = task(streams[1], "Conv2D1", 5000000);
    cast = task(streams[0], "Cast1", 1000000);
    add = task(streams[1], "Add1", 2000000);
  }
  Status ImportCsv(std::string_view csv) {
    ImportContext ctx;
    ctx.path = path;
    ctx.trace = &trace;
    ctx.diagnostics = &diagnostics;
    ctx.source = folder;
    return ImportAscendCsvFromBuffer(csv, ctx, 0);
  }
  std::string_view OpType(TaskId t) const {
    return strings.Get(trace.task_op_type(t));
  }
  std::string_view Shapes(TaskId t) const {
    return strings.Get(trace.task_shapes(t));
  }
};

constexpr std::string_view kTwoDeviceOpSummary =
    "Device_id,Task ID,Stream ID,Op Name,OP Type,Task Type,"
    "Task Start Time(us),Task Duration(us),Input Shapes\n"
    "5,9,2,Conv2D1,Conv2D,AI_CORE,5000.000,1.0,\"\"\"5,5\"\"\"\n"
    "4,3,2,Cast1,Cast,AI_CORE,1000.000,1.0,\"\"\"4\"\"\"\n"
    "5,4,2,Add1,Add,AI_VECTOR_CORE,2000.000,1.0,\"\"\"5\"\"\"\n"
    "4,8,2,Conv2D1,Conv2D,AI_CORE,5000.000,1.0,\"\"\"4,4\"\"\"\n";

TEST(AscendCsvJoinTest, RowsJoinTasksOfTheirSourceAndDevice) {
  TwoDeviceTimeline r;
  ASSERT_TRUE(r.ImportCsv(kTwoDeviceOpSummary).ok());
  EXPECT_EQ(r.trace.task_count(), 5u);  // joined, none added
  EXPECT_EQ(r.OpType(r.cast), "Cast");
  EXPECT_EQ(r.OpType(r.add), "Add");
  EXPECT_EQ(r.Shapes(r.conv[0]), "4,4");  // Device_id 4 = timeline device 0
  EXPECT_EQ(r.Shapes(r.conv[1]), "5,5");  // Device_id 5 = timeline device 1
  EXPECT_EQ(r.OpType(r.other_conv), "");  // the other rank's: untouched
  EXPECT_EQ(r.diagnostics.count(DiagnosticCode::kCsvRowSkipped), 0u);
  EXPECT_EQ(r.trace.source(r.folder).time_base, TimeBase::kEpoch);
}

// A row never joins a task of a timeline device tied to another id, even
// when a task of its name, stream and start waits there.
TEST(AscendCsvJoinTest, ARowNeverJoinsAnotherDevicesTask) {
  TwoDeviceTimeline r;
  ASSERT_TRUE(r.ImportCsv("Device_id,Op Name,OP Type,Task Type,Stream ID,"
                          "Task Start Time(us),Task Duration(us)\n"
                          "4,Cast1,Cast,AI_CORE,2,1000.000,1.0\n"
                          "5,Add1,Add,AI_CORE,2,2000.000,1.0\n"
                          "5,Conv2D1,Conv2D,AI_CORE,2,5000.000,1.0\n"
                          "5,Conv2D1,Conv2D,AI_CORE,2,5000.000,1.0\n")
                  .ok());
  EXPECT_EQ(r.OpType(r.conv[1]), "Conv2D");
  EXPECT_EQ(r.OpType(r.conv[0]), "");  // device 4's task
  EXPECT_EQ(r.diagnostics.count(DiagnosticCode::kCsvRowSkipped), 1u);
}

// Without a Device_id column (older exports, one device per table) rows
// join any device of their source, nearest start first.
TEST(AscendCsvJoinTest, TablesWithoutDeviceIdsJoinWithinTheirSource) {
  TwoDeviceTimeline r;
  ASSERT_TRUE(r.ImportCsv("Op Name,OP Type,Task Type,Stream ID,"
                          "Task Start Time(us),Task Duration(us)\n"
                          "Conv2D1,Conv2D,AI_CORE,2,5000.000,1.0\n"
                          "Conv2D1,Conv2D,AI_CORE,2,5000.000,1.0\n"
                          "Conv2D1,Conv2D,AI_CORE,2,5000.000,1.0\n")
                  .ok());
  EXPECT_EQ(r.OpType(r.conv[0]), "Conv2D");
  EXPECT_EQ(r.OpType(r.conv[1]), "Conv2D");
  EXPECT_EQ(r.OpType(r.other_conv), "");
  EXPECT_EQ(r.diagnostics.count(DiagnosticCode::kCsvRowSkipped), 1u);
}

TEST(AscendTaskTypeTest, OneMappingForTimelineAndCsv) {
  EXPECT_EQ(AscendTaskKind("AI_CORE"), TaskKind::kCompute);
  EXPECT_EQ(AscendTaskKind("MIX_AIV"), TaskKind::kCompute);
  EXPECT_EQ(AscendTaskKind("KERNEL_AICPU"), TaskKind::kCompute);
  EXPECT_EQ(AscendTaskKind("HCCL"), TaskKind::kCompute);
  EXPECT_EQ(AscendTaskKind("COMMUNICATION"), TaskKind::kCompute);
  EXPECT_EQ(AscendTaskKind("PCIE_DMA_SQE"), TaskKind::kDataMovement);
  EXPECT_EQ(AscendTaskKind("MEMCPY_ASYNC"), TaskKind::kDataMovement);
  EXPECT_EQ(AscendTaskKind("SDMA"), TaskKind::kDataMovement);
  EXPECT_EQ(AscendTaskKind("Notify Wait"), TaskKind::kSync);
  EXPECT_EQ(AscendTaskKind("EVENT_RECORD_SQE"), TaskKind::kSync);
  EXPECT_EQ(AscendTaskKind("Write Value"), TaskKind::kSync);
  EXPECT_EQ(AscendTaskKind("PLACE_HOLDER_SQE"), TaskKind::kOther);
  EXPECT_EQ(AscendTaskKind(""), TaskKind::kOther);
}

}  // namespace
}  // namespace mi::importers
