#pragma once

// The graph data model: every graph level (framework, compiled, nested
// subgraphs of If/Loop/Scan) lives in one Model so that node ids form one id
// space. Tables are struct-of-arrays with interned strings; variable-length
// lists (inputs, outputs, attributes, dims) are CSR ranges appended in node
// order, so a node's lists must be added before the next node is created.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/ids.h"
#include "base/string_pool.h"
#include "base/u64_map.h"

namespace mi {

enum class LayerLevel : uint8_t { kFramework, kCompiled };
std::string_view LayerLevelName(LayerLevel level);  // "framework"|"compiled"

// Per-node execution status, set by the linker.
enum class NodeStatus : uint8_t {
  kUnknown,      // no trace loaded
  kExecuted,     // has tasks of its own
  kFused,        // its work runs inside another node's task
  kNotExecuted,  // no task (other branch ran, folded, removed)
  kInserted,     // added by the compiler (layout convert, cast, copy)
};
std::string_view NodeStatusName(NodeStatus status);

enum class AttributeKind : uint8_t {
  kUndefined,
  kFloat,
  kInt,
  kString,
  kTensor,
  kGraph,
  kFloats,
  kInts,
  kStrings,
  kTensors,
  kGraphs,
  kSparseTensor,
  kTypeProto,
  kOther
};
std::string_view AttributeKindName(AttributeKind kind);

struct Attribute {
  StringId name = StringPool::kEmpty;
  AttributeKind kind = AttributeKind::kUndefined;
  int64_t int_value = 0;   // kInt
  double float_value = 0;  // kFloat
  // display form: strings, lists, tensor summary
  StringId text = StringPool::kEmpty;
  GraphId subgraph;  // kGraph (first graph for kGraphs)
};

// Element types use ONNX's TensorProto.DataType numbering (0 = undefined),
// the lingua franca of every format we read.
std::string_view DataTypeName(int32_t dtype);  // "float32", "int64", ...
// Bytes per element, 0 when unknown or sub-byte.
uint32_t DataTypeSize(int32_t dtype);

struct GraphInfo {
  LayerLevel level = LayerLevel::kFramework;
  StringId name = StringPool::kEmpty;
  StringId source_file = StringPool::kEmpty;
  // e.g. "pytorch 1.13.1"
  StringId producer = StringPool::kEmpty;
  GraphId parent_graph;  // for nested subgraphs
  NodeId parent_node;    // the If/Loop/Scan node owning this body
  int64_t opset = 0;     // default-domain opset
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::vector<std::pair<StringId, int64_t>> opset_imports;  // domain, version
  // What the file says of the model beyond the graph, as key / value text
  // (a GE model's name, version and scalar model attributes).
  std::vector<std::pair<StringId, StringId>> metadata;
};

enum ValueFlags : uint8_t {
  kValueGraphInput = 1 << 0,
  kValueGraphOutput = 1 << 1,
  kValueInitializer = 1 << 2,
  kValueExternalData = 1 << 3,
};

class Model {
 public:
  Model() = default;
  explicit Model(StringPool* strings) : strings_(strings) {}
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&&) = default;
  Model& operator=(Model&&) = default;

  StringPool& strings() const { return *strings_; }
  std::string_view str(StringId id) const { return strings_->Get(id); }

  // ---- graphs ----
  GraphId AddGraph(LayerLevel level, std::string_view name,
                   std::string_view source_file,
                   GraphId parent_graph = GraphId::Invalid(),
                   NodeId parent_node = NodeId::Invalid());
  size_t graph_count() const { return graphs_.size(); }
  const GraphInfo& graph(GraphId id) const { return graphs_[id.value()]; }
  GraphInfo& mutable_graph(GraphId id) { return graphs_[id.value()]; }
  // Top-level graphs (no parent) of a level, in load order.
  std::vector<GraphId> RootGraphs(LayerLevel level) const;
  // The top-level graph a (possibly nested) graph belongs to.
  GraphId RootOf(GraphId graph) const;
  // Changes the level of a root graph and all graphs nested in it.
  void SetLevel(GraphId root, LayerLevel level);

  // ---- values (tensors / edges) ----
  // Finds or creates the value `name` in `graph` (not its parents).
  ValueId GetOrAddValue(GraphId graph, std::string_view name);
  // Finds `name` in `graph`, then in its enclosing graphs (outer-scope
  // references of subgraph bodies). Invalid when absent.
  ValueId ResolveValue(GraphId graph, std::string_view name) const;
  ValueId FindValue(GraphId graph, std::string_view name) const;
  size_t value_count() const { return value_graph_.size(); }
  GraphId value_graph(ValueId v) const { return value_graph_[v.value()]; }
  StringId value_name(ValueId v) const { return value_name_[v.value()]; }
  int32_t value_dtype(ValueId v) const { return value_dtype_[v.value()]; }
  uint8_t value_flags(ValueId v) const { return value_flags_[v.value()]; }
  NodeId value_producer(ValueId v) const { return value_producer_[v.value()]; }
  // Rank, or -1 when the shape is unknown.
  int32_t value_rank(ValueId v) const {
    return value_has_shape_[v.value()]
               ? static_cast<int32_t>(value_shape_size_[v.value()])
               : -1;
  }
  bool value_has_shape(ValueId v) const { return value_has_shape_[v.value()]; }
  // Dims; -1 for a symbolic or unknown dim (its name in value_dim_names).
  std::span<const int64_t> value_dims(ValueId v) const {
    return std::span<const int64_t>(
        dims_.data() + value_shape_begin_[v.value()],
        value_shape_size_[v.value()]);
  }
  std::span<const StringId> value_dim_names(ValueId v) const {
    return std::span<const StringId>(
        dim_names_.data() + value_shape_begin_[v.value()],
        value_shape_size_[v.value()]);
  }
  uint64_t value_data_bytes(ValueId v) const {
    return value_data_bytes_[v.value()];
  }
  StringId value_external_location(ValueId v) const {
    return value_external_location_[v.value()];
  }
  // Memory layout of the tensor as the compiler stores it ("NC1HWC0",
  // "FRACTAL_Z", "NCHW"; empty when the format does not say) and the layout
  // and shape the framework gave it (Ascend: origin_format, origin_shape),
  // because layout conversions are a top performance question there.
  StringId value_layout(ValueId v) const { return value_layout_[v.value()]; }
  StringId value_origin_layout(ValueId v) const {
    return value_origin_layout_[v.value()];
  }
  StringId value_origin_shape(ValueId v) const {
    return value_origin_shape_[v.value()];
  }
  void SetValueLayout(ValueId v, StringId layout, StringId origin_layout,
                      StringId origin_shape) {
    value_layout_[v.value()] = layout;
    value_origin_layout_[v.value()] = origin_layout;
    value_origin_shape_[v.value()] = origin_shape;
  }
  void SetValueType(ValueId v, int32_t dtype) {
    value_dtype_[v.value()] = dtype;
  }
  // Dims and dim names (same length) are copied into shared pools: no
  // allocation per value.
  void SetValueShape(ValueId v, std::span<const int64_t> dims,
                     std::span<const StringId> dim_names);
  void AddValueFlags(ValueId v, uint8_t flags) {
    value_flags_[v.value()] |= flags;
  }
  void SetValueData(ValueId v, uint64_t bytes, StringId external_location) {
    value_data_bytes_[v.value()] = bytes;
    value_external_location_[v.value()] = external_location;
  }
  // "float32[1,3,224,224]" / "float32[?]" / "?" for display and dumps.
  std::string FormatValueType(ValueId v) const;
  // Consumers of a value (built by BuildIndexes()).
  std::span<const NodeId> value_consumers(ValueId v) const;

  // ---- nodes ----
  NodeId AddNode(GraphId graph, std::string_view op_type,
                 std::string_view domain, std::string_view name);
  // Appends to the most recently added node. An empty input name (an omitted
  // optional input) is stored as an invalid ValueId to keep positions.
  void AddNodeInput(NodeId node, ValueId value);
  void AddNodeOutput(NodeId node, ValueId value);
  void AddNodeAttribute(NodeId node, const Attribute& attr);
  // Names of framework nodes this node declares it came from (e.g. GE's
  // _datadump_original_op_names); resolved to ids by the linker.
  void AddNodeOriginName(NodeId node, StringId name);

  size_t node_count() const { return node_graph_.size(); }
  GraphId node_graph(NodeId n) const { return node_graph_[n.value()]; }
  LayerLevel node_level(NodeId n) const {
    return graphs_[node_graph_[n.value()].value()].level;
  }
  StringId node_op_type(NodeId n) const { return node_op_type_[n.value()]; }
  StringId node_domain(NodeId n) const { return node_domain_[n.value()]; }
  StringId node_name(NodeId n) const { return node_name_[n.value()]; }
  ScopeId node_scope(NodeId n) const { return node_scope_[n.value()]; }
  std::span<const ValueId> node_inputs(NodeId n) const {
    return Range(inputs_, input_begin_, n);
  }
  std::span<const ValueId> node_outputs(NodeId n) const {
    return Range(outputs_, output_begin_, n);
  }
  std::span<const Attribute> node_attributes(NodeId n) const {
    return Range(attributes_, attribute_begin_, n);
  }
  std::span<const StringId> node_origin_names(NodeId n) const {
    return Range(origin_names_, origin_begin_, n);
  }
  // Nodes of a graph in file order.
  std::span<const NodeId> graph_nodes(GraphId g) const {
    return graph_nodes_[g.value()];
  }
  // Looks a node up by name within one root graph (and its subgraphs).
  // Invalid when no node has the name, and also when several do (ONNX
  // allows repeats in subgraph bodies; files repeat names anyway): a name
  // lookup never silently picks one of them. FindNodes lists them all.
  NodeId FindNode(GraphId root, std::string_view name) const;
  // Every node with this name in one root graph (and its subgraphs), in
  // file order; empty when none.
  std::vector<NodeId> FindNodes(GraphId root, std::string_view name) const;
  // Names that repeat within a root graph: (first node, later node) for
  // every later node with the name of an earlier one, in load order.
  const std::vector<std::pair<NodeId, NodeId>>& duplicate_node_names() const {
    return duplicate_node_names_;
  }

  // ---- scopes (name-scope / module hierarchy, for folding) ----
  // Derives each node's scope from its name: "/layer1/layer1.0/conv1/Conv"
  // lies in scopes layer1 > layer1.0 > conv1. Names without '/' stay at the
  // graph's root scope. `separator` '.' reads module paths instead
  // (a training snapshot's "encoder.layers.0.linear1" lies in scopes
  // encoder > layers > 0, whose paths are "encoder", "encoder.layers",
  // "encoder.layers.0").
  void AssignScopesFromNames(GraphId graph, char separator = '/');
  size_t scope_count() const { return scope_parent_.size(); }
  ScopeId scope_parent(ScopeId s) const { return scope_parent_[s.value()]; }
  StringId scope_name(ScopeId s) const { return scope_name_[s.value()]; }
  StringId scope_path(ScopeId s) const { return scope_path_[s.value()]; }
  GraphId scope_graph(ScopeId s) const { return scope_graph_[s.value()]; }

  // Builds derived indexes (consumers, name lookups). Call after import.
  void BuildIndexes();

  size_t MemoryUsage() const;

 private:
  template <typename T>
  static std::span<const T> Range(const std::vector<T>& items,
                                  const std::vector<uint32_t>& begin,
                                  NodeId n) {
    uint32_t b = begin[n.value()];
    uint32_t e = n.value() + 1 < begin.size()
                     ? begin[n.value() + 1]
                     : static_cast<uint32_t>(items.size());
    return std::span<const T>(items.data() + b, e - b);
  }
  ScopeId InternScope(GraphId graph, ScopeId parent, std::string_view segment,
                      std::string_view path);
  static uint64_t Key(uint32_t a, uint32_t b) {
    return (static_cast<uint64_t>(a) << 32) | b;
  }

  StringPool* strings_ = nullptr;
  std::vector<GraphInfo> graphs_;
  std::vector<std::vector<NodeId>> graph_nodes_;

  // values
  std::vector<GraphId> value_graph_;
  std::vector<StringId> value_name_;
  std::vector<int32_t> value_dtype_;
  std::vector<uint8_t> value_flags_;
  std::vector<bool> value_has_shape_;
  std::vector<NodeId> value_producer_;
  std::vector<uint32_t> value_shape_begin_;  // into dims_ / dim_names_
  std::vector<uint32_t> value_shape_size_;
  std::vector<int64_t> dims_;
  std::vector<StringId> dim_names_;
  std::vector<uint64_t> value_data_bytes_;
  std::vector<StringId> value_external_location_;
  std::vector<StringId> value_layout_, value_origin_layout_,
      value_origin_shape_;
  U64Map<ValueId> value_by_name_;  // (graph, name)
  std::vector<uint32_t> consumer_begin_;
  std::vector<NodeId> consumers_;

  // nodes
  std::vector<GraphId> node_graph_;
  std::vector<StringId> node_op_type_;
  std::vector<StringId> node_domain_;
  std::vector<StringId> node_name_;
  std::vector<ScopeId> node_scope_;
  std::vector<uint32_t> input_begin_;
  std::vector<ValueId> inputs_;
  std::vector<uint32_t> output_begin_;
  std::vector<ValueId> outputs_;
  std::vector<uint32_t> attribute_begin_;
  std::vector<Attribute> attributes_;
  std::vector<uint32_t> origin_begin_;
  std::vector<StringId> origin_names_;
  U64Map<NodeId> node_by_name_;  // (root graph, name) -> first node
  // (root graph, name) of repeated names -> index of the name's first pair
  // in duplicate_node_names_.
  U64Map<uint32_t> repeated_names_;
  std::vector<std::pair<NodeId, NodeId>> duplicate_node_names_;

  // scopes
  std::vector<ScopeId> scope_parent_;
  std::vector<StringId> scope_name_;
  std::vector<StringId> scope_path_;
  std::vector<GraphId> scope_graph_;
  U64Map<ScopeId> scope_by_path_;  // (graph, path)
};

}  // namespace mi
