// Benchmarks of the ONNX importer on generated models: a weight-heavy one
// (the skeleton walker skips payloads) and a node-heavy one (conversion);
// and ONNX shape inference in-process (as it ran before it was isolated)
// against the forked child (onnx_shape_inference.h), with and without GBs
// held by the process.

#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>

#include "importers/onnx/onnx_shape_inference.h"
#include "importers/onnx/onnx_skeleton.h"
#include "importers/onnx/onnx_test_util.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace mi::importers {
namespace {

using namespace onnx_test;  // NOLINT: test helpers

// A MatMul chain of `layers` float [dim, dim] weights (raw_data).
std::string WeightHeavyModel(int layers, int64_t dim) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x0", ::onnx::TensorProto::FLOAT, {1, dim});
  for (int i = 0; i < layers; ++i) {
    std::string w = "w" + std::to_string(i);
    AddFloatInitializer(g, w, {dim, dim});
    AddNode(g, "MatMul", {"x" + std::to_string(i), w},
            {"x" + std::to_string(i + 1)},
            "/layer" + std::to_string(i) + "/MatMul");
  }
  AddOutput(g, "x" + std::to_string(layers), ::onnx::TensorProto::FLOAT,
            {1, dim});
  return model.SerializeAsString();
}

// A Relu chain of `nodes` nodes with value_info on every edge.
std::string NodeHeavyModel(int nodes) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "t0", ::onnx::TensorProto::FLOAT, {1, 64});
  for (int i = 0; i < nodes; ++i) {
    std::string out = "t" + std::to_string(i + 1);
    AddNode(g, "Relu", {"t" + std::to_string(i)}, {out},
            "/block" + std::to_string(i / 10) + "/Relu_" + std::to_string(i));
    if (i + 1 < nodes) {
      SetType(g->add_value_info(), out, ::onnx::TensorProto::FLOAT, {1, 64});
    }
  }
  AddOutput(g, "t" + std::to_string(nodes), ::onnx::TensorProto::FLOAT,
            {1, 64});
  return model.SerializeAsString();
}

void BM_ImportWeightHeavyModel(benchmark::State& state) {
  std::string bytes = WeightHeavyModel(16, 1024);  // 64 MiB
  for (auto _ : state) {
    auto r = ImportBytes(bytes);
    if (!r->status.ok()) state.SkipWithError(r->status.ToString().c_str());
    benchmark::DoNotOptimize(r->model.node_count());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_ImportWeightHeavyModel)->Unit(benchmark::kMillisecond);

void BM_BuildSkeletonWeightHeavy(benchmark::State& state) {
  std::string bytes = WeightHeavyModel(16, 1024);
  for (auto _ : state) {
    auto skeleton = onnx_import::BuildOnnxSkeleton(bytes, "m.onnx");
    benchmark::DoNotOptimize(skeleton->bytes.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_BuildSkeletonWeightHeavy)->Unit(benchmark::kMicrosecond);

void BM_ImportNodeHeavyModel(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  std::string bytes = NodeHeavyModel(nodes);
  for (auto _ : state) {
    auto r = ImportBytes(bytes);
    if (!r->status.ok()) state.SkipWithError(r->status.ToString().c_str());
    benchmark::DoNotOptimize(r->model.node_count());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * nodes);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_ImportNodeHeavyModel)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

// A Relu chain of `nodes` nodes typed only at the graph input: every other
// edge needs shape inference.
::onnx::ModelProto UntypedChain(int nodes) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "t0", ::onnx::TensorProto::FLOAT, {1, 64});
  for (int i = 0; i < nodes; ++i) {
    AddNode(g, "Relu", {"t" + std::to_string(i)}, {"t" + std::to_string(i + 1)},
            "Relu_" + std::to_string(i));
  }
  g->add_output()->set_name("t" + std::to_string(nodes));
  return model;
}

// Shape inference as it ran before it was isolated: libonnx in-process.
void BM_InferShapesInProcess(benchmark::State& state) {
  const ::onnx::ModelProto model =
      UntypedChain(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    ::onnx::ModelProto copy = model;
    ::onnx::shape_inference::InferShapes(
        copy, ::onnx::OpSchemaRegistry::Instance(),
        ::onnx::ShapeInferenceOptions(false, 0, true));
    benchmark::DoNotOptimize(copy.graph().value_info_size());
  }
}
BENCHMARK(BM_InferShapesInProcess)
    ->Arg(10)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// The same in a forked child, the answer read back and applied.
void BM_InferShapesIsolated(benchmark::State& state) {
  const ::onnx::ModelProto model =
      UntypedChain(static_cast<int>(state.range(0)));
  // range(1): MiB of touched heap the process holds besides (a server with
  // runs loaded): fork copies the page tables of all of it.
  const size_t held = static_cast<size_t>(state.range(1)) << 20;
  std::unique_ptr<char[]> ballast(new char[held + 1]);
  std::memset(ballast.get(), 1, held + 1);
  auto children_cpu_s = [] {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    return s(usage.ru_utime) + s(usage.ru_stime);
  };
  const double children_before = children_cpu_s();
  for (auto _ : state) {
    ::onnx::ModelProto copy = model;
    auto result = onnx_import::InferShapesIsolated(copy, {}, {});
    if (!result.applied) state.SkipWithError(result.problem.c_str());
    benchmark::DoNotOptimize(copy.graph().value_info_size());
  }
  benchmark::DoNotOptimize(ballast[held]);
  // The children's CPU time (the inference itself, their page faults and
  // exit), which the CPU column, the parent's alone, leaves out.
  state.counters["child_cpu_ms"] = 1e3 * (children_cpu_s() - children_before) /
                                   static_cast<double>(state.iterations());
}
BENCHMARK(BM_InferShapesIsolated)
    ->Args({10, 0})
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->Args({100000, 0})
    ->Args({10, 4096})
    ->Args({10000, 4096})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mi::importers

BENCHMARK_MAIN();
