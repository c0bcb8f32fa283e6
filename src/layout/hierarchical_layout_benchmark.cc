// Hierarchical layout on the scoped transformer stack (target: expanding one
// group of ~500 nodes inside a 100,000-node graph in under 100 ms).

#include <benchmark/benchmark.h>

#include "layout/hierarchical_layout.h"
#include "layout/hierarchical_layout_test_graphs.h"

namespace mi::layout {
namespace {

// Construction, default collapsed view and its layout, from scratch.
void BM_HierarchicalDefaultView(benchmark::State& state) {
  test_graphs::ScopedGraph s =
      test_graphs::ScopedTransformer(static_cast<uint32_t>(state.range(0)), 7);
  size_t items = 0;
  for (auto _ : state) {
    HierarchicalLayout h(s.graph.nodes, s.graph.edges, s.groups, {});
    h.CollapseToBudget(2000);
    items = h.Layout().items.size();
    benchmark::DoNotOptimize(items);
  }
  state.counters["nodes"] = static_cast<double>(s.graph.nodes.size());
  state.counters["items"] = static_cast<double>(items);
}
BENCHMARK(BM_HierarchicalDefaultView)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// From the default view (budget = range(1)), expands one block of 7 layers
// (~530 nodes) with all its descendants, never laid out before (a different
// block each iteration, the previous one collapsed again untimed), and lays
// out the new view.
void BM_HierarchicalExpandBlock(benchmark::State& state) {
  test_graphs::ScopedGraph s =
      test_graphs::ScopedTransformer(static_cast<uint32_t>(state.range(0)), 7);
  HierarchicalLayout h(s.graph.nodes, s.graph.edges, s.groups, {});
  h.CollapseToBudget(static_cast<size_t>(state.range(1)));
  h.Layout();
  size_t next = 0, items = 0, laid_out = 0, block_nodes = 0;
  int32_t previous = -1;
  for (auto _ : state) {
    state.PauseTiming();
    if (previous >= 0) {
      h.SetSubtreeExpanded(previous, false);
      h.Layout();
    }
    int32_t block = s.block_groups[(next * 37 + 11) % s.block_groups.size()];
    ++next;
    state.ResumeTiming();
    h.SetSubtreeExpanded(block, true);
    const HierarchicalResult& r = h.Layout();
    items = r.items.size();
    laid_out = r.groups_laid_out;
    block_nodes = r.groups[block].node_count;
    previous = block;
  }
  state.counters["nodes"] = static_cast<double>(s.graph.nodes.size());
  state.counters["block_nodes"] = static_cast<double>(block_nodes);
  state.counters["items"] = static_cast<double>(items);
  state.counters["laid_out"] = static_cast<double>(laid_out);
}
BENCHMARK(BM_HierarchicalExpandBlock)
    ->Args({100000, 2000})
    ->Args({100000, 300})
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

// Everything expanded: the hierarchical layout of the whole graph (every
// group laid out once), against the flat LayeredLayout's figures.
void BM_HierarchicalFullyExpanded(benchmark::State& state) {
  test_graphs::ScopedGraph s =
      test_graphs::ScopedTransformer(static_cast<uint32_t>(state.range(0)), 7);
  for (auto _ : state) {
    HierarchicalLayout h(s.graph.nodes, s.graph.edges, s.groups, {});
    benchmark::DoNotOptimize(h.Layout().items.size());
  }
}
BENCHMARK(BM_HierarchicalFullyExpanded)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mi::layout

BENCHMARK_MAIN();
