#include <string>

#include <gtest/gtest.h>

#include "importers/chrome_trace/chrome_trace_importer.h"
#include "importers/common/trace_fuzz_util.h"

namespace mi::importers {
namespace {

struct CsvRun : TraceImportRun<ImportTraceEventCsvFromBuffer> {
  CsvRun() { path = "prof.csv"; }
};

constexpr std::string_view kProfile =
    "cat,pid,tid,dur,ts,ph,name,args_op_name,args_thread_scheduling_stats,"
    "args_input_type_shape,args_provider,args_output_type_shape\n"
    "Session,7,7,315,3,X,model_loading_array,,,,,\n"
    "Session,7,7,900,400,X,model_run,,,,,\n"
    "Node,7,7,0,410,X,Conv_0_fence_before,Conv,,,,\n"
    "Node,7,7,81,411,X,Conv_0_kernel_time,Conv,\"{'main_thread': {'a': 1},\n"
    " 'sub_threads': {}}\",\"[{'float': [1, 3, 8, 8]}]\",CPUExecutionProvider,"
    "\"[{'float': [1, 4, 8, 8]}]\"\n";

TEST(TraceEventCsvTest, RowsBecomeOrtTasksAtEveryChunking) {
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, kProfile.size()}) {
    CsvRun r;
    ASSERT_TRUE(r.Import(kProfile, chunk).ok()) << chunk;
    EXPECT_EQ(TraceDialects(r.trace), "onnxruntime");
    bool found = false;
    for (uint32_t i = 0; i < r.trace.task_count(); ++i) {
      TaskId t(i);
      if (r.trace.task_kind(t) != TaskKind::kCompute) continue;
      found = true;
      EXPECT_EQ(r.strings.Get(r.trace.task_node_name(t)), "Conv_0");
      EXPECT_EQ(r.strings.Get(r.trace.task_op_type(t)), "Conv");
      EXPECT_EQ(r.trace.task_start_ns(t), 411000);
      EXPECT_EQ(r.trace.task_duration_ns(t), 81000);
      // pandas' Python repr becomes JSON, so shapes can complete graphs.
      EXPECT_EQ(r.strings.Get(r.trace.task_output_shapes(t)),
                "[{\"float\": [1, 4, 8, 8]}]");
    }
    EXPECT_TRUE(found);
  }
}

TEST(TraceEventCsvTest, WrongFieldCountNamesTheLine) {
  CsvRun r;
  Status s = r.Import("cat,pid,tid,dur,ts,ph,name\nNode,1,1,5,6,X\n", 0);
  EXPECT_EQ(s.code(), StatusCode::kMalformedInput);
  EXPECT_NE(s.message().find("prof.csv:2:1: expected 7 fields"),
            std::string::npos)
      << s.message();
}

TEST(TraceEventCsvTest, UnterminatedQuoteAndBadTimestampsFail) {
  CsvRun a;
  Status s = a.Import("cat,pid,tid,dur,ts,ph,name\nNode,1,1,5,6,X,\"abc\n", 0);
  EXPECT_NE(s.message().find("quoted field is never closed"), std::string::npos)
      << s.message();
  CsvRun b;
  s = b.Import("cat,pid,tid,dur,ts,ph,name\nNode,1,1,5,soon,X,a\n", 0);
  EXPECT_NE(s.message().find("prof.csv:2:1: column ts: expected a number"),
            std::string::npos)
      << s.message();
}

TEST(TraceEventCsvTest, SniffsOnlyTraceEventHeaders) {
  auto importer = CreateTraceEventCsvImporter();
  EXPECT_GT(importer->Sniff("cat,pid,tid,dur,ts,ph,name\n", "x.csv"), 0);
  EXPECT_EQ(importer->Sniff("Op Name,Task Duration(us)\n", "x.csv"), 0);
  EXPECT_EQ(importer->Sniff("[{\"ph\":\"X\"}]", "x.json"), 0);
}

}  // namespace
}  // namespace mi::importers
