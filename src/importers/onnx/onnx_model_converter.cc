#include "importers/onnx/onnx_model_converter.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/unknown_field_set.h>

#include "base/checked_math.h"
#include "base/strings.h"
#include "importers/onnx/onnx_convert_util.h"
#include "importers/onnx/onnx_shape_inference.h"
#include "importers/onnx/onnx_skeleton.h"
#include "onnx/onnx_pb.h"

namespace mi::importers::onnx_import {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::SparseTensorProto;
using ::onnx::TensorProto;
using ::onnx::TypeProto;

// Reads one of the varints the skeleton builder appended (see
// onnx_skeleton.h); the last one wins, ours is appended last.
template <typename Message>
std::optional<uint64_t> SkeletonVarint(const Message& message,
                                       uint32_t number) {
  const google::protobuf::UnknownFieldSet& unknown = message.unknown_fields();
  std::optional<uint64_t> value;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() == static_cast<int>(number) &&
        field.type() == google::protobuf::UnknownField::TYPE_VARINT) {
      value = field.varint();
    }
  }
  return value;
}

std::span<const int64_t> Dims(
    const google::protobuf::RepeatedField<int64_t>& dims) {
  return std::span<const int64_t>(dims.data(),
                                  static_cast<size_t>(dims.size()));
}

std::optional<uint64_t> TensorElementBytes(const TensorProto& tensor) {
  return ElementBytes(tensor.data_type(), Dims(tensor.dims()));
}

// Bytes of an in-file tensor's data, whether kept in the skeleton or not.
uint64_t InlineDataBytes(const TensorProto& tensor) {
  if (auto raw = SkeletonVarint(tensor, kSkeletonRawDataBytesField)) {
    return *raw;
  }
  if (tensor.has_raw_data()) return tensor.raw_data().size();
  std::optional<uint64_t> typed_wire =
      SkeletonVarint(tensor, kSkeletonTypedDataBytesField);
  uint64_t kept_strings = 0;
  for (const std::string& s : tensor.string_data()) kept_strings += s.size();
  bool has_typed =
      typed_wire || tensor.float_data_size() > 0 ||
      tensor.int32_data_size() > 0 || tensor.int64_data_size() > 0 ||
      tensor.double_data_size() > 0 || tensor.uint64_data_size() > 0;
  if (has_typed) {
    // Typed fields are varint-packed on disk: the in-memory size is what a
    // user means by "bytes of this weight".
    if (auto bytes = TensorElementBytes(tensor)) return *bytes;
    return typed_wire.value_or(0);
  }
  return kept_strings + typed_wire.value_or(0);
}

std::string DescribeTensor(const TensorProto& tensor) {
  TensorDisplayView view;
  view.data_type = tensor.data_type();
  view.dims = Dims(tensor.dims());
  view.external = tensor.data_location() == TensorProto::EXTERNAL;
  view.floats = {tensor.float_data().data(),
                 static_cast<size_t>(tensor.float_data_size())};
  view.int32s = {tensor.int32_data().data(),
                 static_cast<size_t>(tensor.int32_data_size())};
  view.int64s = {tensor.int64_data().data(),
                 static_cast<size_t>(tensor.int64_data_size())};
  view.has_raw = tensor.has_raw_data();
  view.raw = tensor.raw_data();
  return onnx_import::DescribeTensor(view);
}

AttributeKind KindOf(const AttributeProto& attr) {
  switch (attr.type()) {
    case AttributeProto::FLOAT:
      return AttributeKind::kFloat;
    case AttributeProto::INT:
      return AttributeKind::kInt;
    case AttributeProto::STRING:
      return AttributeKind::kString;
    case AttributeProto::TENSOR:
      return AttributeKind::kTensor;
    case AttributeProto::GRAPH:
      return AttributeKind::kGraph;
    case AttributeProto::FLOATS:
      return AttributeKind::kFloats;
    case AttributeProto::INTS:
      return AttributeKind::kInts;
    case AttributeProto::STRINGS:
      return AttributeKind::kStrings;
    case AttributeProto::TENSORS:
      return AttributeKind::kTensors;
    case AttributeProto::GRAPHS:
      return AttributeKind::kGraphs;
    case AttributeProto::SPARSE_TENSOR:
      return AttributeKind::kSparseTensor;
    case AttributeProto::TYPE_PROTO:
      return AttributeKind::kTypeProto;
    case AttributeProto::SPARSE_TENSORS:
    case AttributeProto::TYPE_PROTOS:
      return AttributeKind::kOther;
    case AttributeProto::UNDEFINED:
    default:
      break;
  }
  // IR version 1 files carry no type: infer it from the field that is set.
  if (attr.has_f()) return AttributeKind::kFloat;
  if (attr.has_i()) return AttributeKind::kInt;
  if (attr.has_s()) return AttributeKind::kString;
  if (attr.has_t()) return AttributeKind::kTensor;
  if (attr.has_g()) return AttributeKind::kGraph;
  if (attr.floats_size() > 0) return AttributeKind::kFloats;
  if (attr.ints_size() > 0) return AttributeKind::kInts;
  if (attr.strings_size() > 0) return AttributeKind::kStrings;
  if (attr.tensors_size() > 0) return AttributeKind::kTensors;
  if (attr.graphs_size() > 0) return AttributeKind::kGraphs;
  return AttributeKind::kUndefined;
}

bool UsesOrtContribOps(const GraphProto& graph, int depth) {
  if (depth > kMaxSubgraphDepth) return false;
  for (const NodeProto& node : graph.node()) {
    if (IsOrtContribDomain(node.domain())) return true;
    for (const AttributeProto& attr : node.attribute()) {
      if (attr.has_g() && UsesOrtContribOps(attr.g(), depth + 1)) return true;
      for (const GraphProto& g : attr.graphs()) {
        if (UsesOrtContribOps(g, depth + 1)) return true;
      }
    }
  }
  return false;
}

bool HasTypeAndShape(const TypeProto& type) {
  return type.has_tensor_type() && type.tensor_type().elem_type() != 0 &&
         type.tensor_type().has_shape();
}

// True when some node output has no type+shape in the file.
bool NeedsShapeInference(const GraphProto& graph, int depth) {
  if (depth > kMaxSubgraphDepth) return false;
  std::unordered_set<std::string_view> known;
  known.reserve(static_cast<size_t>(graph.input_size() + graph.output_size() +
                                    graph.value_info_size()));
  for (const auto& list :
       {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const auto& info : *list) {
      if (HasTypeAndShape(info.type())) known.insert(info.name());
    }
  }
  for (const NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty() && !known.contains(output)) return true;
    }
    for (const AttributeProto& attr : node.attribute()) {
      if (attr.has_g() && NeedsShapeInference(attr.g(), depth + 1)) {
        return true;
      }
      for (const GraphProto& g : attr.graphs()) {
        if (NeedsShapeInference(g, depth + 1)) return true;
      }
    }
  }
  return false;
}

// libonnx 1.12's ParseData (used by shape inference for Reshape shapes,
// Constant values, ...) memcpy()s raw_data into a vector sized
// raw_data.size() / sizeof(T): a raw_data whose size is not a multiple of the
// element size writes past the vector (found by onnx_fuzzer). Such payloads
// are malformed anyway; drop them before inference sees them.
void DropMisalignedRawData(TensorProto* tensor) {
  if (!tensor->has_raw_data()) return;
  uint32_t element_size = DataTypeSize(tensor->data_type());
  if (element_size == 0 || tensor->raw_data().size() % element_size != 0) {
    tensor->clear_raw_data();
  }
}

void SanitizeForShapeInference(GraphProto* graph, int depth) {
  if (depth > kMaxSubgraphDepth) return;
  for (TensorProto& tensor : *graph->mutable_initializer()) {
    DropMisalignedRawData(&tensor);
  }
  for (SparseTensorProto& sparse : *graph->mutable_sparse_initializer()) {
    DropMisalignedRawData(sparse.mutable_values());
    DropMisalignedRawData(sparse.mutable_indices());
  }
  for (NodeProto& node : *graph->mutable_node()) {
    for (AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) DropMisalignedRawData(attr.mutable_t());
      for (TensorProto& tensor : *attr.mutable_tensors()) {
        DropMisalignedRawData(&tensor);
      }
      if (attr.has_sparse_tensor()) {
        DropMisalignedRawData(attr.mutable_sparse_tensor()->mutable_values());
        DropMisalignedRawData(attr.mutable_sparse_tensor()->mutable_indices());
      }
      if (attr.has_g()) SanitizeForShapeInference(attr.mutable_g(), depth + 1);
      for (GraphProto& body : *attr.mutable_graphs()) {
        SanitizeForShapeInference(&body, depth + 1);
      }
    }
  }
}

class OnnxModelConverter {
 public:
  OnnxModelConverter(const OnnxConvertOptions& options, ImportContext& ctx)
      : options_(options), ctx_(ctx), model_(*ctx.model) {}

  Status Convert(ModelProto& model);

 private:
  // Names a graph and its enclosing graphs produce, for resolving inputs
  // (outer-scope references of subgraph bodies) and finding dangling ones.
  struct LocalValue {
    ValueId id;  // valid once something in the graph produces the name
    const TypeProto* type = nullptr;
  };
  // One hash lookup per edge: the names of this graph (views into the
  // proto), their type from value_info/input/output, and their ValueId.
  struct GraphScope {
    const GraphScope* outer = nullptr;
    GraphId graph;
    std::unordered_map<std::string_view, LocalValue> values;
  };
  struct PendingBody {
    const GraphProto* proto;
    GraphId graph;
  };

  Status ConvertGraph(const GraphProto& proto, GraphId graph,
                      const GraphScope* outer, int depth);
  Attribute ConvertAttribute(const AttributeProto& attr, GraphId graph,
                             NodeId node, std::string_view node_name,
                             std::vector<PendingBody>* bodies);
  ValueId ResolveInput(const GraphScope& scope, std::string_view name,
                       bool* found);
  void ApplyTypeProto(ValueId value, const TypeProto& type);
  void ApplyTensorType(ValueId value, const TensorProto& tensor);
  void RecordInitializer(ValueId value, const TensorProto& tensor);
  void CheckCycles(const GraphProto& proto, GraphId graph);
  SourceLocation NodeLocation(const NodeProto& node) const;
  void Report(DiagnosticCode code, SourceLocation location,
              std::string message) {
    if (ctx_.diagnostics != nullptr) {
      ctx_.diagnostics->Report(code, std::move(location), std::move(message));
    }
  }

  const OnnxConvertOptions& options_;
  ImportContext& ctx_;
  Model& model_;
  LayerLevel level_ = LayerLevel::kFramework;
};

SourceLocation OnnxModelConverter::NodeLocation(const NodeProto& node) const {
  SourceLocation location;
  location.file = ctx_.path;
  if (auto offset = SkeletonVarint(node, kSkeletonNodeOffsetField)) {
    location.byte = *offset;
    location.has_byte = true;
  }
  return location;
}

Status OnnxModelConverter::Convert(ModelProto& model) {
  if (!model.has_graph()) {
    return MalformedInputError(
        fmt::format("{}: no graph (ModelProto.graph, field 7); not an ONNX "
                    "model?",
                    ctx_.path));
  }
  level_ =
      ChooseLevel(ctx_.level_hint, ctx_.level_hint == LevelHint::kAuto &&
                                       UsesOrtContribOps(model.graph(), 0));

  if (options_.run_shape_inference && NeedsShapeInference(model.graph(), 0)) {
    // Contrib ops (com.microsoft*) have no schema here; error_mode 0 makes
    // inference skip such nodes instead of failing the whole model.
    SanitizeForShapeInference(model.mutable_graph(), 0);
    std::vector<const NodeProto*> skip;
    if (options_.check_before_inference) {
      for (const NodeUnfitForInference& unfit :
           FindNodesUnfitForInference(model)) {
        const NodeProto& node = *unfit.node;
        Report(DiagnosticCode::kShapeInferenceFailed, NodeLocation(node),
               fmt::format("ONNX shape inference leaves out node '{}' ({}): "
                           "{}; the shapes that depend on it are as the "
                           "file declares them",
                           ShortString(node.name()),
                           ShortString(node.op_type()), unfit.reason));
        skip.push_back(&node);
      }
    }
    IsolatedInferenceResult inferred =
        InferShapesIsolated(model, skip, options_.inference);
    for (const CrashedNode& crashed : inferred.crashed_in) {
      const NodeProto& node = *crashed.node;
      Report(DiagnosticCode::kShapeInferenceFailed, NodeLocation(node),
             fmt::format("ONNX shape inference {} in node '{}' ({}), which "
                         "was left out; the shapes that depend on it are as "
                         "the file declares them",
                         crashed.crash, ShortString(node.name()),
                         ShortString(node.op_type())));
    }
    if (!inferred.applied) {
      Report(DiagnosticCode::kShapeInferenceFailed, SourceLocation{ctx_.path},
             fmt::format("ONNX shape inference {}; skipped, shapes as the "
                         "file declares them",
                         ShortString(inferred.problem)));
    }
  }

  const GraphProto& graph = model.graph();
  GraphId root = model_.AddGraph(level_, graph.name(), ctx_.path);
  GraphInfo& info = model_.mutable_graph(root);
  std::string producer = model.producer_name();
  if (!model.producer_version().empty()) {
    if (!producer.empty()) producer.push_back(' ');
    producer += model.producer_version();
  }
  info.producer = model_.strings().Intern(producer);
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      info.opset = opset.version();
    }
    info.opset_imports.emplace_back(model_.strings().Intern(opset.domain()),
                                    opset.version());
  }
  MI_RETURN_IF_ERROR(ConvertGraph(graph, root, nullptr, 0));
  ctx_.graphs_added.push_back(root);
  return Status::Ok();
}

void OnnxModelConverter::ApplyTypeProto(ValueId value, const TypeProto& type) {
  const TypeProto::Tensor* tensor = nullptr;
  if (type.has_tensor_type()) {
    tensor = &type.tensor_type();
  }
  if (tensor == nullptr) {
    if (type.has_sparse_tensor_type()) {
      const auto& sparse = type.sparse_tensor_type();
      model_.SetValueType(value, sparse.elem_type());
      if (!sparse.has_shape()) return;
      std::vector<int64_t> dims;
      std::vector<StringId> names;
      for (const auto& dim : sparse.shape().dim()) {
        bool known = dim.has_dim_value() && dim.dim_value() >= 0;
        dims.push_back(known ? dim.dim_value() : -1);
        names.push_back(dim.has_dim_param()
                            ? model_.strings().Intern(dim.dim_param())
                            : StringPool::kEmpty);
      }
      model_.SetValueShape(value, std::move(dims), std::move(names));
    }
    return;
  }
  if (tensor->elem_type() != 0) model_.SetValueType(value, tensor->elem_type());
  if (!tensor->has_shape()) return;
  std::vector<int64_t> dims;
  std::vector<StringId> names;
  dims.reserve(tensor->shape().dim_size());
  names.reserve(tensor->shape().dim_size());
  for (const auto& dim : tensor->shape().dim()) {
    bool known = dim.has_dim_value() && dim.dim_value() >= 0;
    dims.push_back(known ? dim.dim_value() : -1);
    names.push_back(dim.has_dim_param()
                        ? model_.strings().Intern(dim.dim_param())
                        : StringPool::kEmpty);
  }
  model_.SetValueShape(value, std::move(dims), std::move(names));
}

void OnnxModelConverter::ApplyTensorType(ValueId value,
                                         const TensorProto& tensor) {
  model_.SetValueType(value, tensor.data_type());
  std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  for (int64_t& d : dims) {
    if (d < 0) d = -1;
  }
  std::vector<StringId> names(dims.size(), StringPool::kEmpty);
  model_.SetValueShape(value, std::move(dims), std::move(names));
}

void OnnxModelConverter::RecordInitializer(ValueId value,
                                           const TensorProto& tensor) {
  ApplyTensorType(value, tensor);
  uint8_t flags = kValueInitializer;
  if (tensor.data_location() != TensorProto::EXTERNAL) {
    model_.AddValueFlags(value, flags);
    model_.SetValueData(value, InlineDataBytes(tensor), StringPool::kEmpty);
    return;
  }
  flags |= kValueExternalData;
  std::string_view location;
  std::optional<uint64_t> length;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "length") {
      std::optional<uint64_t> parsed = ParseInteger<uint64_t>(entry.value());
      if (parsed) length = *parsed;
    }
  }
  if (!length) length = TensorElementBytes(tensor);
  model_.AddValueFlags(value, flags);
  model_.SetValueData(value, length.value_or(0),
                      model_.strings().Intern(location));

  // The data file is only stat()ed, never opened: the weights stay unread.
  if (options_.model_directory.empty()) return;
  SourceLocation where{ctx_.path};
  if (location.empty()) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}' is external but names no location",
                       ShortString(tensor.name())));
    return;
  }
  if (location.front() == '/' || location.find("..") != std::string::npos) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}': external data location '{}' is not "
                       "inside the model's directory; not looked up",
                       ShortString(tensor.name()), ShortString(location)));
    return;
  }
  std::string path = options_.model_directory + "/" + std::string(location);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}': external data file '{}' is missing",
                       ShortString(tensor.name()), ShortString(path)));
  }
}

ValueId OnnxModelConverter::ResolveInput(const GraphScope& scope,
                                         std::string_view name, bool* found) {
  for (const GraphScope* s = &scope; s != nullptr; s = s->outer) {
    auto it = s->values.find(name);
    if (it != s->values.end() && it->second.id.valid()) {
      *found = true;
      return it->second.id;
    }
  }
  *found = false;
  return model_.GetOrAddValue(scope.graph, name);
}

Attribute OnnxModelConverter::ConvertAttribute(
    const AttributeProto& attr, GraphId graph, NodeId node,
    std::string_view node_name, std::vector<PendingBody>* bodies) {
  Attribute out;
  out.name = model_.strings().Intern(attr.name());
  out.kind = KindOf(attr);
  std::string text;
  auto number = [](auto v) { return fmt::format("{}", v); };
  auto quoted = [](const std::string& s) {
    return fmt::format("\"{}\"", ShortString(s));
  };
  auto add_body = [&](const GraphProto& body) {
    std::string name = body.name().empty()
                           ? fmt::format("{}/{}", node_name, attr.name())
                           : body.name();
    GraphId id = model_.AddGraph(level_, name, ctx_.path, graph, node);
    bodies->push_back({&body, id});
    return id;
  };
  switch (out.kind) {
    case AttributeKind::kFloat:
      out.float_value = attr.f();
      break;
    case AttributeKind::kInt:
      out.int_value = attr.i();
      break;
    case AttributeKind::kString:
      text = ShortString(attr.s());
      break;
    case AttributeKind::kTensor:
      text = DescribeTensor(attr.t());
      break;
    case AttributeKind::kGraph:
      out.subgraph = add_body(attr.g());
      text = fmt::format("graph {}", ShortString(attr.g().name()));
      break;
    case AttributeKind::kFloats:
      text = FormatList(attr.floats(), number);
      break;
    case AttributeKind::kInts:
      text = FormatList(attr.ints(), number);
      break;
    case AttributeKind::kStrings:
      text = FormatList(attr.strings(), quoted);
      break;
    case AttributeKind::kTensors:
      text = FormatList(attr.tensors(), DescribeTensor);
      break;
    case AttributeKind::kGraphs:
      for (const GraphProto& body : attr.graphs()) {
        GraphId id = add_body(body);
        if (!out.subgraph.valid()) out.subgraph = id;
      }
      text = fmt::format("graphs ({} items)", attr.graphs_size());
      break;
    case AttributeKind::kSparseTensor:
      text =
          fmt::format("sparse_tensor {}{}",
                      DataTypeName(attr.sparse_tensor().values().data_type()),
                      FormatDims(Dims(attr.sparse_tensor().dims())));
      break;
    case AttributeKind::kTypeProto:
      text = "type";
      break;
    case AttributeKind::kOther:
    case AttributeKind::kUndefined:
      if (!attr.ref_attr_name().empty()) {
        text = "@" + ShortString(attr.ref_attr_name());
      }
      break;
  }
  out.text = model_.strings().Intern(text);
  return out;
}

Status OnnxModelConverter::ConvertGraph(const GraphProto& proto, GraphId graph,
                                        const GraphScope* outer, int depth) {
  if (depth > kMaxSubgraphDepth) {
    return MalformedInputError(fmt::format(
        "{}: subgraphs nested too deeply; expected at most {} levels, found "
        "more",
        ctx_.path, kMaxSubgraphDepth));
  }
  GraphScope scope;
  scope.outer = outer;
  scope.graph = graph;

  scope.values.reserve(static_cast<size_t>(
      proto.value_info_size() + proto.input_size() + proto.initializer_size() +
      proto.node_size() * 2 + 16));
  for (const auto& list :
       {&proto.value_info(), &proto.input(), &proto.output()}) {
    for (const auto& info : *list) {
      if (info.has_type()) scope.values[info.name()].type = &info.type();
    }
  }
  auto produce = [&](const std::string& name) {
    LocalValue& local = scope.values[name];
    if (!local.id.valid()) {
      local.id = model_.GetOrAddValue(graph, name);
      if (local.type != nullptr) ApplyTypeProto(local.id, *local.type);
    }
    return local.id;
  };

  GraphInfo& info = model_.mutable_graph(graph);
  std::unordered_set<std::string_view> initializer_names;
  for (const TensorProto& tensor : proto.initializer()) {
    initializer_names.insert(tensor.name());
    RecordInitializer(produce(tensor.name()), tensor);
  }
  for (const SparseTensorProto& sparse : proto.sparse_initializer()) {
    const TensorProto& values = sparse.values();
    initializer_names.insert(values.name());
    ValueId value = produce(values.name());
    model_.SetValueType(value, values.data_type());
    std::vector<int64_t> dims(sparse.dims().begin(), sparse.dims().end());
    model_.SetValueShape(
        value, dims, std::vector<StringId>(dims.size(), StringPool::kEmpty));
    model_.AddValueFlags(value, kValueInitializer);
    model_.SetValueData(
        value, InlineDataBytes(values) + InlineDataBytes(sparse.indices()),
        StringPool::kEmpty);
  }
  for (const auto& input : proto.input()) {
    ValueId value = produce(input.name());
    // IR < 4 lists every initializer as a graph input too; those are
    // weights, not inputs a user feeds.
    if (initializer_names.contains(input.name())) continue;
    model_.AddValueFlags(value, kValueGraphInput);
    info.inputs.push_back(value);
  }
  for (const NodeProto& node : proto.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) produce(output);
    }
  }

  std::vector<PendingBody> bodies;
  std::string_view graph_name = model_.str(info.name);
  for (int index = 0; index < proto.node_size(); ++index) {
    const NodeProto& node_proto = proto.node(index);
    // ONNX Runtime's profiler names unnamed nodes "<OpType>_<index>".
    std::string name = node_proto.name().empty()
                           ? fmt::format("{}_{}", node_proto.op_type(), index)
                           : node_proto.name();
    NodeId node =
        model_.AddNode(graph, node_proto.op_type(), node_proto.domain(), name);
    for (int i = 0; i < node_proto.input_size(); ++i) {
      const std::string& input = node_proto.input(i);
      if (input.empty()) {
        model_.AddNodeInput(node, ValueId::Invalid());
        continue;
      }
      bool found = false;
      ValueId value = ResolveInput(scope, input, &found);
      if (!found) {
        Report(DiagnosticCode::kDanglingInput, NodeLocation(node_proto),
               fmt::format("node '{}' ({}) input {} '{}' is produced by no "
                           "node, graph input or initializer of graph '{}' "
                           "or an enclosing graph",
                           ShortString(name), ShortString(node_proto.op_type()),
                           i, ShortString(input), ShortString(graph_name)));
      }
      model_.AddNodeInput(node, value);
    }
    for (const std::string& output : node_proto.output()) {
      model_.AddNodeOutput(
          node, output.empty() ? ValueId::Invalid() : scope.values[output].id);
    }
    for (const AttributeProto& attr : node_proto.attribute()) {
      model_.AddNodeAttribute(
          node, ConvertAttribute(attr, graph, node, name, &bodies));
    }
    // GE's ONNX dumps (ge_onnx_*.pbtxt at DUMP_GE_GRAPH=1) carry the
    // framework ops a node replaced; the linker turns them into fused_from.
    for (const AttributeProto& attr : node_proto.attribute()) {
      if (attr.name() != "_datadump_original_op_names") continue;
      for (const std::string& origin : attr.strings()) {
        model_.AddNodeOriginName(node, model_.strings().Intern(origin));
      }
    }
  }
  // mutable_graph() references may dangle after AddGraph: look it up again.
  for (const auto& output : proto.output()) {
    bool found = false;
    ValueId value = ResolveInput(scope, output.name(), &found);
    if (!found) {
      Report(DiagnosticCode::kDanglingInput, SourceLocation{ctx_.path},
             fmt::format("graph output '{}' of graph '{}' is produced by no "
                         "node, graph input or initializer",
                         ShortString(output.name()),
                         ShortString(model_.str(model_.graph(graph).name))));
      if (output.has_type()) ApplyTypeProto(value, output.type());
    }
    model_.AddValueFlags(value, kValueGraphOutput);
    model_.mutable_graph(graph).outputs.push_back(value);
  }

  model_.AssignScopesFromNames(graph);
  CheckCycles(proto, graph);

  for (const PendingBody& body : bodies) {
    MI_RETURN_IF_ERROR(
        ConvertGraph(*body.proto, body.graph, &scope, depth + 1));
  }
  return Status::Ok();
}

void OnnxModelConverter::CheckCycles(const GraphProto& proto, GraphId graph) {
  CheckGraphCycles(
      model_, graph,
      [&](size_t i) { return NodeLocation(proto.node(static_cast<int>(i))); },
      [&](DiagnosticCode code, SourceLocation location, std::string message) {
        Report(code, std::move(location), std::move(message));
      });
}

}  // namespace

Status ConvertOnnxModel(ModelProto& model, const OnnxConvertOptions& options,
                        ImportContext& ctx) {
  if (ctx.model == nullptr) {
    return InternalError("ConvertOnnxModel: ImportContext has no model");
  }
  OnnxModelConverter converter(options, ctx);
  return converter.Convert(model);
}

}  // namespace mi::importers::onnx_import
