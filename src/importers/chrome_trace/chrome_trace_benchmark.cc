// Ingest throughput of the Chrome-trace importer on generated traces (no
// downloads): Kineto-shaped and ONNX Runtime-shaped, plus the tokenizer and
// the timestamp parser alone. End-to-end figures against Python and Node
// are in bench/trace/bench_trace_ingest.sh.

#include <string>

#include <benchmark/benchmark.h>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "importers/common/trace_event/json_trace_parser.h"
#include "importers/common/trace_event/json_trace_tokenizer.h"
#include "trace/trace.h"

namespace mi::importers {
namespace {

constexpr int kEvents = 100000;

std::string MakeKinetoTrace() {
  std::string out = "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n";
  char line[1024];
  for (int i = 0; i < kEvents; ++i) {
    const double ts = 4909914679591.525 + i * 3.25;
    int n;
    switch (i % 4) {
      case 0:
        n = std::snprintf(
            line, sizeof(line),
            "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
            "\"aten::linear\", \"pid\": 25286, \"tid\": 25286,\n    \"ts\": "
            "%.3f, \"dur\": 12.345,\n    \"args\": {\n      \"External id\": "
            "%d,\"Record function id\": 0, \"Ev Idx\": %d, \"Input Dims\": "
            "[[16, 2048, 1024], [1024, 1024], [1024]], \"Input type\": "
            "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]\n    "
            "}\n  },\n",
            ts, i, i);
        break;
      case 1:
        n = std::snprintf(
            line, sizeof(line),
            "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
            "\"cudaLaunchKernel\", \"pid\": 25286, \"tid\": 25286,\n    "
            "\"ts\": %.3f, \"dur\": 4.127,\n    \"args\": {\n      \"cbid\": "
            "211, \"correlation\": %d,\n      \"External id\": %d\n    }\n  "
            "},\n",
            ts, i, i);
        break;
      case 2:
        n = std::snprintf(
            line, sizeof(line),
            "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
            "\"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
            "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas\", "
            "\"pid\": 0, \"tid\": 7,\n    \"ts\": %.3f, \"dur\": 35.488,\n    "
            "\"args\": {\n      \"External id\": %d,\n      \"queued\": 0, "
            "\"device\": 0, \"context\": 1,\n      \"stream\": 7, "
            "\"correlation\": %d,\n      \"registers per thread\": 168,\n    "
            "  \"shared memory\": 213008,\n      \"blocks per SM\": 1.0,\n    "
            "  \"warps per SM\": 12.0,\n      \"grid\": [132, 1, 1],\n      "
            "\"block\": [384, 1, 1],\n      \"est. achieved occupancy %%\": "
            "19\n    }\n  },\n",
            ts, i, i);
        break;
      default:
        n = std::snprintf(
            line, sizeof(line),
            "  {\n    \"ph\": \"f\", \"id\": %d, \"pid\": 0, \"tid\": 7, "
            "\"ts\": %.3f,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": "
            "\"e\"\n  },\n",
            i, ts);
        break;
    }
    out.append(line, n);
  }
  out.resize(out.size() - 2);  // the last ",\n"
  out += "\n  ],\n  \"baseTimeNanoseconds\": 1751410836000000000\n}\n";
  return out;
}

std::string MakeOrtProfile() {
  std::string out = "[\n";
  char line[1024];
  for (int i = 0; i < kEvents; ++i) {
    int n = std::snprintf(
        line, sizeof(line),
        "{\"cat\" : \"Node\",\"pid\" :2745242,\"tid\" :2745242,\"dur\" :%d,"
        "\"ts\" :%d,\"ph\" : \"X\",\"name\" :\"/layer.%d/conv/Conv_kernel_"
        "time\",\"args\" : {\"op_name\" : \"Conv\",\"provider\" : "
        "\"CPUExecutionProvider\",\"node_index\" : \"%d\",\"output_size\" : "
        "\"802816\",\"parameter_size\" : \"37632\",\"activation_size\" : "
        "\"602112\",\"input_type_shape\" : "
        "[{\"float\":[1,3,224,224]},{\"float\":[64,3,7,7]}],"
        "\"output_type_shape\" : [{\"float\":[1,64,112,112]}]}},\n",
        i % 97, 1000 + i * 10, i % 50, i % 50);
    out.append(line, n);
  }
  out += "]\n";
  return out;
}

void RunImport(benchmark::State& state, const std::string& text) {
  for (auto _ : state) {
    StringPool strings;
    Trace trace(&strings);
    DiagnosticSink diagnostics;
    ImportContext ctx;
    ctx.path = "bench.json";
    ctx.trace = &trace;
    ctx.diagnostics = &diagnostics;
    Status status = ImportChromeTraceFromBuffer(text, ctx, nullptr, 8 << 20);
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    benchmark::DoNotOptimize(trace.task_count());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kEvents);
}

void BM_ImportKinetoTrace(benchmark::State& state) {
  static const std::string* const kText = new std::string(MakeKinetoTrace());
  RunImport(state, *kText);
}
BENCHMARK(BM_ImportKinetoTrace)->Unit(benchmark::kMillisecond);

void BM_ImportOrtProfile(benchmark::State& state) {
  static const std::string* const kText = new std::string(MakeOrtProfile());
  RunImport(state, *kText);
}
BENCHMARK(BM_ImportOrtProfile)->Unit(benchmark::kMillisecond);

class CountingDelegate : public trace_event::JsonTraceTokenizer::Delegate {
 public:
  Status OnTraceEvent(std::string_view) override {
    ++events;
    return Status::Ok();
  }
  Status OnTopLevelValue(std::string_view, std::string_view) override {
    return Status::Ok();
  }
  int64_t events = 0;
};

void BM_TokenizeKinetoTrace(benchmark::State& state) {
  static const std::string* const kText = new std::string(MakeKinetoTrace());
  for (auto _ : state) {
    CountingDelegate delegate;
    trace_event::JsonTraceTokenizer tokenizer("bench.json", &delegate);
    Status status = tokenizer.Feed(*kText);
    if (status.ok()) status = tokenizer.Finish();
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    benchmark::DoNotOptimize(delegate.events);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kText->size()));
}
BENCHMARK(BM_TokenizeKinetoTrace)->Unit(benchmark::kMillisecond);

void BM_ParseTimestamp(benchmark::State& state) {
  const std::string_view texts[] = {"4909914679591.525", "1234.567", "17",
                                    "1696000000123.456"};
  int64_t sum = 0;
  for (auto _ : state) {
    for (std::string_view text : texts) {
      sum += trace_event::ParseMicrosecondsToNanoseconds(text).value_or(0);
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 4);
}
BENCHMARK(BM_ParseTimestamp);

}  // namespace
}  // namespace mi::importers

BENCHMARK_MAIN();
