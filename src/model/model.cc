#include "model/model.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/check.h"

namespace mi {

std::string_view LayerLevelName(LayerLevel level) {
  return level == LayerLevel::kFramework ? "framework" : "compiled";
}

std::string_view NodeStatusName(NodeStatus status) {
  switch (status) {
    case NodeStatus::kUnknown:
      return "unknown";
    case NodeStatus::kExecuted:
      return "executed";
    case NodeStatus::kFused:
      return "fused";
    case NodeStatus::kNotExecuted:
      return "not_executed";
    case NodeStatus::kInserted:
      return "inserted";
  }
  return "unknown";
}

std::string_view AttributeKindName(AttributeKind kind) {
  switch (kind) {
    case AttributeKind::kUndefined:
      return "undefined";
    case AttributeKind::kFloat:
      return "float";
    case AttributeKind::kInt:
      return "int";
    case AttributeKind::kString:
      return "string";
    case AttributeKind::kTensor:
      return "tensor";
    case AttributeKind::kGraph:
      return "graph";
    case AttributeKind::kFloats:
      return "floats";
    case AttributeKind::kInts:
      return "ints";
    case AttributeKind::kStrings:
      return "strings";
    case AttributeKind::kTensors:
      return "tensors";
    case AttributeKind::kGraphs:
      return "graphs";
    case AttributeKind::kSparseTensor:
      return "sparse_tensor";
    case AttributeKind::kTypeProto:
      return "type_proto";
    case AttributeKind::kOther:
      return "other";
  }
  return "other";
}

std::string_view DataTypeName(int32_t dtype) {
  switch (dtype) {
    case 1:
      return "float32";
    case 2:
      return "uint8";
    case 3:
      return "int8";
    case 4:
      return "uint16";
    case 5:
      return "int16";
    case 6:
      return "int32";
    case 7:
      return "int64";
    case 8:
      return "string";
    case 9:
      return "bool";
    case 10:
      return "float16";
    case 11:
      return "float64";
    case 12:
      return "uint32";
    case 13:
      return "uint64";
    case 14:
      return "complex64";
    case 15:
      return "complex128";
    case 16:
      return "bfloat16";
    case 17:
      return "float8e4m3fn";
    case 18:
      return "float8e4m3fnuz";
    case 19:
      return "float8e5m2";
    case 20:
      return "float8e5m2fnuz";
    case 21:
      return "uint4";
    case 22:
      return "int4";
    default:
      return "?";
  }
}

uint32_t DataTypeSize(int32_t dtype) {
  switch (dtype) {
    case 2:
    case 3:
    case 9:
    case 17:
    case 18:
    case 19:
    case 20:
      return 1;
    case 4:
    case 5:
    case 10:
    case 16:
      return 2;
    case 1:
    case 6:
    case 12:
      return 4;
    case 7:
    case 11:
    case 13:
    case 14:
      return 8;
    case 15:
      return 16;
    default:
      return 0;
  }
}

GraphId Model::AddGraph(LayerLevel level, std::string_view name,
                        std::string_view source_file, GraphId parent_graph,
                        NodeId parent_node) {
  GraphId id(static_cast<uint32_t>(graphs_.size()));
  GraphInfo info;
  info.level = level;
  info.name = strings_->Intern(name);
  info.source_file = strings_->Intern(source_file);
  info.parent_graph = parent_graph;
  info.parent_node = parent_node;
  graphs_.push_back(std::move(info));
  graph_nodes_.emplace_back();
  // Every graph has a root scope (empty path) so each node has a scope.
  InternScope(id, ScopeId::Invalid(), "", "");
  return id;
}

std::vector<GraphId> Model::RootGraphs(LayerLevel level) const {
  std::vector<GraphId> out;
  for (uint32_t i = 0; i < graphs_.size(); ++i) {
    if (!graphs_[i].parent_graph.valid() && graphs_[i].level == level) {
      out.push_back(GraphId(i));
    }
  }
  return out;
}

GraphId Model::RootOf(GraphId graph) const {
  while (graphs_[graph.value()].parent_graph.valid()) {
    graph = graphs_[graph.value()].parent_graph;
  }
  return graph;
}

void Model::SetLevel(GraphId root, LayerLevel level) {
  for (uint32_t i = 0; i < graphs_.size(); ++i) {
    if (RootOf(GraphId(i)) == root) graphs_[i].level = level;
  }
}

ValueId Model::GetOrAddValue(GraphId graph, std::string_view name) {
  StringId name_id = strings_->Intern(name);
  uint64_t key = Key(graph.value(), name_id.value());
  if (const ValueId* found = value_by_name_.Find(key)) return *found;
  ValueId id(static_cast<uint32_t>(value_graph_.size()));
  value_graph_.push_back(graph);
  value_name_.push_back(name_id);
  value_dtype_.push_back(0);
  value_flags_.push_back(0);
  value_has_shape_.push_back(false);
  value_producer_.push_back(NodeId::Invalid());
  value_shape_begin_.push_back(0);
  value_shape_size_.push_back(0);
  value_data_bytes_.push_back(0);
  value_external_location_.push_back(StringPool::kEmpty);
  value_layout_.push_back(StringPool::kEmpty);
  value_origin_layout_.push_back(StringPool::kEmpty);
  value_origin_shape_.push_back(StringPool::kEmpty);
  value_by_name_.Emplace(key, id);
  return id;
}

ValueId Model::FindValue(GraphId graph, std::string_view name) const {
  StringId name_id = strings_->Find(name);
  if (!name_id.valid()) return ValueId::Invalid();
  const ValueId* found =
      value_by_name_.Find(Key(graph.value(), name_id.value()));
  return found == nullptr ? ValueId::Invalid() : *found;
}

ValueId Model::ResolveValue(GraphId graph, std::string_view name) const {
  for (GraphId g = graph; g.valid(); g = graphs_[g.value()].parent_graph) {
    ValueId v = FindValue(g, name);
    if (v.valid()) return v;
  }
  return ValueId::Invalid();
}

void Model::SetValueShape(ValueId v, std::span<const int64_t> dims,
                          std::span<const StringId> dim_names) {
  MI_CHECK(dims.size() == dim_names.size());
  value_has_shape_[v.value()] = true;
  if (dims.size() <= value_shape_size_[v.value()]) {
    // Overwrite in place (a shape set twice: value_info, then inference).
    std::copy(dims.begin(), dims.end(),
              dims_.begin() + value_shape_begin_[v.value()]);
    std::copy(dim_names.begin(), dim_names.end(),
              dim_names_.begin() + value_shape_begin_[v.value()]);
  } else {
    value_shape_begin_[v.value()] = static_cast<uint32_t>(dims_.size());
    dims_.insert(dims_.end(), dims.begin(), dims.end());
    dim_names_.insert(dim_names_.end(), dim_names.begin(), dim_names.end());
  }
  value_shape_size_[v.value()] = static_cast<uint32_t>(dims.size());
}

std::string Model::FormatValueType(ValueId v) const {
  std::string out(DataTypeName(value_dtype(v)));
  if (!value_has_shape(v)) return out;
  out.push_back('[');
  const auto& dims = value_dims(v);
  const auto& names = value_dim_names(v);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out.push_back(',');
    if (dims[i] >= 0) {
      out += std::to_string(dims[i]);
    } else if (names[i] != StringPool::kEmpty) {
      out += str(names[i]);
    } else {
      out.push_back('?');
    }
  }
  out.push_back(']');
  return out;
}

std::span<const NodeId> Model::value_consumers(ValueId v) const {
  if (v.value() + 1 >= consumer_begin_.size()) return {};
  uint32_t b = consumer_begin_[v.value()];
  uint32_t e = consumer_begin_[v.value() + 1];
  return std::span<const NodeId>(consumers_.data() + b, e - b);
}

NodeId Model::AddNode(GraphId graph, std::string_view op_type,
                      std::string_view domain, std::string_view name) {
  NodeId id(static_cast<uint32_t>(node_graph_.size()));
  node_graph_.push_back(graph);
  node_op_type_.push_back(strings_->Intern(op_type));
  node_domain_.push_back(strings_->Intern(domain));
  StringId name_id = strings_->Intern(name);
  node_name_.push_back(name_id);
  node_scope_.push_back(ScopeId::Invalid());
  input_begin_.push_back(static_cast<uint32_t>(inputs_.size()));
  output_begin_.push_back(static_cast<uint32_t>(outputs_.size()));
  attribute_begin_.push_back(static_cast<uint32_t>(attributes_.size()));
  origin_begin_.push_back(static_cast<uint32_t>(origin_names_.size()));
  graph_nodes_[graph.value()].push_back(id);
  if (!name.empty()) {
    // Repeated names (allowed by ONNX for subgraphs) are recorded: lookups
    // by such a name find every node, never just the first.
    uint64_t key = Key(RootOf(graph).value(), name_id.value());
    auto [first, added] = node_by_name_.Emplace(key, id);
    if (!added) {
      repeated_names_.Emplace(
          key, static_cast<uint32_t>(duplicate_node_names_.size()));
      duplicate_node_names_.emplace_back(*first, id);
    }
  }
  return id;
}

void Model::AddNodeInput(NodeId node, ValueId value) {
  MI_DCHECK(node.value() + 1 == node_graph_.size());
  (void)node;
  inputs_.push_back(value);
}

void Model::AddNodeOutput(NodeId node, ValueId value) {
  MI_DCHECK(node.value() + 1 == node_graph_.size());
  outputs_.push_back(value);
  if (value.valid() && !value_producer_[value.value()].valid()) {
    value_producer_[value.value()] = node;
  }
}

void Model::AddNodeAttribute(NodeId node, const Attribute& attr) {
  MI_DCHECK(node.value() + 1 == node_graph_.size());
  (void)node;
  attributes_.push_back(attr);
}

void Model::AddNodeOriginName(NodeId node, StringId name) {
  MI_DCHECK(node.value() + 1 == node_graph_.size());
  (void)node;
  origin_names_.push_back(name);
}

NodeId Model::FindNode(GraphId root, std::string_view name) const {
  StringId name_id = strings_->Find(name);
  if (!name_id.valid()) return NodeId::Invalid();
  uint64_t key = Key(root.value(), name_id.value());
  const NodeId* found = node_by_name_.Find(key);
  if (found == nullptr || repeated_names_.Find(key) != nullptr) {
    return NodeId::Invalid();
  }
  return *found;
}

std::vector<NodeId> Model::FindNodes(GraphId root,
                                     std::string_view name) const {
  std::vector<NodeId> out;
  StringId name_id = strings_->Find(name);
  if (!name_id.valid()) return out;
  uint64_t key = Key(root.value(), name_id.value());
  const NodeId* found = node_by_name_.Find(key);
  if (found == nullptr) return out;
  out.push_back(*found);
  if (const uint32_t* first = repeated_names_.Find(key)) {
    for (size_t i = *first; i < duplicate_node_names_.size(); ++i) {
      if (duplicate_node_names_[i].first == *found) {
        out.push_back(duplicate_node_names_[i].second);
      }
    }
  }
  return out;
}

ScopeId Model::InternScope(GraphId graph, ScopeId parent,
                           std::string_view segment, std::string_view path) {
  StringId path_id = strings_->Intern(path);
  uint64_t key = Key(graph.value(), path_id.value());
  if (const ScopeId* found = scope_by_path_.Find(key)) return *found;
  ScopeId id(static_cast<uint32_t>(scope_parent_.size()));
  scope_parent_.push_back(parent);
  scope_name_.push_back(strings_->Intern(segment));
  scope_path_.push_back(path_id);
  scope_graph_.push_back(graph);
  scope_by_path_.Emplace(key, id);
  return id;
}

void Model::AssignScopesFromNames(GraphId graph, char separator) {
  ScopeId root = InternScope(graph, ScopeId::Invalid(), "", "");
  // Consecutive nodes mostly share their scope path or a prefix of it: the
  // scopes of the previous node's path prefixes are kept on a stack (ends
  // of the prefixes in `prev`, a view into the pool's stable storage), and
  // only the segments after the common prefix are looked up. InternScope
  // finds a known (graph, path) scope, so no separate cache is needed.
  std::string_view prev;
  std::vector<std::pair<size_t, ScopeId>> stack;
  for (NodeId n : graph_nodes_[graph.value()]) {
    std::string_view name = str(node_name_[n.value()]);
    size_t last = name.rfind(separator);
    if (last == std::string_view::npos || last == 0) {
      node_scope_[n.value()] = root;
      continue;
    }
    std::string_view path = name.substr(0, last);
    if (!stack.empty() && path == prev) {
      node_scope_[n.value()] = stack.back().second;
      continue;
    }
    size_t keep = 0;
    while (keep < stack.size()) {
      size_t begin = keep == 0 ? 0 : stack[keep - 1].first;
      size_t end = stack[keep].first;
      if (end > path.size() || (end < path.size() && path[end] != separator) ||
          path.compare(begin, end - begin, prev, begin, end - begin) != 0) {
        break;
      }
      ++keep;
    }
    stack.resize(keep);
    // Walk "/a/b/c/Op" -> scopes "/a", "/a/b", "/a/b/c".
    ScopeId parent = keep == 0 ? root : stack.back().second;
    size_t pos =
        keep == 0 ? (name[0] == separator ? 1 : 0) : stack.back().first + 1;
    while (pos < last) {
      size_t next = name.find(separator, pos);
      if (next == std::string_view::npos || next > last) next = last;
      if (next > pos) {
        parent = InternScope(graph, parent, name.substr(pos, next - pos),
                             name.substr(0, next));
        stack.emplace_back(next, parent);
      }
      pos = next + 1;
    }
    node_scope_[n.value()] = parent;
    prev = path;
  }
}

void Model::BuildIndexes() {
  size_t nv = value_graph_.size();
  std::vector<uint32_t> counts(nv + 1, 0);
  for (ValueId v : inputs_) {
    if (v.valid()) ++counts[v.value() + 1];
  }
  consumer_begin_.assign(nv + 1, 0);
  for (size_t i = 0; i < nv; ++i) {
    consumer_begin_[i + 1] = consumer_begin_[i] + counts[i + 1];
  }
  consumers_.assign(consumer_begin_[nv], NodeId::Invalid());
  std::vector<uint32_t> fill(consumer_begin_.begin(), consumer_begin_.end());
  for (uint32_t n = 0; n < node_graph_.size(); ++n) {
    for (ValueId v : node_inputs(NodeId(n))) {
      if (!v.valid()) continue;
      consumers_[fill[v.value()]++] = NodeId(n);
    }
  }
}

size_t Model::MemoryUsage() const {
  size_t bytes = 0;
  bytes += node_graph_.capacity() * (sizeof(GraphId) + 4 * sizeof(StringId));
  bytes += (inputs_.capacity() + outputs_.capacity()) * sizeof(ValueId);
  bytes += attributes_.capacity() * sizeof(Attribute);
  bytes += value_graph_.capacity() *
           (sizeof(GraphId) + sizeof(StringId) + 4 + 1 + sizeof(NodeId) + 8 +
            sizeof(StringId) + 2 * sizeof(uint32_t));
  bytes += dims_.capacity() * (sizeof(int64_t) + sizeof(StringId));
  bytes +=
      value_by_name_.MemoryUsage() + node_by_name_.MemoryUsage() +
      repeated_names_.MemoryUsage() +
      duplicate_node_names_.capacity() * sizeof(std::pair<NodeId, NodeId>) +
      scope_by_path_.MemoryUsage();
  return bytes;
}

}  // namespace mi
