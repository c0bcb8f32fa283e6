#include "analysis/validation/validation.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/validation/validation_internal.h"
#include "base/ids.h"
#include "model/model.h"

namespace mi::analysis {
namespace {

using validation_detail::Broadcast;
using validation_detail::Dims;
using validation_detail::IntAttr;
using validation_detail::IsBroadcastOp;
using validation_detail::IsDefaultDomain;
using validation_detail::Known;
using validation_detail::OneOf;
using validation_detail::Product;

constexpr RuleInfo kRules[] = {
    {"dangling_input", ValidationSeverity::kError,
     "a node reads a tensor that no node produces and that is neither a "
     "graph input nor an initializer"},
    {"dangling_output", ValidationSeverity::kError,
     "a graph output is produced by no node and is not a graph input or "
     "initializer"},
    {"cycle", ValidationSeverity::kError,
     "nodes depend on their own outputs (a graph must be acyclic)"},
    {"unused_output", ValidationSeverity::kWarning,
     "a node output is read by no node and is not a graph output"},
    {"broadcast", ValidationSeverity::kError,
     "element-wise inputs whose shapes do not broadcast (numpy rules)"},
    {"matmul_inner_dim", ValidationSeverity::kError,
     "MatMul: the last dim of A differs from the second-to-last of B"},
    {"gemm_inner_dim", ValidationSeverity::kError,
     "Gemm: K of A and K of B differ (transA/transB applied), or an operand "
     "is not rank 2"},
    {"concat_shape", ValidationSeverity::kError,
     "Concat: input ranks differ, the axis is out of range, or a dim other "
     "than the axis differs"},
    {"conv_channels", ValidationSeverity::kError,
     "Conv: input channels differ from weight channels x group, or the "
     "output channels are not divisible by group"},
    {"reshape_element_count", ValidationSeverity::kError,
     "Reshape: static input and output element counts differ"},
    {"dtype_mismatch", ValidationSeverity::kError,
     "inputs that the op requires to share one element type differ"},
    {"output_shape_mismatch", ValidationSeverity::kError,
     "the declared output shape contradicts the shape inferred from the "
     "inputs"},
};

const RuleInfo& Rule(std::string_view id) {
  for (const RuleInfo& r : kRules) {
    if (r.id == id) return r;
  }
  return kRules[0];
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ',';
    out += Known(dims[i]) ? std::to_string(dims[i]) : "?";
  }
  return out + "]";
}

class Validator {
 public:
  Validator(const Model& model, GraphId root, ValidationReport* report)
      : m_(model), root_(root), report_(report) {}

  void Run() {
    // Per-node scratch for the cycle check, sized once and reset per graph
    // (a model may hold thousands of subgraph bodies).
    indegree_.assign(m_.node_count(), 0);
    index_.assign(m_.node_count(), UINT32_MAX);
    done_.assign(m_.node_count(), false);
    reported_.assign(m_.node_count(), false);
    for (size_t g = 0; g < m_.graph_count(); ++g) {
      GraphId graph(static_cast<uint32_t>(g));
      if (m_.RootOf(graph) != root_) continue;
      ++report_->graphs;
      report_->nodes += static_cast<uint32_t>(m_.graph_nodes(graph).size());
      CheckStructure(graph);
      CheckCycles(graph);
      for (NodeId n : m_.graph_nodes(graph)) {
        if (IsDefaultDomain(m_.str(m_.node_domain(n)))) CheckOp(n);
      }
    }
    auto& f = report_->findings;
    std::stable_sort(f.begin(), f.end(), [](const auto& a, const auto& b) {
      if (a.severity != b.severity) return a.severity > b.severity;
      if (a.node.valid() != b.node.valid()) return a.node.valid();
      return a.node.value() < b.node.value();
    });
    for (const ValidationFinding& x : f) {
      (x.severity == ValidationSeverity::kError ? report_->errors
                                                : report_->warnings)++;
    }
  }

 private:
  std::string NodeText(NodeId n) const {
    return "'" + std::string(m_.str(m_.node_name(n))) + "' (" +
           std::string(m_.str(m_.node_op_type(n))) + ")";
  }
  std::string ValueText(ValueId v) const {
    return "'" + std::string(m_.str(m_.value_name(v))) + "' " +
           m_.FormatValueType(v);
  }
  void Add(std::string_view rule, GraphId graph, NodeId node,
           std::vector<ValueId> values, std::string message) {
    const RuleInfo& info = Rule(rule);
    // Omitted optional inputs are invalid ids: nothing to show.
    values.erase(std::remove_if(values.begin(), values.end(),
                                [](ValueId v) { return !v.valid(); }),
                 values.end());
    report_->findings.push_back({info.id, info.severity, graph, node,
                                 std::move(values), std::move(message)});
  }

  bool HasOrigin(ValueId v) const {
    return m_.value_producer(v).valid() ||
           (m_.value_flags(v) & (kValueGraphInput | kValueInitializer)) != 0;
  }

  void CheckStructure(GraphId graph) {
    for (NodeId n : m_.graph_nodes(graph)) {
      for (ValueId v : m_.node_inputs(n)) {
        if (v.valid() && !HasOrigin(v)) {
          Add("dangling_input", graph, n, {v},
              NodeText(n) + " reads '" + std::string(m_.str(m_.value_name(v))) +
                  "', which no node produces and which is neither a graph "
                  "input nor an initializer");
        }
      }
      for (ValueId v : m_.node_outputs(n)) {
        if (v.valid() && m_.value_consumers(v).empty() &&
            !(m_.value_flags(v) & kValueGraphOutput)) {
          Add("unused_output", graph, n, {v},
              "output " + ValueText(v) + " of " + NodeText(n) +
                  " is read by no node and is not a graph output");
        }
      }
    }
    for (ValueId v : m_.graph(graph).outputs) {
      if (v.valid() && !HasOrigin(v)) {
        Add("dangling_output", graph, NodeId::Invalid(), {v},
            "graph output '" + std::string(m_.str(m_.value_name(v))) +
                "' is produced by no node");
      }
    }
  }

  // The node of `graph` that `node` lies in (itself or the owner of the
  // body it lies in); invalid when outside `graph`.
  NodeId NodeIn(NodeId node, GraphId graph) const {
    for (int depth = 0; node.valid() && depth < 256; ++depth) {
      GraphId g = m_.node_graph(node);
      if (g == graph) return node;
      node = m_.graph(g).parent_node;
    }
    return NodeId::Invalid();
  }

  void CheckCycles(GraphId graph) {
    std::span<const NodeId> nodes = m_.graph_nodes(graph);
    std::vector<uint32_t>& indegree = indegree_;
    std::vector<uint32_t>& index = index_;
    std::vector<bool>& done = done_;
    std::vector<bool>& reported = reported_;
    for (NodeId n : nodes) {
      indegree[n.value()] = 0;
      done[n.value()] = false;
      reported[n.value()] = false;
    }
    std::vector<std::vector<NodeId>> successors(nodes.size());
    for (uint32_t i = 0; i < nodes.size(); ++i) index[nodes[i].value()] = i;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      for (ValueId v : m_.node_outputs(nodes[i])) {
        if (!v.valid()) continue;
        for (NodeId c : m_.value_consumers(v)) {
          NodeId in = NodeIn(c, graph);
          if (!in.valid()) continue;
          successors[i].push_back(in);
          ++indegree[in.value()];
        }
      }
    }
    std::vector<NodeId> ready;
    for (NodeId n : nodes) {
      if (indegree[n.value()] == 0) ready.push_back(n);
    }
    while (!ready.empty()) {
      NodeId n = ready.back();
      ready.pop_back();
      done[n.value()] = true;
      for (NodeId s : successors[index[n.value()]]) {
        if (--indegree[s.value()] == 0) ready.push_back(s);
      }
    }
    // Each node left lies on a cycle or downstream of one: walk back along
    // producers that are left until a node repeats; that loop is a cycle.
    for (NodeId start : nodes) {
      if (done[start.value()] || reported[start.value()]) continue;
      std::vector<NodeId> walk;
      std::vector<ValueId> via;
      std::unordered_set<uint32_t> seen;
      NodeId n = start;
      while (n.valid() && !seen.count(n.value())) {
        seen.insert(n.value());
        walk.push_back(n);
        NodeId next = NodeId::Invalid();
        for (ValueId v : m_.node_inputs(n)) {
          if (!v.valid()) continue;
          NodeId p = NodeIn(m_.value_producer(v), graph);
          if (p.valid() && !done[p.value()]) {
            next = p;
            via.push_back(v);
            break;
          }
        }
        n = next;
      }
      if (!n.valid()) continue;
      auto first = std::find(walk.begin(), walk.end(), n);
      std::vector<NodeId> cycle(first, walk.end());
      if (std::any_of(cycle.begin(), cycle.end(),
                      [&](NodeId c) { return reported[c.value()]; })) {
        continue;
      }
      std::vector<ValueId> values(via.begin() + (first - walk.begin()),
                                  via.end());
      // We walked against the data flow; say it along the flow.
      std::reverse(cycle.begin(), cycle.end());
      std::reverse(values.begin(), values.end());
      // Start at the node that comes first in the file.
      size_t first_in_file = static_cast<size_t>(
          std::min_element(cycle.begin(), cycle.end()) - cycle.begin());
      std::rotate(cycle.begin(), cycle.begin() + first_in_file, cycle.end());
      if (values.size() == cycle.size()) {
        std::rotate(values.begin(), values.begin() + first_in_file,
                    values.end());
      }
      std::string text;
      for (NodeId c : cycle) {
        reported[c.value()] = true;
        text += NodeText(c) + " -> ";
      }
      text += NodeText(cycle.front());
      Add("cycle", graph, cycle.front(), std::move(values),
          "the graph has a cycle: " + text);
    }
  }

  void CheckOp(NodeId n) {
    std::string_view op = m_.str(m_.node_op_type(n));
    std::span<const ValueId> in = m_.node_inputs(n);
    GraphId g = m_.node_graph(n);
    size_t before = report_->findings.size();

    // dtype: inputs that must share one element type.
    std::vector<ValueId> same_type;
    if (IsBroadcastOp(op) && op != "Pow" && op != "Where") {
      same_type.assign(in.begin(), in.end());
    } else if (op == "Where" && in.size() == 3) {
      same_type = {in[1], in[2]};
    } else if (OneOf(op, {"MatMul", "Gemm", "Concat", "Conv"})) {
      same_type.assign(in.begin(), in.end());
    }
    ValueId typed;
    for (ValueId v : same_type) {
      if (!v.valid() || m_.value_dtype(v) == 0) continue;
      if (!typed.valid()) {
        typed = v;
      } else if (m_.value_dtype(v) != m_.value_dtype(typed)) {
        Add("dtype_mismatch", g, n, {typed, v},
            NodeText(n) + " needs inputs of one element type; " +
                ValueText(typed) + " and " + ValueText(v) + " differ");
        break;
      }
    }

    if (IsBroadcastOp(op)) {
      std::vector<int64_t> shape;
      bool all = true;
      for (ValueId v : in) {
        auto dims = Dims(m_, v);
        if (!dims) {
          all = false;
          continue;
        }
        std::vector<int64_t> next;
        if (!Broadcast(shape, *dims, &next)) {
          std::vector<ValueId> values(in.begin(), in.end());
          std::string text;
          for (ValueId x : values) {
            if (x.valid()) text += (text.empty() ? "" : ", ") + ValueText(x);
          }
          Add("broadcast", g, n, values,
              NodeText(n) + ": input shapes do not broadcast: " + text);
          all = false;
          break;
        }
        shape = std::move(next);
      }
      (void)all;
    } else if (op == "MatMul" && in.size() == 2) {
      auto a = Dims(m_, in[0]);
      auto b = Dims(m_, in[1]);
      if (a && b && !a->empty() && !b->empty()) {
        int64_t ka = a->back();
        int64_t kb = b->size() == 1 ? (*b)[0] : (*b)[b->size() - 2];
        if (Known(ka) && Known(kb) && ka != kb) {
          Add("matmul_inner_dim", g, n, {in[0], in[1]},
              NodeText(n) + ": A " + ValueText(in[0]) +
                  " has K = " + std::to_string(ka) + " but B " +
                  ValueText(in[1]) + " has K = " + std::to_string(kb));
        } else if (a->size() > 2 && b->size() > 2) {
          std::vector<int64_t> batch_a(a->begin(), a->end() - 2);
          std::vector<int64_t> batch_b(b->begin(), b->end() - 2);
          std::vector<int64_t> out;
          if (!Broadcast(batch_a, batch_b, &out)) {
            Add("broadcast", g, n, {in[0], in[1]},
                NodeText(n) + ": batch dims do not broadcast: " +
                    ValueText(in[0]) + ", " + ValueText(in[1]));
          }
        }
      }
    } else if (op == "Gemm" && in.size() >= 2) {
      auto a = Dims(m_, in[0]);
      auto b = Dims(m_, in[1]);
      if (a && b) {
        bool trans_a = IntAttr(m_, n, "transA", 0) != 0;
        bool trans_b = IntAttr(m_, n, "transB", 0) != 0;
        if (a->size() != 2 || b->size() != 2) {
          Add("gemm_inner_dim", g, n, {in[0], in[1]},
              NodeText(n) + ": A and B must be rank 2, found " +
                  ValueText(in[0]) + " and " + ValueText(in[1]));
        } else {
          int64_t ka = trans_a ? (*a)[0] : (*a)[1];
          int64_t kb = trans_b ? (*b)[1] : (*b)[0];
          if (Known(ka) && Known(kb) && ka != kb) {
            Add("gemm_inner_dim", g, n, {in[0], in[1]},
                NodeText(n) + " (transA=" + std::to_string(trans_a) +
                    ", transB=" + std::to_string(trans_b) + "): A " +
                    ValueText(in[0]) + " has K = " + std::to_string(ka) +
                    " but B " + ValueText(in[1]) +
                    " has K = " + std::to_string(kb));
          }
        }
      }
    } else if (op == "Concat") {
      CheckConcat(n, in);
    } else if (op == "Conv" && in.size() >= 2) {
      auto x = Dims(m_, in[0]);
      auto w = Dims(m_, in[1]);
      int64_t group = IntAttr(m_, n, "group", 1);
      if (x && w && x->size() >= 2 && w->size() >= 2) {
        int64_t c = (*x)[1];
        int64_t cw = (*w)[1];
        int64_t mo = (*w)[0];
        if (x->size() != w->size()) {
          Add("conv_channels", g, n, {in[0], in[1]},
              NodeText(n) + ": input " + ValueText(in[0]) + " and weight " +
                  ValueText(in[1]) + " differ in rank");
        } else if (Known(c) && Known(cw) && group > 0 &&
                   static_cast<__int128>(c) !=
                       static_cast<__int128>(cw) * group) {
          Add("conv_channels", g, n, {in[0], in[1]},
              NodeText(n) + ": input " + ValueText(in[0]) + " has " +
                  std::to_string(c) + " channels but weight " +
                  ValueText(in[1]) + " expects " + std::to_string(cw) +
                  " x group " + std::to_string(group));
        } else if (Known(mo) && group > 0 && mo % group != 0) {
          Add("conv_channels", g, n, {in[1]},
              NodeText(n) + ": weight " + ValueText(in[1]) + " has " +
                  std::to_string(mo) +
                  " output channels, not divisible by group " +
                  std::to_string(group));
        }
      }
    } else if (op == "Reshape" && !in.empty() && !m_.node_outputs(n).empty()) {
      ValueId out = m_.node_outputs(n)[0];
      auto a = Dims(m_, in[0]);
      auto b = Dims(m_, out);
      if (a && b) {
        int64_t pa = Product(*a);
        int64_t pb = Product(*b);
        if (pa >= 0 && pb >= 0 && pa != pb) {
          Add("reshape_element_count", g, n, {in[0], out},
              NodeText(n) + ": input " + ValueText(in[0]) + " has " +
                  std::to_string(pa) + " elements but output " +
                  ValueText(out) + " has " + std::to_string(pb));
        }
      }
    }

    // Declared output shapes against our inference, when the inputs
    // themselves were consistent.
    if (report_->findings.size() != before) return;
    std::span<const ValueId> outs = m_.node_outputs(n);
    if (outs.empty() || !outs[0].valid()) return;
    auto declared = Dims(m_, outs[0]);
    if (!declared) return;
    InferredShape inferred = InferOutputShape(m_, n, 0);
    if (!inferred.has_shape) return;
    bool clash = inferred.dims.size() != declared->size();
    for (size_t i = 0; !clash && i < declared->size(); ++i) {
      clash = Known(inferred.dims[i]) && Known((*declared)[i]) &&
              inferred.dims[i] != (*declared)[i];
    }
    if (clash) {
      std::vector<ValueId> values(in.begin(), in.end());
      values.erase(std::remove_if(values.begin(), values.end(),
                                  [](ValueId v) { return !v.valid(); }),
                   values.end());
      std::string inputs;
      for (ValueId v : values) {
        inputs += (inputs.empty() ? "" : ", ") + ValueText(v);
      }
      values.push_back(outs[0]);
      Add("output_shape_mismatch", g, n, std::move(values),
          NodeText(n) + ": output " + ValueText(outs[0]) +
              " is declared, but the inputs (" + inputs + ") give " +
              DimsText(inferred.dims));
    }
  }

  void CheckConcat(NodeId n, std::span<const ValueId> in) {
    GraphId g = m_.node_graph(n);
    int64_t axis = IntAttr(m_, n, "axis", 0);
    ValueId first;
    std::optional<std::vector<int64_t>> ref;
    for (ValueId v : in) {
      auto dims = Dims(m_, v);
      if (!dims) continue;
      if (!ref) {
        ref = dims;
        first = v;
        int64_t rank = static_cast<int64_t>(dims->size());
        if (axis < -rank || axis >= rank) {
          Add("concat_shape", g, n, {v},
              NodeText(n) + ": axis " + std::to_string(axis) +
                  " is out of range for rank " + std::to_string(rank) +
                  " input " + ValueText(v));
          return;
        }
        if (axis < 0) axis += rank;
        continue;
      }
      if (dims->size() != ref->size()) {
        Add("concat_shape", g, n, {first, v},
            NodeText(n) + ": inputs differ in rank: " + ValueText(first) +
                " and " + ValueText(v));
        return;
      }
      for (size_t i = 0; i < dims->size(); ++i) {
        if (static_cast<int64_t>(i) == axis) continue;
        if (Known((*dims)[i]) && Known((*ref)[i]) && (*dims)[i] != (*ref)[i]) {
          Add("concat_shape", g, n, {first, v},
              NodeText(n) + ": concatenating on axis " + std::to_string(axis) +
                  ", dim " + std::to_string(i) +
                  " differs: " + ValueText(first) + " and " + ValueText(v));
          return;
        }
      }
    }
  }

  const Model& m_;
  GraphId root_;
  ValidationReport* report_;
  std::vector<uint32_t> indegree_, index_;
  std::vector<bool> done_, reported_;
};

}  // namespace

std::string_view ValidationSeverityName(ValidationSeverity severity) {
  return severity == ValidationSeverity::kError ? "error" : "warning";
}

std::span<const RuleInfo> ValidationRules() { return kRules; }

ValidationReport ValidateGraph(const Model& model, GraphId root) {
  ValidationReport report;
  report.root = root;
  Validator(model, root, &report).Run();
  return report;
}

}  // namespace mi::analysis
