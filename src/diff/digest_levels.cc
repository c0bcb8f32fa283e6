// The graph part of a run digest: each level root (framework, compiled) as
// a flat list of nodes with unique names, op types, attributes as canonical
// text, tensors, fused_from names and status, plus a structural fingerprint
// that ignores names (docs/design/diff.md, "Digest").

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "diff/diff_internal.h"
#include "linker/links.h"
#include "model/model.h"

namespace mi::diff {
namespace {

// FNV-1a, 64 bit: stable across platforms and releases (fingerprints are
// stored in the run history and compared between versions of the tool).
class Fnv64 {
 public:
  void Add(std::string_view s) {
    for (unsigned char c : s) {
      hash_ ^= c;
      hash_ *= 0x100000001b3ULL;
    }
    // A separator so that ("ab","c") and ("a","bc") differ.
    hash_ ^= 0xff;
    hash_ *= 0x100000001b3ULL;
  }
  void Add(int64_t v) { Add(std::string_view(fmt::format("{}", v))); }
  std::string Hex() const { return fmt::format("{:016x}", hash_); }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

std::string AttributeText(const Model& m, const Attribute& a) {
  switch (a.kind) {
    case AttributeKind::kInt:
      return fmt::format("{}", a.int_value);
    case AttributeKind::kFloat:
      return fmt::format("{}", a.float_value);
    case AttributeKind::kString: {
      // Quoted, so that the string "3" and the number 3 read differently.
      std::string out = "\"";
      out += m.str(a.text);
      out += '"';
      return out;
    }
    default:
      return std::string(m.str(a.text));
  }
}

DigestTensor TensorOf(const Model& m, ValueId v) {
  DigestTensor t;
  if (!v.valid()) return t;  // an omitted optional input keeps its place
  t.name = m.str(m.value_name(v));
  int32_t dtype = m.value_dtype(v);
  if (dtype != 0) t.dtype = DataTypeName(dtype);
  if (m.value_has_shape(v)) {
    t.has_shape = true;
    std::span<const int64_t> dims = m.value_dims(v);
    std::span<const StringId> names = m.value_dim_names(v);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] >= 0) {
        t.shape.push_back(fmt::format("{}", dims[i]));
      } else if (i < names.size() && names[i] != StringPool::kEmpty) {
        t.shape.emplace_back(m.str(names[i]));
      } else {
        t.shape.emplace_back("?");
      }
    }
  }
  t.layout = m.str(m.value_layout(v));
  return t;
}

// The nodes of one level root in graph order, each subgraph body's nodes
// right after the node that owns the body, with their digest names.
struct LevelNodes {
  std::vector<NodeId> nodes;
  std::vector<std::string> names;
};

LevelNodes CollectLevel(const Model& m, GraphId root) {
  // Bodies owned by each node (graph ids ascend in load order).
  std::unordered_map<uint32_t, std::vector<GraphId>> bodies;
  for (uint32_t g = 0; g < m.graph_count(); ++g) {
    const GraphInfo& info = m.graph(GraphId(g));
    if (info.parent_node.valid() && m.RootOf(GraphId(g)) == root) {
      bodies[info.parent_node.value()].push_back(GraphId(g));
    }
  }
  LevelNodes out;
  // Explicit stack: bodies nest as deep as the file says.
  struct Frame {
    GraphId graph;
    std::string prefix;  // "<owner>/<body>/" for bodies, "" at the root
    size_t next = 0;
  };
  std::vector<Frame> stack;
  stack.push_back({root, "", 0});
  while (!stack.empty()) {
    Frame& f = stack.back();
    std::span<const NodeId> nodes = m.graph_nodes(f.graph);
    if (f.next >= nodes.size()) {
      stack.pop_back();
      continue;
    }
    NodeId n = nodes[f.next++];
    std::string name = f.prefix + std::string(m.str(m.node_name(n)));
    out.nodes.push_back(n);
    out.names.push_back(name);
    auto it = bodies.find(n.value());
    if (it == bodies.end()) continue;
    // Push in reverse so the first body is walked first.
    std::vector<Frame> frames;
    for (GraphId body : it->second) {
      frames.push_back(
          {body, name + "/" + std::string(m.str(m.graph(body).name)) + "/", 0});
    }
    for (auto r = frames.rbegin(); r != frames.rend(); ++r) {
      stack.push_back(std::move(*r));
    }
  }
  // Unique names: a name already taken (files repeat names; unnamed nodes
  // are common) gets "#2", "#3", ... in graph order; an unnamed node is
  // named by its op type.
  std::unordered_set<std::string> taken;
  std::unordered_map<std::string, int> next_suffix;
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    std::string& name = out.names[i];
    if (name.empty() || name.back() == '/') {
      name += std::string(m.str(m.node_op_type(out.nodes[i])));
    }
    if (taken.insert(name).second) continue;
    int& k = next_suffix[name];
    if (k < 2) k = 2;
    std::string candidate;
    do {
      candidate = fmt::format("{}#{}", name, k++);
    } while (!taken.insert(candidate).second);
    name = std::move(candidate);
  }
  return out;
}

void AddTensorShape(Fnv64& h, const DigestTensor& t) {
  h.Add(t.dtype);
  if (!t.has_shape) {
    h.Add(std::string_view("noshape"));
    return;
  }
  h.Add(static_cast<int64_t>(t.shape.size()));
  for (const std::string& d : t.shape) h.Add(d);
  h.Add(t.layout);
}

// The fingerprint: per node in graph order its op type, domain, attributes
// and output types, and per input where it comes from (the producing node's
// position and output slot, a graph input's position, or a constant's
// type), never a name.
std::string Fingerprint(const Model& m, const LevelNodes& level,
                        const std::vector<DigestNode>& nodes) {
  std::unordered_map<uint32_t, int64_t> position;
  for (size_t i = 0; i < level.nodes.size(); ++i) {
    position[level.nodes[i].value()] = static_cast<int64_t>(i);
  }
  Fnv64 h;
  h.Add(static_cast<int64_t>(nodes.size()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const DigestNode& d = nodes[i];
    NodeId n = level.nodes[i];
    h.Add(d.op_type);
    h.Add(d.domain);
    for (const auto& [name, text] : d.attributes) {
      h.Add(name);
      // A subgraph attribute's text names the body graph: leave it out
      // (the body's nodes are hashed themselves).
      const bool names_graph =
          text.starts_with("graph ") || text.starts_with("graphs (");
      h.Add(names_graph ? std::string_view("<graph>") : std::string_view(text));
    }
    std::span<const ValueId> inputs = m.node_inputs(n);
    h.Add(static_cast<int64_t>(inputs.size()));
    for (size_t k = 0; k < inputs.size(); ++k) {
      ValueId v = inputs[k];
      if (!v.valid()) {
        h.Add(std::string_view("none"));
        continue;
      }
      NodeId producer = m.value_producer(v);
      auto p =
          producer.valid() ? position.find(producer.value()) : position.end();
      if (p != position.end()) {
        std::span<const ValueId> outs = m.node_outputs(producer);
        int64_t slot = 0;
        for (size_t s = 0; s < outs.size(); ++s) {
          if (outs[s] == v) slot = static_cast<int64_t>(s);
        }
        h.Add(std::string_view("node"));
        h.Add(p->second);
        h.Add(slot);
      } else {
        const GraphInfo& g = m.graph(m.value_graph(v));
        auto at = std::find(g.inputs.begin(), g.inputs.end(), v);
        if (at != g.inputs.end() && !(m.value_flags(v) & kValueInitializer)) {
          h.Add(std::string_view("input"));
          h.Add(static_cast<int64_t>(at - g.inputs.begin()));
        } else {
          h.Add(std::string_view("const"));
        }
      }
      AddTensorShape(h, d.inputs[k]);
    }
    h.Add(static_cast<int64_t>(d.outputs.size()));
    for (const DigestTensor& t : d.outputs) AddTensorShape(h, t);
  }
  return h.Hex();
}

DigestLevel DigestLevelOf(
    const Model& m, const Links* links, GraphId root,
    const std::unordered_map<uint32_t, std::string>& framework_names) {
  const GraphInfo& g = m.graph(root);
  DigestLevel out;
  out.level = std::string(LayerLevelName(g.level));
  out.source_file = m.str(g.source_file);
  out.producer = m.str(g.producer);
  LevelNodes level = CollectLevel(m, root);
  out.nodes.reserve(level.nodes.size());
  for (size_t i = 0; i < level.nodes.size(); ++i) {
    NodeId n = level.nodes[i];
    DigestNode d;
    d.node_id = n.value();
    d.name = level.names[i];
    d.op_type = m.str(m.node_op_type(n));
    d.domain = m.str(m.node_domain(n));
    ScopeId scope = m.node_scope(n);
    if (scope.valid()) d.scope = m.str(m.scope_path(scope));
    for (const Attribute& a : m.node_attributes(n)) {
      d.attributes.emplace_back(std::string(m.str(a.name)),
                                AttributeText(m, a));
    }
    std::stable_sort(
        d.attributes.begin(), d.attributes.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    for (ValueId v : m.node_inputs(n)) d.inputs.push_back(TensorOf(m, v));
    for (ValueId v : m.node_outputs(n)) d.outputs.push_back(TensorOf(m, v));
    if (links != nullptr) {
      for (NodeId f : links->fused_from.Get(n)) {
        auto it = framework_names.find(f.value());
        d.fused_from.push_back(it != framework_names.end()
                                   ? it->second
                                   : std::string(m.str(m.node_name(f))));
      }
      std::sort(d.fused_from.begin(), d.fused_from.end());
      d.fused_from.erase(std::unique(d.fused_from.begin(), d.fused_from.end()),
                         d.fused_from.end());
      if (n.value() < links->status.size()) {
        d.status = NodeStatusName(links->status[n.value()]);
      }
    }
    out.nodes.push_back(std::move(d));
  }
  out.fingerprint = Fingerprint(m, level, out.nodes);
  return out;
}

}  // namespace

void DigestLevels(const analysis::AnalysisContext& run, RunDigest* digest) {
  if (run.model == nullptr) return;
  const Model& m = *run.model;
  // Framework digest names, for the compiled nodes' fused_from.
  std::unordered_map<uint32_t, std::string> framework_names;
  if (run.framework.valid()) {
    DigestLevel framework =
        DigestLevelOf(m, run.links, run.framework, framework_names);
    for (const DigestNode& d : framework.nodes) {
      framework_names.emplace(static_cast<uint32_t>(d.node_id), d.name);
    }
    digest->levels.push_back(std::move(framework));
  }
  if (run.compiled.valid()) {
    digest->levels.push_back(
        DigestLevelOf(m, run.links, run.compiled, framework_names));
  }
}

}  // namespace mi::diff
