#include "importers/chrome_trace/chrome_trace_importer.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "trace/trace.h"

namespace mi::importers {
namespace {

struct Imported {
  StringPool strings;
  Trace trace{&strings};
  DiagnosticSink diagnostics;
  ChromeTraceStats stats;
  Status status;

  std::string_view str(StringId id) const { return strings.Get(id); }
  // The first task with this name.
  TaskId Find(std::string_view name) const {
    for (size_t i = 0; i < trace.task_count(); ++i) {
      TaskId t(static_cast<uint32_t>(i));
      if (str(trace.task_name(t)) == name) return t;
    }
    return TaskId::Invalid();
  }
  uint64_t kind_count(TaskKind kind) const {
    return stats.tasks_by_kind[static_cast<size_t>(kind)];
  }
};

std::unique_ptr<Imported> Import(std::string_view text, size_t chunk_size = 0) {
  auto result = std::make_unique<Imported>();
  ImportContext ctx;
  ctx.path = "test.json";
  ctx.trace = &result->trace;
  ctx.diagnostics = &result->diagnostics;
  result->status =
      ImportChromeTraceFromBuffer(text, ctx, &result->stats, chunk_size);
  return result;
}

constexpr std::string_view kOrtProfile = R"json([
{"cat" : "Session","pid" :7,"tid" :7,"dur" :100,"ts" :1,"ph" : "X","name" :"model_loading_uri","args" : {}},
{"cat" : "Session","pid" :7,"tid" :7,"dur" :200,"ts" :110,"ph" : "X","name" :"session_initialization","args" : {}},
{"cat" : "Session","pid" :7,"tid" :7,"dur" :50,"ts" :400,"ph" : "X","name" :"model_run","args" : {}},
{"cat" : "Node","pid" :7,"tid" :9,"dur" :0,"ts" :401,"ph" : "X","name" :"conv1_fence_before","args" : {"op_name" : "Conv"}},
{"cat" : "Node","pid" :7,"tid" :9,"dur" :20,"ts" :402,"ph" : "X","name" :"conv1_kernel_time","args" : {"op_name" : "Conv","provider" : "CPUExecutionProvider","input_type_shape" : [{"float":[1,3,8,8]}],"output_size" : "1024"}},
{"cat" : "Node","pid" :7,"tid" :9,"dur" :0,"ts" :423,"ph" : "X","name" :"conv1_fence_after","args" : {"op_name" : "Conv"}},
{"cat" : "Session","pid" :7,"tid" :7,"dur" :50,"ts" :500,"ph" : "X","name" :"model_run","args" : {}},
{"cat" : "Node","pid" :7,"tid" :9,"dur" :20,"ts" :502,"ph" : "X","name" :"conv1_kernel_time","args" : {"op_name" : "Conv","provider" : "CPUExecutionProvider"}},
{"cat" : "Kernel","pid" :7,"tid" :9,"dur" :3,"ts" :505,"ph" : "X","name" :"implicit_convolve_sgemm","args" : {"stream" : "14","grid_x" : "4"}}
]
)json";

TEST(ChromeTraceImporterTest, OnnxRuntimeProfile) {
  auto r = Import(kOrtProfile);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(TraceDialects(r->trace), "onnxruntime");
  EXPECT_EQ(r->trace.task_count(), 9u);
  EXPECT_EQ(r->kind_count(TaskKind::kCompute), 3u);
  EXPECT_EQ(r->kind_count(TaskKind::kOverhead), 2u);
  EXPECT_EQ(r->kind_count(TaskKind::kAnnotation), 4u);

  TaskId kernel = r->Find("conv1_kernel_time");
  ASSERT_TRUE(kernel.valid());
  EXPECT_EQ(r->trace.task_kind(kernel), TaskKind::kCompute);
  EXPECT_EQ(r->str(r->trace.task_node_name(kernel)), "conv1");
  EXPECT_EQ(r->str(r->trace.task_op_type(kernel)), "Conv");
  EXPECT_EQ(r->str(r->trace.task_category(kernel)),
            "Node/CPUExecutionProvider");
  EXPECT_EQ(r->str(r->trace.task_shapes(kernel)),
            R"json([{"float":[1,3,8,8]}])json");
  EXPECT_EQ(r->trace.task_start_ns(kernel), 402000);
  EXPECT_EQ(r->trace.task_duration_ns(kernel), 20000);
  const TrackInfo& thread = r->trace.track(r->trace.task_track(kernel));
  EXPECT_EQ(thread.kind, TrackKind::kHostThread);
  EXPECT_EQ(thread.tid, 9);
  EXPECT_EQ(thread.stream, 9);  // ORT CPU EP: the thread is the stream

  TaskId gpu = r->Find("implicit_convolve_sgemm");
  const TrackInfo& stream = r->trace.track(r->trace.task_track(gpu));
  EXPECT_EQ(stream.kind, TrackKind::kDeviceStream);
  EXPECT_EQ(stream.stream, 14);
  EXPECT_EQ(stream.device, 0);

  // Runs: the prologue, then one per model_run; tasks by latest start.
  ASSERT_EQ(r->trace.runs().size(), 3u);
  EXPECT_EQ(r->str(r->trace.runs()[0].name), "before model_run #1");
  EXPECT_EQ(r->str(r->trace.runs()[1].name), "model_run #1");
  EXPECT_EQ(r->str(r->trace.runs()[2].name), "model_run #2");
  EXPECT_EQ(r->trace.task_run(r->Find("session_initialization")), 0u);
  EXPECT_EQ(r->trace.task_run(kernel), 1u);
  EXPECT_EQ(r->trace.task_run(gpu), 2u);
  EXPECT_EQ(r->diagnostics.CountWithSeverity(Severity::kError), 0u);
}

// Allocator args land in the trace's side tables (trace/allocator_records.h)
// for the memory analysis: ORT per-node sizes and Kineto [memory] events.
TEST(ChromeTraceImporterTest, AllocatorArgsAreKept) {
  auto ort = Import(R"json([
{"cat" : "Node","pid" :7,"tid" :7,"dur" :10,"ts" :5,"ph" : "X","name" :"c_kernel_time","args" : {"op_name" : "Conv","provider" : "CPUExecutionProvider","activation_size" : "602112","parameter_size" : "9472","output_size" : "802816","mem_bytes_in_use" : "1307264","mem_in_use_peak" : "1400000"}},
{"cat" : "Node","pid" :7,"tid" :7,"dur" :10,"ts" :20,"ph" : "X","name" :"r_kernel_time","args" : {"op_name" : "Relu","provider" : "CPUExecutionProvider"}}
])json");
  ASSERT_TRUE(ort->status.ok()) << ort->status.ToString();
  ASSERT_EQ(ort->trace.task_memory().size(), 1u);
  const TaskMemoryRecord& r = ort->trace.task_memory()[0];
  EXPECT_EQ(r.task, ort->Find("c_kernel_time"));
  EXPECT_EQ(r.activation_bytes, 602112);
  EXPECT_EQ(r.parameter_bytes, 9472);
  EXPECT_EQ(r.output_bytes, 802816);
  EXPECT_EQ(r.in_use_bytes, 1307264);
  EXPECT_EQ(r.in_use_peak_bytes, 1400000);

  auto kineto = Import(R"json({"traceEvents": [
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10.5, "args": {"Addr": 140, "Bytes": 4096, "Total Allocated": 8192, "Total Reserved": 20971520, "Device Type": 1, "Device Id": 0}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 11, "args": {"Addr": 140, "Bytes": -4096, "Total Allocated": 4096, "Total Reserved": 20971520, "Device Type": 0, "Device Id": -1}}
]})json");
  ASSERT_TRUE(kineto->status.ok()) << kineto->status.ToString();
  const auto& samples = kineto->trace.allocator_samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].time_ns, 10500);
  EXPECT_EQ(samples[0].delta_bytes, 4096);
  EXPECT_EQ(samples[0].total_allocated_bytes, 8192);
  EXPECT_EQ(samples[0].total_reserved_bytes, 20971520);
  EXPECT_EQ(samples[0].device, 0);
  EXPECT_EQ(samples[1].delta_bytes, -4096);
  EXPECT_EQ(samples[1].device, -1);  // Device Type 0: host memory
}

TEST(ChromeTraceImporterTest, UnescapedOrtNamesAreRepairedAndCounted) {
  std::string text =
      "[\n{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :1,\"dur\" :1,\"ts\" :1,"
      "\"ph\" : \"X\",\"name\" :\"a\tb_kernel_time\",\"args\" : {}},\n"
      "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :1,\"dur\" :1,\"ts\" :2,"
      "\"ph\" : \"X\",\"name\" :\"line\nbreak_kernel_time\",\"args\" : {}},\n"
      "{\"cat\" : \"Session\",\"pid\" :1,\"tid\" :1,\"dur\" :1,\"ts\" :3,"
      "\"ph\" : \"X\",\"name\" :\"C:\\models\\x.onnx\",\"args\" : {}}\n]";
  auto r = Import(text);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->stats.repaired_events, 3u);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kUnescapedString), 3u);
  EXPECT_TRUE(r->Find("a\tb_kernel_time").valid());
  EXPECT_EQ(r->str(r->trace.task_node_name(r->Find("line\nbreak_kernel_time"))),
            "line\nbreak");
  EXPECT_TRUE(r->Find("C:\\models\\x.onnx").valid());
  ASSERT_FALSE(r->diagnostics.log().empty());
  EXPECT_EQ(r->diagnostics.log()[0].location.line, 2u);
  EXPECT_EQ(r->diagnostics.log()[0].location.file, "test.json");
}

constexpr std::string_view kKinetoTrace = R"json({
  "metadata": {"profiler": {"wait": 1}},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10, "tid": 11, "ts": 1000.000, "dur": 100.000, "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 1010.123, "dur": 20.5, "args": {"External id": 2, "Input Dims": [[2, 3], [3, 4]]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 1015.000, "dur": 4.000, "args": {"External id": 2, "correlation": 77, "cbid": 211}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1150.250, "dur": 30.000, "args": {"External id": 2, "correlation": 77, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1200.000, "dur": 3.000, "args": {"device": 0, "stream": 7, "correlation": 78, "bytes": 4096}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 1210.000, "dur": 1.000, "args": {"device": 0, "stream": 7}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 1150.000, "dur": 70.000, "args": {}},
  {"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1): _call_impl", "pid": 10, "tid": 11, "ts": 1005.000, "dur": 50.000, "args": {"Python id": 3}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 10, "tid": 11, "ts": 1300.000, "dur": 100.000, "args": {}},
  {"ph": "s", "id": 77, "pid": 10, "tid": 11, "ts": 1015.000, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 1150.250, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 11, "ts": 1011.000, "args": {"Bytes": 64}},
  {"ph": "X", "cat": "Trace", "ts": 990.000, "dur": 500.000, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
  {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"name": "process_name", "ph": "M", "pid": 10, "tid": 0, "args": {"name": "python"}}
  ],
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0}],
  "distributedInfo": {"backend": "nccl", "rank": 5, "world_size": 8},
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1751410836000000000
})json";

TEST(ChromeTraceImporterTest, KinetoTrace) {
  auto r = Import(kKinetoTrace);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(TraceDialects(r->trace), "pytorch");
  EXPECT_TRUE(r->stats.object_container);
  EXPECT_TRUE(r->stats.has_schema_version);
  EXPECT_TRUE(r->stats.has_device_properties);
  EXPECT_EQ(r->stats.base_time_ns, 1751410836000000000);
  EXPECT_EQ(r->stats.distributed_rank, 5);
  EXPECT_EQ(r->stats.display_time_unit, "ms");
  EXPECT_EQ(r->stats.flow_events, 2u);
  EXPECT_EQ(r->stats.memory_events, 1u);
  EXPECT_EQ(r->stats.metadata_events, 2u);
  EXPECT_EQ(r->stats.events, 15u);

  TaskId mm = r->Find("aten::mm");
  EXPECT_EQ(r->trace.task_kind(mm), TaskKind::kHostOp);
  EXPECT_EQ(r->trace.task_external_id(mm), 2);
  EXPECT_EQ(r->str(r->trace.task_shapes(mm)), "[[2, 3], [3, 4]]");
  EXPECT_EQ(r->trace.task_start_ns(mm), 1010123);
  EXPECT_EQ(r->trace.task_duration_ns(mm), 20500);
  EXPECT_EQ(r->str(r->trace.track(r->trace.task_track(mm)).process_name),
            "python");

  TaskId launch = r->Find("cudaLaunchKernel");
  EXPECT_EQ(r->trace.task_kind(launch), TaskKind::kRuntime);
  EXPECT_EQ(r->trace.task_correlation(launch), 77);

  TaskId gemm = r->Find("gemm");
  EXPECT_EQ(r->trace.task_kind(gemm), TaskKind::kCompute);
  EXPECT_EQ(r->trace.task_correlation(gemm), 77);
  const TrackInfo& stream = r->trace.track(r->trace.task_track(gemm));
  EXPECT_EQ(stream.kind, TrackKind::kDeviceStream);
  EXPECT_EQ(stream.device, 0);
  EXPECT_EQ(stream.stream, 7);
  EXPECT_EQ(r->str(stream.thread_name), "stream 7 ");

  TaskId copy = r->Find("Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(r->trace.task_kind(copy), TaskKind::kDataMovement);
  EXPECT_EQ(r->trace.task_bytes(copy), 4096);
  EXPECT_EQ(r->trace.task_track(copy), r->trace.task_track(gemm));
  EXPECT_EQ(r->trace.task_kind(r->Find("Stream Sync")), TaskKind::kSync);
  EXPECT_EQ(r->trace.task_kind(r->Find("PyTorch Profiler (0)")),
            TaskKind::kAnnotation);
  EXPECT_EQ(
      r->str(
          r->trace.track(r->trace.task_track(r->Find("PyTorch Profiler (0)")))
              .pid_label),
      "Spans");

  // Runs: "before ProfilerStep#1" (the Trace span starts earlier), then the
  // steps. The kernel starts after step 1's CPU range but before step 2.
  ASSERT_EQ(r->trace.runs().size(), 3u);
  EXPECT_EQ(r->str(r->trace.runs()[1].name), "ProfilerStep#1");
  EXPECT_EQ(r->str(r->trace.runs()[2].name), "ProfilerStep#2");
  EXPECT_EQ(r->trace.task_run(gemm), 1u);
  EXPECT_EQ(r->trace.task_run(r->Find("ProfilerStep#2")), 2u);
  EXPECT_EQ(r->trace.task_run(r->Find("PyTorch Profiler (0)")), 0u);
}

TEST(ChromeTraceImporterTest, KinetoTraceAtEveryChunkSize) {
  auto whole = Import(kKinetoTrace, kKinetoTrace.size());
  ASSERT_TRUE(whole->status.ok());
  for (size_t chunk = 1; chunk < 200; chunk += 13) {
    auto r = Import(kKinetoTrace, chunk);
    ASSERT_TRUE(r->status.ok()) << chunk << ": " << r->status.ToString();
    ASSERT_EQ(r->trace.task_count(), whole->trace.task_count());
    for (size_t i = 0; i < r->trace.task_count(); ++i) {
      TaskId t(static_cast<uint32_t>(i));
      EXPECT_EQ(r->trace.task_start_ns(t), whole->trace.task_start_ns(t));
      EXPECT_EQ(r->str(r->trace.task_name(t)),
                whole->str(whole->trace.task_name(t)));
    }
  }
}

// A Kineto trace recorded with enable_cuda_sync_events: stream 20 waits on
// an event recorded on stream 7 (cudaEventRecord correlation 11). The
// shapes are Kineto's (CuptiActivity.cpp CudaSyncActivity::metadataJson).
// The record follows the last kernel launched on stream 7 before it (corr
// 10, not 12); the wait holds back the first task launched on stream 20
// after the cudaStreamWaitEvent (corr 14, not the earlier corr 9).
constexpr std::string_view kKinetoStreamWait =
    R"json({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "producer", "pid": 0, "tid": 7, "ts": 100, "dur": 50, "args": {"device": 0, "stream": 7, "correlation": 10}},
  {"ph": "X", "cat": "kernel", "name": "after_record", "pid": 0, "tid": 7, "ts": 150, "dur": 50, "args": {"device": 0, "stream": 7, "correlation": 12}},
  {"ph": "X", "cat": "kernel", "name": "before_wait", "pid": 0, "tid": 20, "ts": 20, "dur": 5, "args": {"device": 0, "stream": 20, "correlation": 9}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": 31, "dur": 1, "args": {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 11, "wait_on_cuda_event_id": 3, "stream": 20, "correlation": 13, "device": 0, "context": 1}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 20, "ts": 151, "dur": 9, "args": {"device": 0, "stream": 20, "correlation": 14, "bytes": 64}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": 40, "dur": 1, "args": {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": -1, "wait_on_cuda_event_id": 4, "stream": 20, "correlation": 15, "device": 0, "context": 1}},
  {"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 0, "tid": 7, "ts": 42, "dur": 160, "args": {"cuda_sync_kind": "Event Sync", "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 11, "wait_on_cuda_event_id": 3, "stream": -1, "correlation": 16, "device": 0, "context": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 4, "args": {"cbid": 211, "correlation": 10}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1, "ts": 15, "dur": 2, "args": {"cbid": 135, "correlation": 11}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 18, "dur": 4, "args": {"cbid": 211, "correlation": 12}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 1, "ts": 30, "dur": 2, "args": {"cbid": 147, "correlation": 13}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 33, "dur": 4, "args": {"cbid": 41, "correlation": 14}}
]})json";

TEST(ChromeTraceImporterTest, KinetoStreamWaitEventLinksRecorderAndWaiter) {
  auto r = Import(kKinetoStreamWait);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  TaskId producer = r->Find("producer");
  TaskId copy = r->Find("Memcpy DtoH (Device -> Pinned)");
  EXPECT_GE(r->trace.task_event_after(producer), 0);
  EXPECT_EQ(r->trace.task_event_before(copy),
            r->trace.task_event_after(producer));
  // Nothing else takes part: the wait task itself (host API time), the
  // kernel after the record, the task before the wait, the runtime calls.
  for (size_t i = 0; i < r->trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    if (t != producer) {
      EXPECT_EQ(r->trace.task_event_after(t), -1) << i;
    }
    if (t != copy) {
      EXPECT_EQ(r->trace.task_event_before(t), -1) << i;
    }
  }
  EXPECT_EQ(r->stats.stream_wait_events, 2u);
  EXPECT_EQ(r->stats.event_links, 1u);
  EXPECT_EQ(r->stats.event_waits_unresolved, 1u);  // record corr id -1
  EXPECT_EQ(r->stats.event_waits_merged, 0u);
}

// Two waits before one task: it keeps the record that ended last; a second
// file in the same Trace continues the event ids.
TEST(ChromeTraceImporterTest, KinetoTaskAfterTwoWaitsKeepsTheLaterRecord) {
  constexpr std::string_view kTrace = R"json({"traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "short", "pid": 0, "tid": 7, "ts": 100, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "long", "pid": 0, "tid": 13, "ts": 100, "dur": 90, "args": {"device": 0, "stream": 13, "correlation": 2}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": 31, "dur": 1, "args": {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 3, "wait_on_cuda_event_id": 1, "stream": 20, "correlation": 5, "device": 0, "context": 1}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": 33, "dur": 1, "args": {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": 13, "wait_on_cuda_event_record_corr_id": 4, "wait_on_cuda_event_id": 2, "stream": 20, "correlation": 6, "device": 0, "context": 1}},
  {"ph": "X", "cat": "kernel", "name": "consumer", "pid": 0, "tid": 20, "ts": 200, "dur": 10, "args": {"device": 0, "stream": 20, "correlation": 7}}
]})json";
  StringPool strings;
  Trace trace(&strings);
  DiagnosticSink diagnostics;
  ImportContext ctx;
  ctx.trace = &trace;
  ctx.diagnostics = &diagnostics;
  ChromeTraceStats first;
  ASSERT_TRUE(ImportChromeTraceFromBuffer(kTrace, ctx, &first).ok());
  EXPECT_EQ(first.event_links, 1u);
  EXPECT_EQ(first.event_waits_merged, 1u);
  EXPECT_EQ(trace.task_event_before(TaskId(4)),
            trace.task_event_after(TaskId(1)));
  EXPECT_EQ(trace.task_event_after(TaskId(0)), -1);  // "short" ended first
  ChromeTraceStats second;
  ASSERT_TRUE(ImportChromeTraceFromBuffer(kTrace, ctx, &second).ok());
  EXPECT_EQ(second.event_links, 1u);
  EXPECT_EQ(trace.task_event_after(TaskId(6)),
            trace.task_event_after(TaskId(1)) + 1);
  EXPECT_EQ(trace.task_event_before(TaskId(9)),
            trace.task_event_after(TaskId(6)));
}

TEST(ChromeTraceImporterTest, Kineto2021Names) {
  auto r = Import(R"json({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#16", "pid": 5, "tid": "5", "ts": 100, "dur": 50, "args": {"External id": 1}},
  {"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 5, "tid": "5", "ts": 101, "dur": 5, "args": {"External id": 2, "Input Dims": [[1, 3]]}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": "5", "ts": 102, "dur": 2, "args": {"correlation": 9, "external id": 2}},
  {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 110, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 9, "external id": 2}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 112, "dur": 1, "args": {"bytes": 128}},
  {"ph": "f", "id": 9, "pid": 0, "tid": "stream 7", "ts": 110, "cat": "async", "name": "launch", "bp": "e"},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 101, "args": {"Bytes": 4}}
  ]})json");
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(TraceDialects(r->trace), "pytorch");
  EXPECT_EQ(r->trace.task_kind(r->Find("aten::conv2d")), TaskKind::kHostOp);
  TaskId launch = r->Find("cudaLaunchKernel");
  EXPECT_EQ(r->trace.task_kind(launch), TaskKind::kRuntime);
  EXPECT_EQ(r->trace.task_external_id(launch), 2);
  TaskId kernel = r->Find("k");
  EXPECT_EQ(r->trace.task_kind(kernel), TaskKind::kCompute);
  EXPECT_EQ(r->trace.track(r->trace.task_track(kernel)).stream, 7);
  EXPECT_EQ(r->trace.task_kind(r->Find("Memset (Device)")),
            TaskKind::kDataMovement);
  EXPECT_EQ(r->trace.task_kind(r->Find("ProfilerStep#16")),
            TaskKind::kAnnotation);
  // "5" (string) and 5 (number) are the same thread.
  EXPECT_EQ(r->trace.task_track(launch),
            r->trace.task_track(r->Find("aten::conv2d")));
  ASSERT_EQ(r->trace.runs().size(), 1u);
  EXPECT_EQ(r->str(r->trace.runs()[0].name), "ProfilerStep#16");
  EXPECT_EQ(r->stats.flow_events, 1u);
  EXPECT_EQ(r->stats.memory_events, 1u);
}

TEST(ChromeTraceImporterTest, GenericBeginEndAndMetadata) {
  auto r = Import(R"json([
  {"name": "outer", "ph": "B", "pid": 1, "tid": 2, "ts": 10},
  {"name": "inner", "ph": "B", "pid": 1, "tid": 2, "ts": 12},
  {"ph": "E", "pid": 1, "tid": 2, "ts": 15},
  {"ph": "E", "pid": 1, "tid": 2, "ts": 20},
  {"ph": "E", "pid": 1, "tid": 3, "ts": 21},
  {"name": "open", "ph": "B", "pid": 1, "tid": 3, "ts": 22},
  {"name": "gpu work", "cat": "gpu,kernel", "ph": "X", "pid": 4, "tid": 1, "ts": 30, "dur": 5},
  {"name": "neg", "ph": "X", "pid": 1, "tid": 2, "ts": 40, "dur": -3},
  {"name": "no ts", "ph": "X", "pid": 1, "tid": 2, "dur": 3},
  {"name": "mark", "ph": "i", "pid": 1, "tid": 2, "ts": 41, "s": "g"},
  {"name": "ctr", "ph": "C", "pid": 1, "ts": 41, "args": {"v": 1}},
  {"name": "weird", "ph": "Q", "pid": 1, "tid": 2, "ts": 41},
  {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": {"name": "main"}},
  {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "app"}},
  {"name": "process_labels", "ph": "M", "pid": 1, "args": {"labels": "CPU"}}
  ])json");
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(TraceDialects(r->trace), "chrome");
  TaskId outer = r->Find("outer");
  TaskId inner = r->Find("inner");
  EXPECT_EQ(r->trace.task_duration_ns(outer), 10000);
  EXPECT_EQ(r->trace.task_duration_ns(inner), 3000);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kUnmatchedEnd), 1u);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kUnclosedBegin), 1u);
  EXPECT_EQ(r->trace.task_duration_ns(r->Find("open")), 40000 - 22000 + 1000);
  EXPECT_EQ(r->trace.task_duration_ns(r->Find("neg")), 0);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kNegativeDuration), 1u);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kEventMissingField), 1u);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kUnknownPhase), 1u);
  EXPECT_EQ(r->stats.instant_events, 1u);
  EXPECT_EQ(r->stats.counter_events, 1u);
  TaskId gpu = r->Find("gpu work");
  EXPECT_EQ(r->trace.task_kind(gpu), TaskKind::kCompute);
  EXPECT_EQ(r->trace.track(r->trace.task_track(gpu)).kind,
            TrackKind::kDeviceStream);
  const TrackInfo& main = r->trace.track(r->trace.task_track(outer));
  EXPECT_EQ(r->str(main.thread_name), "main");
  EXPECT_EQ(r->str(main.process_name), "app (CPU)");
  ASSERT_EQ(r->trace.runs().size(), 1u);
  EXPECT_EQ(r->str(r->trace.runs()[0].name), "whole trace");
}

TEST(ChromeTraceImporterTest, OverlappingCompleteEventsAreKept) {
  auto r = Import(R"json([
  {"name": "a", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
  {"name": "b", "ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 10}])json");
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->trace.task_count(), 2u);
}

TEST(ChromeTraceImporterTest, SniffScores) {
  auto importer = CreateChromeTraceImporter();
  EXPECT_EQ(importer->descriptor().name, "chrome_trace");
  EXPECT_EQ(importer->descriptor().content, ContentKind::kTrace);
  EXPECT_GE(importer->Sniff(kOrtProfile.substr(0, 300), "p.json"), 90);
  EXPECT_GE(importer->Sniff(kKinetoTrace, "x.pt.trace.json"), 90);
  EXPECT_GE(importer->Sniff("\xEF\xBB\xBF  {\"traceEvents\": [", "a"), 90);
  EXPECT_GE(importer->Sniff("{\n  \"metadata\": {\"profiler\": {}}", "a.json"),
            40);
  EXPECT_EQ(importer->Sniff(std::string_view("\x08\x07\x12\x07pytorch", 11),
                            "model.onnx"),
            0);
  EXPECT_EQ(importer->Sniff("hello", "a.txt"), 0);
  EXPECT_EQ(importer->Sniff("", "a.json"), 0);
  EXPECT_LE(importer->Sniff("[\n  { \"count\" : 1 }\n, { \"name\" : \"x\", "
                            "\"timeMs\" : 0.1 }",
                            "resnet.profile.json"),
            10);
}

TEST(ChromeTraceImporterTest, ImportThroughTheStreamingFileReader) {
  std::string path = ::testing::TempDir() + "/mi_chrome_trace_test.json";
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(kOrtProfile.data(), 1, kOrtProfile.size(), f);
  std::fclose(f);
  StringPool strings;
  Trace trace(&strings);
  DiagnosticSink diagnostics;
  ImportContext ctx;
  ctx.path = path;
  ctx.trace = &trace;
  ctx.diagnostics = &diagnostics;
  Status status = CreateChromeTraceImporter()->Import(ctx);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(trace.task_count(), 9u);
}

// ---- Sources: every file (or profiler output folder) is one profiled
// process; its ids, devices, dialect and clock are its own.

// Imports `text` into `trace` as the file `path` (its own source).
Status ImportInto(Trace* trace, DiagnosticSink* diagnostics,
                  std::string_view text, std::string path,
                  ChromeTraceStats* stats = nullptr, SourceId source = {}) {
  ImportContext ctx;
  ctx.path = std::move(path);
  ctx.trace = trace;
  ctx.diagnostics = diagnostics;
  ctx.source = source;
  return ImportChromeTraceFromBuffer(text, ctx, stats);
}

TaskId FindIn(const Trace& trace, std::string_view name, size_t from = 0) {
  for (size_t i = from; i < trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    if (trace.str(trace.task_name(t)) == name) return t;
  }
  return TaskId::Invalid();
}

// Two ranks of one job: the same kernel on "GPU 0, stream 7" with the same
// correlation and External ids in both files.
TEST(ChromeTraceSourcesTest, TwoRanksAreTwoSourcesWithTheirOwnTracks) {
  std::string rank6(kKinetoTrace);
  rank6.replace(rank6.find("\"rank\": 5"), 9, "\"rank\": 6");
  StringPool strings;
  Trace trace(&strings);
  DiagnosticSink diagnostics;
  ASSERT_TRUE(
      ImportInto(&trace, &diagnostics, kKinetoTrace, "run/rank5.json").ok());
  const size_t second = trace.task_count();
  const uint32_t tracks_a = static_cast<uint32_t>(trace.track_count());
  ASSERT_TRUE(ImportInto(&trace, &diagnostics, rank6, "run/rank6.json").ok());
  EXPECT_EQ(trace.track_count(), 2u * tracks_a);

  ASSERT_EQ(trace.source_count(), 2u);
  const SourceInfo& a = trace.source(SourceId(0));
  const SourceInfo& b = trace.source(SourceId(1));
  EXPECT_EQ(trace.str(a.key), "run/rank5.json");
  ASSERT_EQ(a.files.size(), 1u);
  EXPECT_EQ(trace.str(a.files[0]), "run/rank5.json");
  EXPECT_EQ(a.rank, 5);
  EXPECT_EQ(b.rank, 6);
  EXPECT_EQ(trace.str(a.dialect), "pytorch");
  EXPECT_EQ(trace.str(b.dialect), "pytorch");
  EXPECT_EQ(a.time_base, TimeBase::kEpoch);
  EXPECT_EQ(a.base_ns, 1751410836000000000);

  TaskId gemm_a = FindIn(trace, "gemm");
  TaskId gemm_b = FindIn(trace, "gemm", second);
  ASSERT_TRUE(gemm_a.valid() && gemm_b.valid());
  // Same device index and stream, two tracks: one per source.
  EXPECT_NE(trace.task_track(gemm_a), trace.task_track(gemm_b));
  EXPECT_EQ(trace.task_source(gemm_a), SourceId(0));
  EXPECT_EQ(trace.task_source(gemm_b), SourceId(1));
  EXPECT_EQ(trace.track(trace.task_track(gemm_b)).device, 0);
  EXPECT_EQ(trace.track(trace.task_track(gemm_b)).stream, 7);
  for (uint32_t t = 0; t < trace.track_count(); ++t) {
    EXPECT_EQ(trace.track_source(TrackId(t)), SourceId(t < tracks_a ? 0 : 1))
        << t;
  }
  // Runs are the source's steps.
  for (const RunInfo& run : trace.runs()) {
    EXPECT_TRUE(run.source == SourceId(0) || run.source == SourceId(1));
  }
  EXPECT_EQ(trace.runs()[trace.task_run(gemm_b)].source, SourceId(1));
  // Allocator samples belong to their source too.
  ASSERT_EQ(trace.allocator_samples().size(), 2u);
  EXPECT_EQ(trace.allocator_samples()[1].source, SourceId(1));
}

// A generic Chrome trace's pid names a process, not a device: GPU-looking
// events without args.device are keyed by their process and get no device
// index (a pid never poses as one). Kineto writes pid = device index, so
// there the pid is the device.
TEST(ChromeTraceSourcesTest, GenericGpuEventsWithoutADeviceHaveNone) {
  auto r = Import(R"json([
  {"name": "a", "cat": "gpu_op", "ph": "X", "pid": 3, "tid": 1, "ts": 10, "dur": 5},
  {"name": "b", "cat": "gpu_op", "ph": "X", "pid": 4, "tid": 1, "ts": 10, "dur": 5},
  {"name": "c", "cat": "gpu_op", "ph": "X", "pid": 3, "tid": 1, "ts": 20, "dur": 5}
  ])json");
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  TrackId a = r->trace.task_track(r->Find("a"));
  TrackId b = r->trace.task_track(r->Find("b"));
  EXPECT_NE(a, b);
  EXPECT_EQ(r->trace.task_track(r->Find("c")), a);
  EXPECT_EQ(r->trace.track(a).kind, TrackKind::kDeviceStream);
  EXPECT_EQ(r->trace.track(a).device, -1);
  EXPECT_EQ(r->trace.track(a).pid, 3);
  EXPECT_EQ(TrackProcessName(r->trace, a), "pid 3");
  EXPECT_EQ(r->trace.source(SourceId(0)).time_base, TimeBase::kUnknown);

  auto kineto = Import(R"json({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "gpu_user_annotation", "name": "step", "pid": 2, "tid": 7, "ts": 10, "dur": 5, "args": {}}
  ]})json");
  ASSERT_TRUE(kineto->status.ok());
  EXPECT_EQ(kineto->trace.track(TrackId(0)).device, 2);
}

TEST(ChromeTraceSourcesTest, TimeBaseByDialect) {
  auto ort = Import(kOrtProfile);
  ASSERT_TRUE(ort->status.ok());
  EXPECT_EQ(ort->trace.source(SourceId(0)).time_base, TimeBase::kSessionStart);
  // The legacy autograd profiler counts from its own start.
  auto legacy = Import(R"json([
  {"name": "aten::mm", "ph": "X", "pid": "CPU functions", "tid": 1, "ts": 1, "dur": 5}
  ])json");
  ASSERT_TRUE(legacy->status.ok());
  EXPECT_EQ(TraceDialects(legacy->trace), "pytorch");
  EXPECT_EQ(legacy->trace.source(SourceId(0)).time_base, TimeBase::kUnknown);
}

// Event ids are the Trace's: a second source's waits never reuse the ids
// the first one's records carry.
TEST(ChromeTraceSourcesTest, EventIdsDoNotCollideAcrossSources) {
  StringPool strings;
  Trace trace(&strings);
  DiagnosticSink diagnostics;
  ASSERT_TRUE(
      ImportInto(&trace, &diagnostics, kKinetoStreamWait, "rank0.json").ok());
  const size_t second = trace.task_count();
  ASSERT_TRUE(
      ImportInto(&trace, &diagnostics, kKinetoStreamWait, "rank1.json").ok());
  TaskId producer0 = FindIn(trace, "producer");
  TaskId producer1 = FindIn(trace, "producer", second);
  TaskId copy1 = FindIn(trace, "Memcpy DtoH (Device -> Pinned)", second);
  ASSERT_GE(trace.task_event_after(producer0), 0);
  ASSERT_GE(trace.task_event_after(producer1), 0);
  EXPECT_NE(trace.task_event_after(producer0),
            trace.task_event_after(producer1));
  EXPECT_EQ(trace.task_event_before(copy1), trace.task_event_after(producer1));
}

// NCCL kernels become collective records. The first kernel carries no
// collective args (older Kineto): they come from the record_param_comms of
// its External id (7). pg_config keyed by name (some writers) gives the
// groups; the kernel's group "5" is not among them and is added from the
// kernel's own args. The `nccl:` annotation is no kernel.
constexpr std::string_view kNcclTrace = R"json({
  "distributedInfo": {"backend": "nccl", "rank": 2, "world_size": 4,
    "pg_config": {"0": {"pg_desc": "default_pg", "ranks": [0, 1, 2, 3]}}},
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
   "args": {"External id": 7, "Collective name": "allreduce", "In msg nelems": 1000,
            "Out msg nelems": 1000, "Group size": 4, "dtype": "Float", "Process Group Name": "0", "Seq": 3}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "pid": 0, "tid": 7,
   "ts": 100, "dur": 20, "args": {"External id": 7, "stream": 7, "device": 0}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_ReduceScatter_RING_SIMPLE(x)", "pid": 0, "tid": 7,
   "ts": 200, "dur": 30.5, "args": {"External id": 8, "stream": 7, "device": 0,
   "Collective name": "reduce_scatter_tensor", "In msg nelems": 4096, "Out msg nelems": 1024,
   "Group size": 2, "dtype": "BFloat16", "Process Group Name": "5",
   "Process Group Description": "tp", "Process Group Ranks": "[2, 3]"}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "nccl:all_reduce", "pid": 0, "tid": 7, "ts": 100, "dur": 20}
  ]
})json";

TEST(ChromeTraceImporterTest, NcclKernelsBecomeCollectiveRecords) {
  auto r = Import(kNcclTrace);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  const SourceInfo& source = r->trace.source(SourceId(0));
  EXPECT_EQ(source.rank, 2);
  EXPECT_EQ(source.world_size, 4);
  const auto& records = r->trace.communication().collectives;
  ASSERT_EQ(records.size(), 2u);
  const CollectiveRecord& a = records[0];
  EXPECT_EQ(a.type, CollectiveType::kAllReduce);
  EXPECT_EQ(r->trace.str(a.group), "0");
  EXPECT_EQ(a.group_size, 4);
  EXPECT_EQ(a.sequence, 3);
  EXPECT_EQ(a.in_elements, 1000);
  EXPECT_EQ(r->trace.str(a.dtype), "Float");
  EXPECT_EQ(a.bytes, 4000);  // 1000 floats
  EXPECT_EQ(r->trace.str(a.algorithm), "RING");
  EXPECT_EQ(r->trace.str(a.protocol), "LL");
  EXPECT_EQ(a.start_ns, 100000);
  EXPECT_EQ(a.end_ns, 120000);
  EXPECT_EQ(a.run, 0);
  const CollectiveRecord& b = records[1];
  EXPECT_EQ(b.type, CollectiveType::kReduceScatter);
  // S of a reduce-scatter: the whole array, the in count: 4096 x 2 bytes.
  EXPECT_EQ(b.bytes, 8192);
  EXPECT_EQ(b.sequence, -1);
  EXPECT_EQ(r->trace.str(b.protocol), "SIMPLE");
  EXPECT_EQ(b.end_ns - b.start_ns, 30500);
  ASSERT_EQ(source.process_groups.size(), 2u);
  EXPECT_EQ(r->trace.str(source.process_groups[0].name), "0");
  EXPECT_EQ(r->trace.str(source.process_groups[0].description), "default_pg");
  EXPECT_EQ(source.process_groups[0].group_rank, 2);
  const ProcessGroupInfo& tp = source.process_groups[1];
  EXPECT_EQ(r->trace.str(tp.name), "5");
  EXPECT_EQ(r->trace.str(tp.description), "tp");
  EXPECT_EQ(tp.global_ranks, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(tp.group_rank, 0);
}

}  // namespace
}  // namespace mi::importers
