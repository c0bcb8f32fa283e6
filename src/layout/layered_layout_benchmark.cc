// Layout time on generated graphs (targets: 10k nodes < 0.5 s,
// 100k nodes < 5 s). Items are input nodes; bench/layout compares the same
// shapes end to end against dagre, ELK and dot.

#include <benchmark/benchmark.h>

#include "layout/layered_layout.h"
#include "layout/layout_test_graphs.h"

namespace mi::layout {
namespace {

void Report(benchmark::State& state, const test_graphs::Graph& g,
            const LayoutResult& r) {
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(g.nodes.size()));
  state.counters["nodes"] = static_cast<double>(g.nodes.size());
  state.counters["edges"] = static_cast<double>(g.edges.size());
  state.counters["dummies"] = r.dummy_count;
  state.counters["ranks"] = r.rank_count;
  state.counters["crossings"] = static_cast<double>(r.crossings);
}

void BM_LayeredLayoutTransformer(benchmark::State& state) {
  test_graphs::Graph g =
      test_graphs::TransformerStack(static_cast<uint32_t>(state.range(0)));
  LayoutResult r;
  for (auto _ : state) {
    r = LayeredLayout(g.nodes, g.edges, {});
    benchmark::DoNotOptimize(r.x.data());
  }
  Report(state, g, r);
}
BENCHMARK(BM_LayeredLayoutTransformer)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

void BM_LayeredLayoutBranchyDag(benchmark::State& state) {
  test_graphs::Graph g =
      test_graphs::BranchyDag(static_cast<uint32_t>(state.range(0)));
  LayoutResult r;
  for (auto _ : state) {
    r = LayeredLayout(g.nodes, g.edges, {});
    benchmark::DoNotOptimize(r.x.data());
  }
  Report(state, g, r);
}
BENCHMARK(BM_LayeredLayoutBranchyDag)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mi::layout

BENCHMARK_MAIN();
