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
