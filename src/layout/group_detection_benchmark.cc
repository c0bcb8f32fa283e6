// Structural group detection on generated graphs (grouping must stay a small
// part of the layout budget; target under ~50 ms at 100,000 nodes). Op types
// are stood in for by node widths, as in the tests.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "layout/group_detection.h"
#include "layout/hierarchical_layout.h"
#include "layout/hierarchical_layout_test_graphs.h"
#include "layout/layout_test_graphs.h"

namespace mi::layout {
namespace {

void OpsFromWidths(const test_graphs::Graph& g, GroupTree& tree) {
  std::vector<float> widths;
  for (const LayoutNode& n : g.nodes) widths.push_back(n.width);
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  tree.op_names.assign(widths.size(), "op");
  tree.node_op.clear();
  for (const LayoutNode& n : g.nodes) {
    tree.node_op.push_back(static_cast<int32_t>(
        std::lower_bound(widths.begin(), widths.end(), n.width) -
        widths.begin()));
  }
}

GroupTree FlatTree(const test_graphs::Graph& g) {
  GroupTree tree;
  tree.parent = {-1};
  tree.label = {""};
  tree.node_group.assign(g.nodes.size(), 0);
  OpsFromWidths(g, tree);
  return tree;
}

void Report(benchmark::State& state, const test_graphs::Graph& g,
            const GroupTree& t) {
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(g.nodes.size()));
  state.counters["nodes"] = static_cast<double>(g.nodes.size());
  state.counters["groups"] = static_cast<double>(t.parent.size());
  size_t marked = 0;
  for (int32_t r : t.repeat_of) marked += r >= 0;
  state.counters["marked"] = static_cast<double>(marked);
}

// What BuildGroups runs after scopes and fusions, on a flat graph:
// repeated blocks, chunks (1,000), repeat marks.
void RunAll(const test_graphs::Graph& g, GroupTree& t) {
  AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64);
  AddChunks(t, g.nodes.size(), g.edges, 1000);
  MarkRepeats(t, g.edges);
}

// Flat transformer stack: ~1,560 blocks of 64 nodes found at 100k.
void BM_GroupsFlatTransformer(benchmark::State& state) {
  test_graphs::Graph g =
      test_graphs::TransformerStack(static_cast<uint32_t>(state.range(0)));
  GroupTree t;
  for (auto _ : state) {
    t = FlatTree(g);
    RunAll(g, t);
    benchmark::DoNotOptimize(t.parent.data());
  }
  Report(state, g, t);
}
BENCHMARK(BM_GroupsFlatTransformer)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// Branchy random DAG: no repetition, so everything is chunks.
void BM_GroupsBranchyDag(benchmark::State& state) {
  test_graphs::Graph g =
      test_graphs::BranchyDag(static_cast<uint32_t>(state.range(0)));
  GroupTree t;
  for (auto _ : state) {
    t = FlatTree(g);
    RunAll(g, t);
    benchmark::DoNotOptimize(t.parent.data());
  }
  Report(state, g, t);
}
BENCHMARK(BM_GroupsBranchyDag)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// Scoped transformer (blocks of 7 layers): the scope tree as given, every
// step run (few groups have > 64 direct nodes), mostly MarkRepeats.
void BM_GroupsScopedTransformer(benchmark::State& state) {
  test_graphs::ScopedGraph s =
      test_graphs::ScopedTransformer(static_cast<uint32_t>(state.range(0)), 7);
  GroupTree t;
  for (auto _ : state) {
    t = s.groups;
    OpsFromWidths(s.graph, t);
    RunAll(s.graph, t);
    benchmark::DoNotOptimize(t.parent.data());
  }
  Report(state, s.graph, t);
}
BENCHMARK(BM_GroupsScopedTransformer)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// Topological order when index order is not one (graph inputs numbered
// last, as BuildLayoutInput does): the reversed-index transformer.
void BM_TopologicalRankReversed(benchmark::State& state) {
  test_graphs::Graph g =
      test_graphs::TransformerStack(static_cast<uint32_t>(state.range(0)));
  uint32_t n = static_cast<uint32_t>(g.nodes.size());
  std::vector<LayoutEdge> edges = g.edges;
  for (LayoutEdge& e : edges) e = {n - 1 - e.from, n - 1 - e.to};
  for (auto _ : state) {
    benchmark::DoNotOptimize(TopologicalRank(n, edges).data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_TopologicalRankReversed)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mi::layout

BENCHMARK_MAIN();
