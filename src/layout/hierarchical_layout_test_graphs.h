#pragma once

// Generated graphs with a group tree for the hierarchical layout tests and
// benchmark: the transformer stack of layout_test_graphs.h with the scopes
// a torch.onnx export gives it (/blocks.K/layers.N/self_attn/q_proj/...,
// /layers.N/mlp/...). Deterministic.

#include <cstdint>
#include <string>
#include <vector>

#include "layout/hierarchical_layout.h"
#include "layout/layout_test_graphs.h"

namespace mi::layout::test_graphs {

struct ScopedGraph {
  Graph graph;
  GroupTree groups;
  std::vector<int32_t> layer_groups;  // group of each layers.N
  std::vector<int32_t> block_groups;  // group of each blocks.K (if any)

  int32_t AddGroup(int32_t parent, std::string label) {
    groups.parent.push_back(parent);
    groups.label.push_back(std::move(label));
    return static_cast<int32_t>(groups.parent.size() - 1);
  }
  // Runs `build` and puts the nodes it adds into `group`.
  template <typename F>
  uint32_t In(int32_t group, F build) {
    uint32_t out = build();
    groups.node_group.resize(graph.nodes.size(), group);
    return out;
  }
};

// About `target_nodes` nodes (~75 per layer). With `layers_per_block` > 0,
// layers are grouped into blocks.K of that many layers (~75 * n nodes each),
// an extra level as in encoder/decoder stacks.
inline ScopedGraph ScopedTransformer(uint32_t target_nodes,
                                     uint32_t layers_per_block = 0) {
  ScopedGraph s;
  Graph& g = s.graph;
  s.AddGroup(-1, "");
  uint32_t x = s.In(0, [&] { return g.Add(120, 24); });
  int32_t block = 0;
  for (uint32_t layer = 0; g.nodes.size() + 1 < target_nodes; ++layer) {
    if (layers_per_block > 0 && layer % layers_per_block == 0) {
      block =
          s.AddGroup(0, "blocks." + std::to_string(layer / layers_per_block));
      s.block_groups.push_back(block);
    }
    int32_t l = s.AddGroup(block, "layers." + std::to_string(layer));
    s.layer_groups.push_back(l);
    int32_t ln1 = s.AddGroup(l, "input_layernorm");
    int32_t attn = s.AddGroup(l, "self_attn");
    int32_t qp = s.AddGroup(attn, "q_proj");
    int32_t kp = s.AddGroup(attn, "k_proj");
    int32_t vp = s.AddGroup(attn, "v_proj");
    int32_t op = s.AddGroup(attn, "o_proj");
    int32_t ln2 = s.AddGroup(l, "post_attention_layernorm");
    int32_t mlp = s.AddGroup(l, "mlp");
    int32_t up_g = s.AddGroup(mlp, "up_proj");
    int32_t down_g = s.AddGroup(mlp, "down_proj");

    uint32_t ln = s.In(ln1, [&] { return LayerNormChain(g, x); });
    uint32_t q = s.In(attn, [&] {
      return DynamicReshape(g, s.In(qp, [&] { return MatMulAdd(g, ln); }));
    });
    uint32_t k = s.In(attn, [&] {
      return DynamicReshape(g, s.In(kp, [&] { return MatMulAdd(g, ln); }));
    });
    uint32_t v = s.In(attn, [&] {
      return DynamicReshape(g, s.In(vp, [&] { return MatMulAdd(g, ln); }));
    });
    uint32_t attn_out = s.In(attn, [&] {
      uint32_t kt = g.Add(90);
      g.Edge(k, kt);
      uint32_t scores = g.Add(90);
      g.Edge(q, scores);
      g.Edge(kt, scores);
      uint32_t scale = g.Add(60);
      g.Edge(scores, scale);
      uint32_t mask = g.Add(60);
      uint32_t mask_const = g.Add(80);
      g.Edge(scale, mask);
      g.Edge(mask_const, mask);
      uint32_t softmax = g.Add(80);
      g.Edge(mask, softmax);
      uint32_t a = g.Add(90);
      g.Edge(softmax, a);
      g.Edge(v, a);
      return DynamicReshape(g, a);
    });
    uint32_t proj = s.In(op, [&] { return MatMulAdd(g, attn_out); });
    uint32_t res1 = s.In(l, [&] {
      uint32_t r = g.Add(60);
      g.Edge(x, r);  // residual skip around the attention
      g.Edge(proj, r);
      return r;
    });
    uint32_t ln2_out = s.In(ln2, [&] { return LayerNormChain(g, res1); });
    uint32_t up = s.In(up_g, [&] { return MatMulAdd(g, ln2_out); });
    uint32_t gelu = s.In(mlp, [&] {
      uint32_t a = g.Add(60);
      g.Edge(up, a);
      return a;
    });
    uint32_t down = s.In(down_g, [&] { return MatMulAdd(g, gelu); });
    x = s.In(l, [&] {
      uint32_t r = g.Add(60);
      g.Edge(res1, r);  // residual skip around the MLP
      g.Edge(down, r);
      return r;
    });
  }
  uint32_t out = s.In(0, [&] { return g.Add(120, 24); });
  g.Edge(x, out);
  return s;
}

}  // namespace mi::layout::test_graphs
