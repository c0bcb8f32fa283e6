// Rules over the graph: unfused patterns (Conv-BN-activation, MatMul+Add,
// decomposed LayerNorm and GELU), redundant Transpose/Reshape pairs and
// dynamic input dimensions. Pattern rules look at the compiled graph when
// one is loaded (what actually ran), else at the framework graph.

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/rule_context.h"
#include "base/strings.h"

namespace mi::analysis::diagnosis_internal {
namespace {

// A matched occurrence of a pattern: its nodes in data-flow order and the
// pattern's shape ("Conv -> BatchNormalization -> Relu").
struct Instance {
  std::vector<NodeId> nodes;
  std::string shape;
};

std::string_view Op(const Model& m, NodeId n) {
  return m.str(m.node_op_type(n));
}

ValueId Input(const Model& m, NodeId n, size_t i) {
  auto in = m.node_inputs(n);
  return i < in.size() ? in[i] : ValueId::Invalid();
}

ValueId Output0(const Model& m, NodeId n) {
  auto out = m.node_outputs(n);
  return out.empty() ? ValueId::Invalid() : out[0];
}

NodeId ProducerOf(const Model& m, ValueId v) {
  return v.valid() ? m.value_producer(v) : NodeId::Invalid();
}

// The one node reading `v` (it may read it twice, as Mul(x, x) does), or
// Invalid when several nodes read it or it is also a graph output: then
// the producer's result must be materialised anyway.
NodeId SoleConsumer(const Model& m, ValueId v) {
  if (!v.valid() || (m.value_flags(v) & kValueGraphOutput)) {
    return NodeId::Invalid();
  }
  auto consumers = m.value_consumers(v);
  if (consumers.empty()) return NodeId::Invalid();
  for (NodeId c : consumers) {
    if (c != consumers[0]) return NodeId::Invalid();
  }
  return consumers[0];
}

// The consumer of `v` with op type in `ops` (the first in node order).
NodeId ConsumerWithOp(const Model& m, ValueId v,
                      std::initializer_list<std::string_view> ops) {
  if (!v.valid()) return NodeId::Invalid();
  for (NodeId c : m.value_consumers(v)) {
    if (OpIn(Op(m, c), ops)) return c;
  }
  return NodeId::Invalid();
}

bool IsConstant(const Model& m, ValueId v) {
  if (!v.valid()) return false;
  if (m.value_flags(v) & kValueInitializer) return true;
  NodeId p = ProducerOf(m, v);
  return p.valid() && OpIn(Op(m, p), {"Constant", "Const"});
}

// The input of a binary node other than `v`, Invalid when it has not
// exactly two inputs with `v` among them.
ValueId OtherInput(const Model& m, NodeId n, ValueId v) {
  auto in = m.node_inputs(n);
  if (in.size() != 2) return ValueId::Invalid();
  if (in[0] == v) return in[1];
  if (in[1] == v) return in[0];
  return ValueId::Invalid();
}

bool Reads(const Model& m, NodeId n, ValueId v) {
  auto in = m.node_inputs(n);
  return std::find(in.begin(), in.end(), v) != in.end();
}

const std::initializer_list<std::string_view> kConvOps = {
    "Conv",   "ConvTranspose",   "Conv2D",
    "Conv3D", "Conv2DTranspose", "DepthwiseConv2D"};
const std::initializer_list<std::string_view> kBatchNormOps = {
    "BatchNormalization", "BNInference",    "BNInferenceD",
    "BatchNorm",          "FusedBatchNorm", "FusedBatchNormV3"};
const std::initializer_list<std::string_view> kActivationOps = {
    "Relu",      "LeakyRelu", "Relu6", "Clip", "Sigmoid", "HardSigmoid",
    "HardSwish", "Tanh",      "Elu",   "Selu", "PRelu",   "Gelu",
    "FastGelu",  "Swish",     "Silu",  "Mish", "Softplus"};
const std::initializer_list<std::string_view> kAddOps = {"Add", "BiasAdd",
                                                         "AddV2"};
const std::initializer_list<std::string_view> kMatMulOps = {
    "MatMul",      "MatMulV2",      "MatMulV3",
    "BatchMatMul", "BatchMatMulV2", "FusedMatMul"};
const std::initializer_list<std::string_view> kTransposeOps = {"Transpose",
                                                               "TransposeD"};
const std::initializer_list<std::string_view> kReshapeOps = {
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "ReshapeD", "ExpandDims"};

template <typename Match>
std::vector<Instance> FindInstances(const RuleContext& ctx, Match match) {
  std::vector<Instance> out;
  for (uint32_t i = 0; i < ctx.model.node_count(); ++i) {
    NodeId n(i);
    if (ctx.model.node_level(n) != ctx.pattern_level) continue;
    if (std::optional<Instance> inst = match(n)) {
      out.push_back(std::move(*inst));
    }
  }
  return out;
}

std::string ShapeOf(const Model& m, const std::vector<NodeId>& nodes) {
  std::string s;
  for (NodeId n : nodes) s += (s.empty() ? "" : " -> ") + std::string(Op(m, n));
  return s;
}

// One finding for all instances when their number is above the threshold.
// Instances are ordered by time at stake (their nodes' task time).
void Report(const RuleContext& ctx, const RuleSpec& rule,
            std::vector<Instance> instances, std::string_view what,
            std::vector<Finding>* out) {
  double threshold = ctx.options.Threshold(rule);
  if (instances.empty() || static_cast<double>(instances.size()) <= threshold) {
    return;
  }
  const Model& m = ctx.model;
  auto time_of = [&](const Instance& inst) {
    int64_t ns = 0;
    for (NodeId n : inst.nodes) ns += ctx.node_time_ns[n.value()];
    return ns;
  };
  std::vector<std::pair<int64_t, Instance>> timed;
  for (Instance& inst : instances) {
    int64_t ns = time_of(inst);
    timed.emplace_back(ns, std::move(inst));
  }
  std::stable_sort(
      timed.begin(), timed.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  // Instances may share nodes (two convolutions feeding one Add -> Relu):
  // nodes and their time count once.
  std::map<std::string, size_t> shapes;
  std::vector<NodeId> unique_nodes;
  std::vector<bool> seen(m.node_count(), false);
  int64_t total_ns = 0;
  for (const auto& [ns, inst] : timed) {
    ++shapes[inst.shape];
    for (NodeId n : inst.nodes) {
      if (seen[n.value()]) continue;
      seen[n.value()] = true;
      unique_nodes.push_back(n);
      total_ns += ctx.node_time_ns[n.value()];
    }
  }
  const size_t node_count = unique_nodes.size();
  std::vector<std::pair<std::string, size_t>> by_count(shapes.begin(),
                                                       shapes.end());
  std::stable_sort(
      by_count.begin(), by_count.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string breakdown;
  for (size_t i = 0; i < by_count.size() && i < 4; ++i) {
    breakdown += fmt::format("{}{} x {}", i ? ", " : "", by_count[i].second,
                             by_count[i].first);
  }
  if (by_count.size() > 4) {
    breakdown += fmt::format(", {} more shapes", by_count.size() - 4);
  }
  std::string example;
  for (NodeId n : timed.front().second.nodes) {
    example += fmt::format("{}'{}'", example.empty() ? "" : " -> ",
                           m.str(m.node_name(n)));
  }
  const bool framework_only = !ctx.has_compiled;
  Finding f;
  f.rule_id = std::string(rule.id);
  f.severity = framework_only ? FindingSeverity::kInfo : rule.severity;
  f.message = fmt::format(
      "{} {} in the {} graph ({}; {} nodes{}), e.g. {}; above the threshold "
      "of {}",
      instances.size(), what, framework_only ? "framework" : "compiled",
      breakdown, node_count,
      total_ns > 0 ? ", " + FormatTime(total_ns) + " of tasks" : "", example,
      threshold);
  if (framework_only) {
    f.message +=
        " (framework graph only: the compiler may still fuse these; load the "
        "compiled graph to check)";
  }
  f.suggestion = std::string(rule.suggestion);
  f.time_ns = total_ns;
  f.share = ctx.basis_ns > 0
                ? std::min(1.0, static_cast<double>(total_ns) / ctx.basis_ns)
                : 0;
  if (unique_nodes.size() > kMaxEvidence) unique_nodes.resize(kMaxEvidence);
  f.nodes = std::move(unique_nodes);
  AddNodeTasks(ctx, &f);
  out->push_back(std::move(f));
}

// ---- Transpose permutations ----

// The "perm" attribute ("[0,2,1,3]"), or the default (reversed axes) when
// absent and the input rank is known; nullopt when unknown.
std::optional<std::vector<int64_t>> Permutation(const Model& m, NodeId n) {
  for (const Attribute& a : m.node_attributes(n)) {
    if (m.str(a.name) != "perm") continue;
    std::string_view text = m.str(a.text);
    if (text.find("...") != std::string_view::npos ||
        text.find("\u2026") != std::string_view::npos) {
      return std::nullopt;  // shortened for display
    }
    std::vector<int64_t> perm;
    for (size_t i = 0; i < text.size();) {
      if (text[i] == '-' || (text[i] >= '0' && text[i] <= '9')) {
        int64_t v = 0;
        auto [end, ec] =
            std::from_chars(text.data() + i, text.data() + text.size(), v);
        if (ec != std::errc()) return std::nullopt;
        perm.push_back(v);
        i = end - text.data();
      } else {
        ++i;
      }
    }
    return perm;
  }
  int32_t rank = m.value_rank(Input(m, n, 0));
  if (rank < 0) return std::nullopt;
  std::vector<int64_t> perm(rank);
  for (int32_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  return perm;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

void UnfusedConvBnActivation(const RuleContext& ctx, const RuleSpec& rule,
                             std::vector<Finding>* out) {
  const Model& m = ctx.model;
  auto instances = FindInstances(ctx, [&](NodeId conv) {
    std::optional<Instance> none;
    if (!OpIn(Op(m, conv), kConvOps)) return none;
    Instance inst;
    inst.nodes.push_back(conv);
    NodeId next = SoleConsumer(m, Output0(m, conv));
    bool has_bn = false, has_activation = false;
    if (next.valid() && OpIn(Op(m, next), kBatchNormOps)) {
      has_bn = true;
      inst.nodes.push_back(next);
      next = SoleConsumer(m, Output0(m, next));
    }
    if (next.valid() && OpIn(Op(m, next), kActivationOps)) {
      has_activation = true;
      inst.nodes.push_back(next);
    } else if (next.valid() && OpIn(Op(m, next), kAddOps)) {
      // Bias or residual Add, fusable only together with an activation.
      NodeId act = SoleConsumer(m, Output0(m, next));
      if (act.valid() && OpIn(Op(m, act), kActivationOps)) {
        has_activation = true;
        inst.nodes.push_back(next);
        inst.nodes.push_back(act);
      }
    }
    if (!has_bn && !has_activation) return none;
    inst.shape = ShapeOf(m, inst.nodes);
    return std::optional<Instance>(std::move(inst));
  });
  Report(ctx, rule, std::move(instances),
         "convolutions with their batch norm / activation left unfused", out);
}

void UnfusedMatMulAdd(const RuleContext& ctx, const RuleSpec& rule,
                      std::vector<Finding>* out) {
  const Model& m = ctx.model;
  auto instances = FindInstances(ctx, [&](NodeId mm) {
    std::optional<Instance> none;
    if (!OpIn(Op(m, mm), kMatMulOps)) return none;
    ValueId product = Output0(m, mm);
    NodeId add = SoleConsumer(m, product);
    if (!add.valid() || !OpIn(Op(m, add), kAddOps) ||
        !IsConstant(m, OtherInput(m, add, product))) {
      return none;
    }
    Instance inst;
    inst.nodes = {mm, add};
    NodeId act = SoleConsumer(m, Output0(m, add));
    if (act.valid() && OpIn(Op(m, act), kActivationOps)) {
      inst.nodes.push_back(act);
    }
    inst.shape = ShapeOf(m, inst.nodes);
    return std::optional<Instance>(std::move(inst));
  });
  Report(ctx, rule, std::move(instances),
         "MatMuls followed by a separate bias Add", out);
}

// ReduceMean(x) -> Sub(x, mean) -> Pow(d, 2) | Mul(d, d) -> ReduceMean ->
// Add(eps) -> Sqrt -> Div(d, std) [-> Mul(gamma) -> Add(beta)].
void UnfusedLayerNorm(const RuleContext& ctx, const RuleSpec& rule,
                      std::vector<Finding>* out) {
  const Model& m = ctx.model;
  auto instances = FindInstances(ctx, [&](NodeId mean) {
    std::optional<Instance> none;
    if (Op(m, mean) != "ReduceMean") return none;
    ValueId x = Input(m, mean, 0);
    ValueId mean_out = Output0(m, mean);
    NodeId sub = ConsumerWithOp(m, mean_out, {"Sub"});
    if (!sub.valid() || Input(m, sub, 0) != x || Input(m, sub, 1) != mean_out) {
      return none;
    }
    ValueId centered = Output0(m, sub);
    NodeId square = NodeId::Invalid();
    NodeId div = NodeId::Invalid();
    if (!centered.valid()) return none;
    for (NodeId c : m.value_consumers(centered)) {
      std::string_view op = Op(m, c);
      if (op == "Pow" && Input(m, c, 0) == centered) square = c;
      if (op == "Mul" && Input(m, c, 0) == centered &&
          Input(m, c, 1) == centered) {
        square = c;
      }
      if (op == "Div" && Input(m, c, 0) == centered) div = c;
    }
    if (!square.valid() || !div.valid()) return none;
    NodeId var = SoleConsumer(m, Output0(m, square));
    if (!var.valid() || Op(m, var) != "ReduceMean") return none;
    NodeId eps = SoleConsumer(m, Output0(m, var));
    if (!eps.valid() || !OpIn(Op(m, eps), kAddOps)) return none;
    NodeId sqrt = SoleConsumer(m, Output0(m, eps));
    if (!sqrt.valid() || Op(m, sqrt) != "Sqrt") return none;
    if (SoleConsumer(m, Output0(m, sqrt)) != div ||
        Input(m, div, 1) != Output0(m, sqrt)) {
      return none;
    }
    Instance inst;
    inst.nodes = {mean, sub, square, var, eps, sqrt, div};
    NodeId scale = SoleConsumer(m, Output0(m, div));
    if (scale.valid() && Op(m, scale) == "Mul") {
      inst.nodes.push_back(scale);
      NodeId shift = SoleConsumer(m, Output0(m, scale));
      if (shift.valid() && OpIn(Op(m, shift), kAddOps) &&
          IsConstant(m, OtherInput(m, shift, Output0(m, scale)))) {
        inst.nodes.push_back(shift);
      }
    }
    inst.shape = ShapeOf(m, inst.nodes);
    return std::optional<Instance>(std::move(inst));
  });
  Report(ctx, rule, std::move(instances),
         "layer norms decomposed into elementwise ops", out);
}

// Exact: x -> Div(x, sqrt 2) | Mul(x, 1/sqrt 2) -> Erf -> Add(1) ->
// Mul(x or x/2, .) [-> Mul(0.5)]. Tanh approximation: x -> Pow(x, 3) |
// Mul -> Mul(0.044715) -> Add(x, .) -> Mul(sqrt(2/pi)) -> Tanh -> Add(1) ->
// Mul [-> Mul].
void UnfusedGelu(const RuleContext& ctx, const RuleSpec& rule,
                 std::vector<Finding>* out) {
  const Model& m = ctx.model;
  auto instances = FindInstances(ctx, [&](NodeId core) {
    std::optional<Instance> none;
    std::string_view op = Op(m, core);
    if (op != "Erf" && op != "Tanh") return none;
    std::vector<NodeId> before;
    NodeId scaled = ProducerOf(m, Input(m, core, 0));
    if (!scaled.valid() || !OpIn(Op(m, scaled), {"Div", "Mul"}) ||
        SoleConsumer(m, Output0(m, scaled)) != core) {
      return none;
    }
    ValueId x = Input(m, scaled, 0);
    if (op == "Tanh") {
      // scaled = Mul(inner, c); inner = Add(x, Mul(Pow(x, 3), k)).
      NodeId inner = ProducerOf(m, Input(m, scaled, 0));
      if (!inner.valid() || !OpIn(Op(m, inner), kAddOps)) return none;
      // inner = Add(x, Mul(Pow(x, 3) | Mul(x, x * x), k)), either order.
      NodeId cubic_scaled = NodeId::Invalid(), cube = NodeId::Invalid();
      auto inner_in = m.node_inputs(inner);
      for (size_t k = 0; k < inner_in.size() && inner_in.size() == 2; ++k) {
        ValueId candidate_x = inner_in[k];
        NodeId p = ProducerOf(m, inner_in[1 - k]);
        if (!p.valid() || Op(m, p) != "Mul") continue;
        NodeId c = ProducerOf(m, Input(m, p, 0));
        if (c.valid() && OpIn(Op(m, c), {"Pow", "Mul"}) &&
            Input(m, c, 0) == candidate_x) {
          cubic_scaled = p;
          cube = c;
          x = candidate_x;
          break;
        }
      }
      if (!cubic_scaled.valid()) return none;
      before.push_back(cube);
      before.push_back(cubic_scaled);
      before.push_back(inner);
    }
    before.push_back(scaled);
    NodeId plus_one = SoleConsumer(m, Output0(m, core));
    if (!plus_one.valid() || !OpIn(Op(m, plus_one), kAddOps)) return none;
    NodeId product = SoleConsumer(m, Output0(m, plus_one));
    if (!product.valid() || Op(m, product) != "Mul") return none;
    Instance inst;
    inst.nodes = before;
    inst.nodes.push_back(core);
    inst.nodes.push_back(plus_one);
    // The other factor: x itself, or x * 0.5 computed beforehand.
    ValueId other = OtherInput(m, product, Output0(m, plus_one));
    NodeId half = ProducerOf(m, other);
    if (other != x && half.valid() && Op(m, half) == "Mul" &&
        Reads(m, half, x) && SoleConsumer(m, other) == product) {
      inst.nodes.push_back(half);
    } else if (other != x) {
      return none;
    }
    inst.nodes.push_back(product);
    NodeId final_half = SoleConsumer(m, Output0(m, product));
    if (other == x && final_half.valid() && Op(m, final_half) == "Mul" &&
        IsConstant(m, OtherInput(m, final_half, Output0(m, product)))) {
      inst.nodes.push_back(final_half);
    }
    inst.shape = op == "Erf" ? "GELU (Erf)" : "GELU (tanh approximation)";
    inst.shape += ": " + ShapeOf(m, inst.nodes);
    return std::optional<Instance>(std::move(inst));
  });
  Report(ctx, rule, std::move(instances),
         "GELUs decomposed into elementwise ops", out);
}

void RedundantTransposeReshape(const RuleContext& ctx, const RuleSpec& rule,
                               std::vector<Finding>* out) {
  const Model& m = ctx.model;
  auto instances = FindInstances(ctx, [&](NodeId first) {
    std::optional<Instance> none;
    std::string_view op = Op(m, first);
    NodeId second = SoleConsumer(m, Output0(m, first));
    Instance inst;
    if (OpIn(op, kTransposeOps)) {
      auto p1 = Permutation(m, first);
      if (second.valid() && OpIn(Op(m, second), kTransposeOps) &&
          Input(m, second, 0) == Output0(m, first)) {
        auto p2 = Permutation(m, second);
        inst.nodes = {first, second};
        inst.shape = "Transpose -> Transpose (merge into one)";
        if (p1 && p2 && p1->size() == p2->size()) {
          std::vector<int64_t> composed(p1->size());
          bool valid = true;
          for (size_t i = 0; i < p2->size(); ++i) {
            int64_t j = (*p2)[i];
            if (j < 0 || j >= static_cast<int64_t>(p1->size())) {
              valid = false;
              break;
            }
            composed[i] = (*p1)[j];
          }
          if (valid && IsIdentity(composed)) {
            inst.shape = "Transpose -> Transpose (cancel out)";
          }
        }
        return std::optional<Instance>(std::move(inst));
      }
      if (p1 && IsIdentity(*p1)) {
        inst.nodes = {first};
        inst.shape = "Transpose (identity permutation)";
        return std::optional<Instance>(std::move(inst));
      }
      return none;
    }
    if (OpIn(op, kReshapeOps) && second.valid() &&
        OpIn(Op(m, second), kReshapeOps) &&
        Input(m, second, 0) == Output0(m, first)) {
      inst.nodes = {first, second};
      inst.shape =
          fmt::format("{} -> {} (merge into one Reshape)", op, Op(m, second));
      return std::optional<Instance>(std::move(inst));
    }
    return none;
  });
  Report(ctx, rule, std::move(instances),
         "redundant Transpose / Reshape occurrences", out);
}

void DynamicInputShape(const RuleContext& ctx, const RuleSpec& rule,
                       std::vector<Finding>* out) {
  const Model& m = ctx.model;
  struct DynamicInput {
    std::string type;
    std::vector<std::string> levels;
    std::vector<NodeId> consumers;
  };
  std::map<std::string, DynamicInput> inputs;  // by name: levels share inputs
  std::vector<std::string> order;
  for (LayerLevel level : {LayerLevel::kFramework, LayerLevel::kCompiled}) {
    for (GraphId g : m.RootGraphs(level)) {
      for (ValueId v : m.graph(g).inputs) {
        if (m.value_flags(v) & kValueInitializer) continue;
        bool dynamic = !m.value_has_shape(v);
        for (int64_t d : m.value_dims(v)) dynamic = dynamic || d < 0;
        if (!dynamic) continue;
        std::string name(m.str(m.value_name(v)));
        auto [it, added] = inputs.try_emplace(name);
        if (added) {
          order.push_back(name);
          it->second.type = m.FormatValueType(v);
        }
        it->second.levels.emplace_back(LayerLevelName(level));
        for (NodeId c : m.value_consumers(v)) it->second.consumers.push_back(c);
      }
    }
  }
  double threshold = ctx.options.Threshold(rule);
  if (inputs.empty() || static_cast<double>(inputs.size()) <= threshold) {
    return;
  }
  std::string list;
  Finding f;
  for (size_t i = 0; i < order.size(); ++i) {
    const DynamicInput& in = inputs[order[i]];
    std::string levels = Join(in.levels, ", ");
    if (i < 5) {
      list += fmt::format("{}'{}' {} ({})", i ? ", " : "", order[i], in.type,
                          levels);
    }
    for (NodeId c : in.consumers) {
      if (f.nodes.size() < kMaxEvidence &&
          std::find(f.nodes.begin(), f.nodes.end(), c) == f.nodes.end()) {
        f.nodes.push_back(c);
      }
    }
  }
  if (order.size() > 5) list += fmt::format(", {} more", order.size() - 5);
  f.rule_id = std::string(rule.id);
  f.severity = rule.severity;
  f.message = fmt::format(
      "{} graph input{} dynamic dimensions: {}; above the threshold of {}",
      order.size(), order.size() == 1 ? " has" : "s have", list, threshold);
  f.suggestion = std::string(rule.suggestion);
  out->push_back(std::move(f));
}

}  // namespace mi::analysis::diagnosis_internal
