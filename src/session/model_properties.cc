// The model-properties and weight-peek queries of the UI server
// (docs/reference/http-api.md, "properties" and "values"): what a level's
// graph says about itself (producer, opsets, inputs / outputs with types,
// initializers with their shapes and sizes, the metadata its format
// carries) and the first values of one initializer, read from the model
// file only when asked.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/json_writer.h"
#include "importers/onnx/onnx_file_peek.h"
#include "model/model.h"
#include "model_inspector/session.h"
#include "session/node_queries.h"
#include "session/session_impl.h"

namespace mi {
namespace {

namespace peek = importers::onnx_import;

// The importer that read `path` ("onnx", "ge_proto_text", ...), or "".
std::string_view FormatOf(const Session::Impl& run, std::string_view path) {
  for (const InputFile& f : run.inputs) {
    if (f.path == path) return f.format;
  }
  return {};
}

void WriteValue(JsonWriter& w, const Model& m, ValueId v) {
  w.BeginObject();
  w.Field("name", m.str(m.value_name(v)));
  w.Field("dtype", DataTypeName(m.value_dtype(v)));
  w.Key("shape");
  WriteValueShape(w, m, v);
  w.Field("type", m.FormatValueType(v));
  WriteValueLayoutFields(w, m, v);
  w.EndObject();
}

}  // namespace

StatusOr<std::string> Session::ModelPropertiesJson(
    std::string_view level) const {
  const Session::Impl& run = *impl_;
  const Model& m = run.model;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(run, level));
  const GraphInfo& g = m.graph(root);
  std::string source(m.str(g.source_file));
  std::string_view format = FormatOf(run, source);

  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("level", level);
  w.Field("graph", m.str(g.name));
  w.Field("file", source);
  w.Field("format", format);
  w.Field("producer", m.str(g.producer));
  if (g.opset) w.FieldInt("opset", g.opset);
  w.Key("opset_imports").BeginArray();
  for (const auto& [domain, version] : g.opset_imports) {
    w.BeginObject();
    w.Field("domain", m.str(domain)).FieldInt("version", version);
    w.EndObject();
  }
  w.EndArray();
  size_t nodes = 0;
  for (size_t i = 0; i < m.node_count(); ++i) {
    if (m.RootOf(m.node_graph(NodeId(static_cast<uint32_t>(i)))) == root) {
      ++nodes;
    }
  }
  w.FieldInt("nodes", static_cast<int64_t>(nodes));
  w.Key("inputs").BeginArray();
  for (ValueId v : g.inputs) {
    // ONNX files before IR 4 list initializers as inputs too.
    if (!(m.value_flags(v) & kValueInitializer)) WriteValue(w, m, v);
  }
  w.EndArray();
  w.Key("outputs").BeginArray();
  for (ValueId v : g.outputs) WriteValue(w, m, v);
  w.EndArray();
  // Weights of the main graph: name, type, bytes, where their data lies.
  uint64_t weight_bytes = 0;
  size_t weights = 0;
  w.Key("initializers").BeginArray();
  for (size_t i = 0; i < m.value_count(); ++i) {
    ValueId v(static_cast<uint32_t>(i));
    if (m.value_graph(v) != root || !(m.value_flags(v) & kValueInitializer)) {
      continue;
    }
    ++weights;
    weight_bytes += m.value_data_bytes(v);
    w.BeginObject();
    w.Field("name", m.str(m.value_name(v)));
    w.Field("dtype", DataTypeName(m.value_dtype(v)));
    w.Key("shape");
    WriteValueShape(w, m, v);
    w.Field("type", m.FormatValueType(v));
    w.Key("bytes").UInt(m.value_data_bytes(v));
    if (m.value_flags(v) & kValueExternalData) {
      w.Field("external", m.str(m.value_external_location(v)));
    }
    w.EndObject();
  }
  w.EndArray();
  w.FieldInt("initializer_count", static_cast<int64_t>(weights));
  w.Key("initializer_bytes").UInt(weight_bytes);
  // What the file says of itself beyond the graph.
  w.Key("metadata").BeginArray();
  for (const auto& [key, value] : g.metadata) {
    w.BeginObject().Field("key", m.str(key)).Field("value", m.str(value));
    w.EndObject();
  }
  w.EndArray();
  w.FieldBool("values_readable", format == "onnx");
  if (format == "onnx") {
    auto header = peek::ReadOnnxModelHeader(source);
    if (!header.ok()) return header.status();
    w.Key("onnx").BeginObject();
    w.FieldInt("ir_version", header->ir_version);
    w.Field("producer_name", header->producer_name);
    w.Field("producer_version", header->producer_version);
    w.Field("domain", header->domain);
    w.FieldInt("model_version", header->model_version);
    w.Field("doc_string", header->doc_string);
    w.Key("metadata_props").BeginArray();
    for (const auto& [key, value] : header->metadata_props) {
      w.BeginObject().Field("key", key).Field("value", value).EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  return out;
}

StatusOr<std::string> Session::TensorValuesJson(std::string_view level,
                                                std::string_view name,
                                                size_t limit) const {
  const Session::Impl& run = *impl_;
  const Model& m = run.model;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(run, level));
  ValueId v = m.FindValue(root, name);
  if (!v.valid() || !(m.value_flags(v) & kValueInitializer)) {
    return NotFoundError(fmt::format(
        "the {} level's main graph has no initializer '{}'", level, name));
  }
  std::string source(m.str(m.graph(root).source_file));
  std::string_view format = FormatOf(run, source);
  if (format != "onnx") {
    return InvalidArgumentError(fmt::format(
        "values are read from binary ONNX files; the {} level comes from {} "
        "({})",
        level, source, format.empty() ? "another format" : format));
  }
  auto p = peek::PeekOnnxInitializer(source, name, limit, kValueStatsLimit);
  if (!p.ok()) return p.status();
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("name", p->name);
  w.Field("dtype", DataTypeName(p->data_type));
  w.Key("shape").BeginArray();
  for (int64_t d : p->dims) w.Int(d);
  w.EndArray();
  w.Key("elements").UInt(p->element_count);
  w.Field("storage", p->storage);
  if (p->storage == "external") {
    w.Key("external").BeginObject();
    w.Field("location", p->external_location);
    w.Key("offset").UInt(p->external_offset);
    w.Key("length").UInt(p->external_length);
    w.EndObject();
  }
  w.Key("values").BeginArray();
  for (double d : p->floats) w.Double(d);
  for (int64_t i : p->ints) w.Int(i);
  for (uint64_t u : p->uints) w.UInt(u);
  w.EndArray();
  w.Key("stats").BeginObject();
  w.Key("count").UInt(p->stats_count);
  w.FieldBool("complete", p->stats_count == p->element_count);
  w.Key("nan").UInt(p->nan_count);
  if (p->stats_count > p->nan_count) {
    w.FieldDouble("min", p->min).FieldDouble("max", p->max);
    w.FieldDouble("mean", p->mean);
  }
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace mi
