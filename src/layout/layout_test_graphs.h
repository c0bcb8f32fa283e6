#pragma once

// Generated graphs shared by the layout tests and benchmarks (inputs are
// generated, never downloaded). Deterministic: a fixed LCG, no <random>
// distributions whose output differs between standard libraries.

#include <cstdint>
#include <vector>

#include "layout/layered_layout.h"

namespace mi::layout::test_graphs {

struct Graph {
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;

  uint32_t Add(float w = 80, float h = 36) {
    nodes.push_back({w, h});
    return static_cast<uint32_t>(nodes.size() - 1);
  }
  void Edge(uint32_t a, uint32_t b) { edges.push_back({a, b}); }
};

class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  uint32_t Next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state_ >> 33);
  }
  uint32_t Below(uint32_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

// The layer norm decomposition torch.onnx emits: mean, sub, pow, mean, add,
// sqrt, div, mul, add (with a skip from sub to div).
inline uint32_t LayerNormChain(Graph& g, uint32_t x) {
  uint32_t mean = g.Add(110);
  g.Edge(x, mean);
  uint32_t sub = g.Add(60);
  g.Edge(x, sub);
  g.Edge(mean, sub);
  uint32_t pow = g.Add(60);
  g.Edge(sub, pow);
  uint32_t mean2 = g.Add(110);
  g.Edge(pow, mean2);
  uint32_t add = g.Add(60);
  g.Edge(mean2, add);
  uint32_t sqrt = g.Add(60);
  g.Edge(add, sqrt);
  uint32_t div = g.Add(60);
  g.Edge(sub, div);
  g.Edge(sqrt, div);
  uint32_t mul = g.Add(60);
  g.Edge(div, mul);
  uint32_t add2 = g.Add(60);
  g.Edge(mul, add2);
  return add2;
}

// Reshape whose target shape is computed from the input at run time, as
// torch.onnx exports head splits: Shape -> Gather -> Unsqueeze -> Concat
// (with a constant) -> Reshape.
inline uint32_t DynamicReshape(Graph& g, uint32_t x) {
  uint32_t shape = g.Add(70);
  g.Edge(x, shape);
  uint32_t gather = g.Add(70);
  g.Edge(shape, gather);
  uint32_t unsqueeze = g.Add(90);
  g.Edge(gather, unsqueeze);
  uint32_t constant = g.Add(80);
  uint32_t concat = g.Add(70);
  g.Edge(unsqueeze, concat);
  g.Edge(constant, concat);
  uint32_t reshape = g.Add(80);
  g.Edge(x, reshape);
  g.Edge(concat, reshape);
  return reshape;
}

inline uint32_t MatMulAdd(Graph& g, uint32_t x) {
  uint32_t mm = g.Add(90);
  g.Edge(x, mm);
  uint32_t add = g.Add(60);
  g.Edge(mm, add);
  return add;
}

// A stack of pre-norm transformer blocks (attention + MLP, residual skips)
// with about `target_nodes` nodes.
inline Graph TransformerStack(uint32_t target_nodes) {
  Graph g;
  uint32_t x = g.Add(120, 24);  // input
  while (g.nodes.size() + 1 < target_nodes) {
    uint32_t ln = LayerNormChain(g, x);
    uint32_t q = DynamicReshape(g, MatMulAdd(g, ln));
    uint32_t k = DynamicReshape(g, MatMulAdd(g, ln));
    uint32_t v = DynamicReshape(g, MatMulAdd(g, ln));
    uint32_t kt = g.Add(90);  // Transpose
    g.Edge(k, kt);
    uint32_t scores = g.Add(90);
    g.Edge(q, scores);
    g.Edge(kt, scores);
    uint32_t scale = g.Add(60);
    g.Edge(scores, scale);
    uint32_t mask = g.Add(60);  // Where with a causal-mask constant
    uint32_t mask_const = g.Add(80);
    g.Edge(scale, mask);
    g.Edge(mask_const, mask);
    uint32_t softmax = g.Add(80);
    g.Edge(mask, softmax);
    uint32_t attn = g.Add(90);
    g.Edge(softmax, attn);
    g.Edge(v, attn);
    uint32_t proj = MatMulAdd(g, DynamicReshape(g, attn));
    uint32_t res1 = g.Add(60);
    g.Edge(x, res1);
    g.Edge(proj, res1);
    uint32_t ln2 = LayerNormChain(g, res1);
    uint32_t up = MatMulAdd(g, ln2);
    uint32_t gelu = g.Add(60);
    g.Edge(up, gelu);
    uint32_t down = MatMulAdd(g, gelu);
    uint32_t res2 = g.Add(60);
    g.Edge(res1, res2);
    g.Edge(down, res2);
    x = res2;
  }
  uint32_t out = g.Add(120, 24);
  g.Edge(x, out);
  return g;
}

// A branchy random DAG: each node takes 1-3 inputs from the previous 64,
// the shape on which network-simplex ranking is known to blow up.
inline Graph BranchyDag(uint32_t n, uint64_t seed = 1) {
  Graph g;
  Lcg rng(seed);
  for (uint32_t i = 0; i < n; ++i) {
    g.Add(60 + static_cast<float>(rng.Below(60)), 36);
    if (i == 0) continue;
    uint32_t inputs = 1 + rng.Below(3);
    for (uint32_t k = 0; k < inputs; ++k) {
      uint32_t window = i < 64 ? i : 64;
      g.Edge(i - 1 - rng.Below(window), i);
    }
  }
  return g;
}

}  // namespace mi::layout::test_graphs
