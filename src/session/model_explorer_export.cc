// One graph level as input for Google AI Edge Model Explorer
// (docs/reference/http-api.md, "Model Explorer export"): the graph JSON in
// the shape of Model Explorer's GraphCollection (graph_builder.py /
// input_graph.ts) and our per-node times as its node-data JSON
// (node_data_builder.py ModelNodeData: graph id -> {results, gradient}).
// Node ids are the same in both files: the model NodeId in decimal for
// operator nodes, "in_<ValueId>" / "out_<ValueId>" for graph inputs and
// outputs. Namespaces are our scope paths, so Model Explorer groups nodes
// as our layouts do.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/json_writer.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/session.h"
#include "session/node_queries.h"
#include "session/session_impl.h"
#include "trace/trace.h"

namespace mi {
namespace {

std::string AttributeValueText(const Model& m, const Attribute& a) {
  switch (a.kind) {
    case AttributeKind::kInt:
      return std::to_string(a.int_value);
    case AttributeKind::kFloat:
      return fmt::format("{}", a.float_value);
    default:
      return std::string(m.str(a.text));
  }
}

// "/layer1/layer1.0/conv1" -> "layer1/layer1.0/conv1": Model Explorer
// splits namespaces on '/', and an empty first component would be a group
// without a name.
std::string Namespace(const Model& m, NodeId n) {
  ScopeId scope = m.node_scope(n);
  if (!scope.valid()) return "";
  std::string_view path = m.str(m.scope_path(scope));
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

void KeyValue(JsonWriter& w, std::string_view key, std::string_view value) {
  w.BeginObject().Field("key", key).Field("value", value).EndObject();
}

// The graph's id in both files: its name, else the level.
std::string GraphIdOf(const Model& m, GraphId root, std::string_view level) {
  std::string_view name = m.str(m.graph(root).name);
  return std::string(name.empty() ? level : name);
}

// Opens the node object of a graph input or output ("in_<ValueId>" /
// "out_<ValueId>") up to its attrs; the caller writes the edges and closes.
void BeginTerminalNode(JsonWriter& w, const Model& m, ValueId v,
                       std::string_view prefix, std::string_view label,
                       std::string_view op_type) {
  w.BeginObject();
  w.Field("id", fmt::format("{}_{}", prefix, v.value()));
  w.Field("label", label);
  w.Field("namespace", "");
  w.Key("attrs").BeginArray();
  KeyValue(w, "name", m.str(m.value_name(v)));
  KeyValue(w, "op_type", op_type);
  w.EndArray();
}

void WriteTensorMetadata(JsonWriter& w, const Model& m, ValueId v,
                         size_t index) {
  w.BeginObject();
  w.Field("id", std::to_string(index));
  w.Key("attrs").BeginArray();
  KeyValue(w, "__tensor_tag", m.str(m.value_name(v)));
  KeyValue(w, "tensor_name", m.str(m.value_name(v)));
  std::string type = m.FormatValueType(v);
  if (!type.empty()) KeyValue(w, "tensor_shape", type);
  w.EndArray();
  w.EndObject();
}

}  // namespace

StatusOr<std::string> Session::ModelExplorerGraphJson(
    std::string_view level) const {
  const Session::Impl& run = *impl_;
  const Model& m = run.model;
  const Links& links = run.links;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(run, level));
  const GraphInfo& graph = m.graph(root);
  // The node standing for each value's source in this graph.
  auto source_of = [&](ValueId v, std::string* id, size_t* output) {
    NodeId p = m.value_producer(v);
    if (p.valid() && m.node_graph(p) == root) {
      auto outs = m.node_outputs(p);
      for (size_t k = 0; k < outs.size(); ++k) {
        if (outs[k] == v) {
          *id = std::to_string(p.value());
          *output = k;
          return true;
        }
      }
    }
    uint8_t flags = m.value_flags(v);
    if ((flags & kValueGraphInput) != 0 && (flags & kValueInitializer) == 0) {
      *id = fmt::format("in_{}", v.value());
      *output = 0;
      return true;
    }
    return false;  // an initializer (weights are not drawn) or outer value
  };

  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("label", fmt::format("{} ({})", GraphIdOf(m, root, level), level));
  w.Key("graphs").BeginArray();
  w.BeginObject();
  w.Field("id", GraphIdOf(m, root, level));
  w.Key("nodes").BeginArray();
  // Graph inputs (not initializers).
  for (ValueId v : graph.inputs) {
    if ((m.value_flags(v) & kValueInitializer) != 0) continue;
    BeginTerminalNode(w, m, v, "in", "Input", "GraphInput");
    w.Key("incomingEdges").BeginArray().EndArray();
    w.Key("outputsMetadata").BeginArray();
    WriteTensorMetadata(w, m, v, 0);
    w.EndArray();
    w.EndObject();
  }
  for (NodeId n : m.graph_nodes(root)) {
    w.BeginObject();
    w.Field("id", std::to_string(n.value()));
    std::string_view op = m.str(m.node_op_type(n));
    w.Field("label", op);
    w.Field("namespace", Namespace(m, n));
    w.Key("attrs").BeginArray();
    KeyValue(w, "name", m.str(m.node_name(n)));
    KeyValue(w, "op_type", op);
    std::string_view domain = m.str(m.node_domain(n));
    if (!domain.empty()) KeyValue(w, "domain", domain);
    NodeStatus status = n.value() < links.status.size()
                            ? links.status[n.value()]
                            : NodeStatus::kUnknown;
    if (status != NodeStatus::kUnknown) {
      KeyValue(w, "status", NodeStatusName(status));
    }
    auto tasks = links.mapped_tasks.Get(n);
    if (!tasks.empty()) {
      int64_t total_ns = 0;
      for (TaskId t : tasks) total_ns += run.trace.task_duration_ns(t);
      KeyValue(w, "time_us", fmt::format("{}", total_ns / 1e3));
      KeyValue(w, "task_count", std::to_string(tasks.size()));
    }
    for (const Attribute& a : m.node_attributes(n)) {
      std::string key(m.str(a.name));
      // Our own keys come first; an ONNX attribute of the same name is
      // prefixed so that both show.
      if (key == "name" || key == "op_type" || key == "domain" ||
          key == "status" || key == "time_us" || key == "task_count") {
        key = "attr:" + key;
      }
      KeyValue(w, key, AttributeValueText(m, a));
    }
    w.EndArray();
    w.Key("incomingEdges").BeginArray();
    auto inputs = m.node_inputs(n);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].valid()) continue;  // an omitted optional input
      std::string source;
      size_t output = 0;
      if (!source_of(inputs[i], &source, &output)) continue;
      w.BeginObject();
      w.Field("sourceNodeId", source);
      w.Field("sourceNodeOutputId", std::to_string(output));
      w.Field("targetNodeInputId", std::to_string(i));
      w.EndObject();
    }
    w.EndArray();
    w.Key("inputsMetadata").BeginArray();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].valid()) WriteTensorMetadata(w, m, inputs[i], i);
    }
    w.EndArray();
    w.Key("outputsMetadata").BeginArray();
    auto outputs = m.node_outputs(n);
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].valid()) WriteTensorMetadata(w, m, outputs[k], k);
    }
    w.EndArray();
    w.EndObject();
  }
  // Graph outputs.
  for (ValueId v : graph.outputs) {
    BeginTerminalNode(w, m, v, "out", "Output", "GraphOutput");
    w.Key("incomingEdges").BeginArray();
    std::string source;
    size_t output = 0;
    if (source_of(v, &source, &output)) {
      w.BeginObject();
      w.Field("sourceNodeId", source);
      w.Field("sourceNodeOutputId", std::to_string(output));
      w.Field("targetNodeInputId", "0");
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();  // nodes
  w.EndObject();
  w.EndArray();  // graphs
  w.EndObject();
  out.push_back('\n');
  return out;
}

StatusOr<std::string> Session::ModelExplorerNodeDataJson(
    std::string_view level) const {
  const Session::Impl& run = *impl_;
  const Model& m = run.model;
  const Links& links = run.links;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(run, level));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key(GraphIdOf(m, root, level)).BeginObject();
  w.Field("name", "time (us)");
  w.Key("results").BeginObject();
  for (NodeId n : m.graph_nodes(root)) {
    auto tasks = links.mapped_tasks.Get(n);
    if (tasks.empty()) continue;
    int64_t total_ns = 0;
    for (TaskId t : tasks) total_ns += run.trace.task_duration_ns(t);
    w.Key(std::to_string(n.value())).BeginObject();
    w.FieldDouble("value", static_cast<double>(total_ns) / 1e3);
    w.EndObject();
  }
  w.EndObject();
  // Cool to hot, from the shortest to the longest time.
  w.Key("gradient").BeginArray();
  w.BeginObject().FieldInt("stop", 0).Field("bgColor", "#22c55e").EndObject();
  w.BeginObject()
      .FieldDouble("stop", 0.5)
      .Field("bgColor", "#eab308")
      .EndObject();
  w.BeginObject().FieldInt("stop", 1).Field("bgColor", "#ef4444").EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  out.push_back('\n');
  return out;
}

}  // namespace mi
