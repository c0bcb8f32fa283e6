#include "importers/onnx/onnx_direct_import.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "importers/onnx/onnx_convert_util.h"
#include "importers/onnx/onnx_direct_internal.h"

namespace mi::importers::onnx_import {
namespace {

using direct_detail::DAttr;
using direct_detail::Decoder;
using direct_detail::DecodeTensor;
using direct_detail::DescribeTensor;
using direct_detail::DGraph;
using direct_detail::DimInfo;
using direct_detail::DInit;
using direct_detail::DNode;
using direct_detail::kNone;
using direct_detail::TensorFacts;
using direct_detail::TensorRef;
using direct_detail::TypeInfo;
using direct_detail::ValueInfo;

// AttributeProto.AttributeType (DAttr::type).
constexpr int32_t kAttrFloat = 1, kAttrInt = 2, kAttrString = 3,
                  kAttrTensor = 4, kAttrGraph = 5, kAttrFloats = 6,
                  kAttrInts = 7, kAttrStrings = 8, kAttrTensors = 9,
                  kAttrGraphs = 10, kAttrSparseTensor = 11,
                  kAttrSparseTensors = 12, kAttrTypeProto = 13,
                  kAttrTypeProtos = 14;

// ---- per-graph name table (string_view -> local value) ----

uint64_t HashName(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  if (n > 0) std::memcpy(&w, p, n);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return h;
}

struct LocalValue {
  ValueId id;  // valid once something in the graph produces the name
  uint32_t type = kNone;
  bool known_shape = false;
  bool initializer = false;
};

class NameTable {
 public:
  void Reserve(size_t n) {
    size_t capacity = 64;
    while (capacity < n * 2) capacity *= 2;
    if (capacity > slots_.size()) Rehash(capacity);
    keys_.reserve(n);
    values_.reserve(n);
  }
  LocalValue& Get(std::string_view name) {
    if ((keys_.size() + 1) * 2 > slots_.size()) {
      Rehash(std::max<size_t>(64, slots_.size() * 2));
    }
    uint64_t h = HashName(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      uint32_t slot = slots_[i];
      if (slot == kNone) {
        slots_[i] = static_cast<uint32_t>(keys_.size());
        keys_.push_back(name);
        hashes_.push_back(h);
        values_.emplace_back();
        return values_.back();
      }
      if (hashes_[slot] == h && keys_[slot] == name) return values_[slot];
    }
  }
  const LocalValue* Find(std::string_view name) const {
    if (keys_.empty()) return nullptr;
    uint64_t h = HashName(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      uint32_t slot = slots_[i];
      if (slot == kNone) return nullptr;
      if (hashes_[slot] == h && keys_[slot] == name) return &values_[slot];
    }
  }

 private:
  void Rehash(size_t capacity) {
    slots_.assign(capacity, kNone);
    mask_ = capacity - 1;
    for (uint32_t k = 0; k < keys_.size(); ++k) {
      for (size_t i = hashes_[k] & mask_;; i = (i + 1) & mask_) {
        if (slots_[i] == kNone) {
          slots_[i] = k;
          break;
        }
      }
    }
  }
  std::vector<uint32_t> slots_;
  size_t mask_ = 0;
  std::vector<std::string_view> keys_;
  std::vector<uint64_t> hashes_;
  std::vector<LocalValue> values_;
};

// ---- conversion (mirrors OnnxModelConverter) ----

class DirectConverter {
 public:
  DirectConverter(const Decoder& d, const OnnxConvertOptions& options,
                  ImportContext& ctx)
      : d_(d), options_(options), ctx_(ctx), model_(*ctx.model) {}

  // Builds the name tables; false when some node output needs inference.
  bool Prepare();
  void Convert();

 private:
  struct PendingBody {
    uint32_t graph_index;
    GraphId graph;
  };
  void ConvertGraph(uint32_t index, GraphId graph);
  Attribute ConvertAttribute(const DGraph& g, const DAttr& attr, GraphId graph,
                             NodeId node, std::string_view node_name,
                             std::vector<PendingBody>* bodies);
  ValueId ResolveInput(uint32_t index, GraphId graph, std::string_view name,
                       bool* found);
  void ApplyType(ValueId value, uint32_t type);
  void RecordInitializer(ValueId value, const DGraph& g, const DInit& init);
  SourceLocation NodeLocation(const DNode& node) const {
    SourceLocation location;
    location.file = ctx_.path;
    location.byte = node.offset;
    location.has_byte = true;
    return location;
  }
  void Report(DiagnosticCode code, SourceLocation location,
              std::string message) {
    if (ctx_.diagnostics != nullptr) {
      ctx_.diagnostics->Report(code, std::move(location), std::move(message));
    }
  }

  const Decoder& d_;
  const OnnxConvertOptions& options_;
  ImportContext& ctx_;
  Model& model_;
  LayerLevel level_ = LayerLevel::kFramework;
  std::vector<NameTable> tables_;
  std::vector<uint32_t> outer_;  // enclosing graph index per graph index
  DGraph empty_graph_;
  std::vector<int64_t> dims_scratch_;
  std::vector<StringId> names_scratch_;
  TensorFacts tensor_scratch_;
};

bool DirectConverter::Prepare() {
  tables_.resize(d_.graphs.size());
  outer_.assign(d_.graphs.size(), kNone);
  for (size_t gi = 0; gi < d_.graphs.size(); ++gi) {
    const DGraph& g = d_.graphs[gi];
    for (uint32_t ref : g.graph_refs) outer_[ref] = static_cast<uint32_t>(gi);
    for (const DAttr& a : g.attrs) {
      if (a.g != kNone) outer_[a.g] = static_cast<uint32_t>(gi);
    }
    NameTable& table = tables_[gi];
    table.Reserve(g.value_info.size() + g.inputs.size() + g.inits.size() +
                  g.nodes.size() * 2 + 16);
    for (const auto* list : {&g.value_info, &g.inputs, &g.outputs}) {
      for (const ValueInfo& info : *list) {
        if (info.type == kNone) continue;
        LocalValue& local = table.Get(info.name);
        local.type = info.type;
        if (d_.types[info.type].Known()) local.known_shape = true;
      }
    }
    for (std::string_view output : g.outs) {
      if (output.empty()) continue;
      const LocalValue* local = table.Find(output);
      if (local == nullptr || !local->known_shape) return false;
    }
  }
  return true;
}

void DirectConverter::Convert() {
  level_ = ChooseLevel(ctx_.level_hint, d_.uses_contrib_ops);
  const DGraph& graph = d_.graphs[0];
  model_.strings().Reserve(graph.nodes.size() * 3 + graph.value_info.size());
  GraphId root = model_.AddGraph(level_, graph.name, ctx_.path);
  GraphInfo& info = model_.mutable_graph(root);
  std::string producer(d_.producer_name);
  if (!d_.producer_version.empty()) {
    if (!producer.empty()) producer.push_back(' ');
    producer += d_.producer_version;
  }
  info.producer = model_.strings().Intern(producer);
  for (const auto& [domain, version] : d_.opsets) {
    if (domain.empty() || domain == "ai.onnx") info.opset = version;
    info.opset_imports.emplace_back(model_.strings().Intern(domain), version);
  }
  ConvertGraph(0, root);
  ctx_.graphs_added.push_back(root);
}

void DirectConverter::ApplyType(ValueId value, uint32_t type_index) {
  const TypeInfo& type = d_.types[type_index];
  if (type.kind == 0) return;
  if (type.kind == 1) {
    if (type.elem_type != 0) model_.SetValueType(value, type.elem_type);
  } else {
    model_.SetValueType(value, type.elem_type);
  }
  if (!type.has_shape) return;
  dims_scratch_.clear();
  names_scratch_.clear();
  for (uint32_t k = type.dim_begin; k < type.dim_end; ++k) {
    const DimInfo& dim = d_.dims[k];
    bool known = dim.which == 1 && dim.value >= 0;
    dims_scratch_.push_back(known ? dim.value : -1);
    names_scratch_.push_back(dim.which == 2 ? model_.strings().Intern(dim.param)
                                            : StringPool::kEmpty);
  }
  model_.SetValueShape(value, dims_scratch_, names_scratch_);
}

void DirectConverter::RecordInitializer(ValueId value, const DGraph& g,
                                        const DInit& init) {
  std::span<const int64_t> dims(g.init_dims.data() + init.dims_begin,
                                init.dims_end - init.dims_begin);
  model_.SetValueType(value, init.data_type);
  dims_scratch_.assign(dims.begin(), dims.end());
  for (int64_t& dim : dims_scratch_) {
    if (dim < 0) dim = -1;
  }
  names_scratch_.assign(dims_scratch_.size(), StringPool::kEmpty);
  model_.SetValueShape(value, dims_scratch_, names_scratch_);
  uint8_t flags = kValueInitializer;
  if (!init.external) {
    model_.AddValueFlags(value, flags);
    model_.SetValueData(value, init.bytes, StringPool::kEmpty);
    return;
  }
  flags |= kValueExternalData;
  std::string_view location = init.location;
  model_.AddValueFlags(value, flags);
  model_.SetValueData(value, init.bytes, model_.strings().Intern(location));

  // The data file is only stat()ed, never opened: the weights stay unread.
  if (options_.model_directory.empty()) return;
  SourceLocation where{ctx_.path};
  if (location.empty()) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}' is external but names no location",
                       ShortString(init.name)));
    return;
  }
  if (location.front() == '/' || location.find("..") != std::string::npos) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}': external data location '{}' is not "
                       "inside the model's directory; not looked up",
                       ShortString(init.name), ShortString(location)));
    return;
  }
  std::string path = options_.model_directory + "/" + std::string(location);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}': external data file '{}' is missing",
                       ShortString(init.name), ShortString(path)));
  }
}

ValueId DirectConverter::ResolveInput(uint32_t index, GraphId graph,
                                      std::string_view name, bool* found) {
  for (uint32_t s = index; s != kNone; s = outer_[s]) {
    const LocalValue* local = tables_[s].Find(name);
    if (local != nullptr && local->id.valid()) {
      *found = true;
      return local->id;
    }
  }
  *found = false;
  return model_.GetOrAddValue(graph, name);
}

Attribute DirectConverter::ConvertAttribute(const DGraph& g, const DAttr& attr,
                                            GraphId graph, NodeId node,
                                            std::string_view node_name,
                                            std::vector<PendingBody>* bodies) {
  Attribute out;
  out.name = model_.strings().Intern(attr.name);
  switch (attr.type) {
    case kAttrFloat:
      out.kind = AttributeKind::kFloat;
      break;
    case kAttrInt:
      out.kind = AttributeKind::kInt;
      break;
    case kAttrString:
      out.kind = AttributeKind::kString;
      break;
    case kAttrTensor:
      out.kind = AttributeKind::kTensor;
      break;
    case kAttrGraph:
      out.kind = AttributeKind::kGraph;
      break;
    case kAttrFloats:
      out.kind = AttributeKind::kFloats;
      break;
    case kAttrInts:
      out.kind = AttributeKind::kInts;
      break;
    case kAttrStrings:
      out.kind = AttributeKind::kStrings;
      break;
    case kAttrTensors:
      out.kind = AttributeKind::kTensors;
      break;
    case kAttrGraphs:
      out.kind = AttributeKind::kGraphs;
      break;
    case kAttrSparseTensor:
      out.kind = AttributeKind::kSparseTensor;
      break;
    case kAttrTypeProto:
      out.kind = AttributeKind::kTypeProto;
      break;
    case kAttrSparseTensors:
    case kAttrTypeProtos:
      out.kind = AttributeKind::kOther;
      break;
    default:
      // IR version 1 files carry no type: infer it from the field set.
      if (attr.has_f) {
        out.kind = AttributeKind::kFloat;
      } else if (attr.has_i) {
        out.kind = AttributeKind::kInt;
      } else if (attr.has_s) {
        out.kind = AttributeKind::kString;
      } else if (attr.has_t) {
        out.kind = AttributeKind::kTensor;
      } else if (attr.g != kNone) {
        out.kind = AttributeKind::kGraph;
      } else if (attr.floats_end > attr.floats_begin) {
        out.kind = AttributeKind::kFloats;
      } else if (attr.ints_end > attr.ints_begin) {
        out.kind = AttributeKind::kInts;
      } else if (attr.strings_end > attr.strings_begin) {
        out.kind = AttributeKind::kStrings;
      } else if (attr.tensors_end > attr.tensors_begin) {
        out.kind = AttributeKind::kTensors;
      } else if (attr.graphs_end > attr.graphs_begin) {
        out.kind = AttributeKind::kGraphs;
      } else {
        out.kind = AttributeKind::kUndefined;
      }
      break;
  }
  std::string text;
  auto number = [](auto v) { return fmt::format("{}", v); };
  auto quoted = [](std::string_view s) {
    return fmt::format("\"{}\"", ShortString(s));
  };
  auto describe = [&](const TensorRef& ref) {
    // Decoded once already in the first pass; cannot fail now.
    if (!DecodeTensor(ref.bytes, ref.offset, ctx_.path, &tensor_scratch_)) {
      return std::string();
    }
    return DescribeTensor(tensor_scratch_);
  };
  auto body_graph = [&](uint32_t index) -> const DGraph& {
    return index == kNone ? empty_graph_ : d_.graphs[index];
  };
  auto add_body = [&](uint32_t index) {
    std::string_view body_name = body_graph(index).name;
    std::string name = body_name.empty()
                           ? fmt::format("{}/{}", node_name, attr.name)
                           : std::string(body_name);
    GraphId id = model_.AddGraph(level_, name, ctx_.path, graph, node);
    bodies->push_back({index, id});
    return id;
  };
  auto span_of = [](const auto& items, uint32_t begin, uint32_t end) {
    return std::span(items.data() + begin, end - begin);
  };
  switch (out.kind) {
    case AttributeKind::kFloat:
      out.float_value = attr.f;
      break;
    case AttributeKind::kInt:
      out.int_value = attr.i;
      break;
    case AttributeKind::kString:
      text = ShortString(attr.s);
      break;
    case AttributeKind::kTensor:
      text = describe(attr.t);
      break;
    case AttributeKind::kGraph:
      out.subgraph = add_body(attr.g);
      text = fmt::format("graph {}", ShortString(body_graph(attr.g).name));
      break;
    case AttributeKind::kFloats:
      text = FormatList(span_of(g.floats, attr.floats_begin, attr.floats_end),
                        number);
      break;
    case AttributeKind::kInts:
      text =
          FormatList(span_of(g.ints, attr.ints_begin, attr.ints_end), number);
      break;
    case AttributeKind::kStrings:
      text = FormatList(
          span_of(g.strings, attr.strings_begin, attr.strings_end), quoted);
      break;
    case AttributeKind::kTensors:
      text = FormatList(
          span_of(g.tensors, attr.tensors_begin, attr.tensors_end), describe);
      break;
    case AttributeKind::kGraphs:
      for (uint32_t k = attr.graphs_begin; k < attr.graphs_end; ++k) {
        GraphId id = add_body(g.graph_refs[k]);
        if (!out.subgraph.valid()) out.subgraph = id;
      }
      text =
          fmt::format("graphs ({} items)", attr.graphs_end - attr.graphs_begin);
      break;
    case AttributeKind::kSparseTensor:
      // The decoder declines sparse_tensor fields: this is the default.
      text = fmt::format("sparse_tensor {}{}", DataTypeName(0),
                         FormatDims(std::span<const int64_t>()));
      break;
    case AttributeKind::kTypeProto:
      text = "type";
      break;
    case AttributeKind::kOther:
    case AttributeKind::kUndefined:
      if (!attr.ref_attr_name.empty()) {
        text = "@" + ShortString(attr.ref_attr_name);
      }
      break;
  }
  out.text = model_.strings().Intern(text);
  return out;
}

void DirectConverter::ConvertGraph(uint32_t index, GraphId graph) {
  const DGraph& g = index == kNone ? empty_graph_ : d_.graphs[index];
  NameTable empty_table;
  NameTable& table = index == kNone ? empty_table : tables_[index];
  auto produce = [&](std::string_view name) {
    LocalValue& local = table.Get(name);
    if (!local.id.valid()) {
      local.id = model_.GetOrAddValue(graph, name);
      if (local.type != kNone) ApplyType(local.id, local.type);
    }
    return local.id;
  };

  for (const DInit& init : g.inits) {
    ValueId value = produce(init.name);
    table.Get(init.name).initializer = true;
    RecordInitializer(value, g, init);
  }
  for (const ValueInfo& input : g.inputs) {
    ValueId value = produce(input.name);
    // IR < 4 lists every initializer as a graph input too; those are
    // weights, not inputs a user feeds.
    if (table.Get(input.name).initializer) continue;
    model_.AddValueFlags(value, kValueGraphInput);
    model_.mutable_graph(graph).inputs.push_back(value);
  }
  for (std::string_view output : g.outs) {
    if (!output.empty()) produce(output);
  }

  std::vector<PendingBody> bodies;
  std::string graph_name(model_.str(model_.graph(graph).name));
  std::string name;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const DNode& node_info = g.nodes[n];
    // ONNX Runtime's profiler names unnamed nodes "<OpType>_<index>".
    if (node_info.name.empty()) {
      name = fmt::format("{}_{}", node_info.op_type, n);
    } else {
      name.assign(node_info.name);
    }
    NodeId node =
        model_.AddNode(graph, node_info.op_type, node_info.domain, name);
    for (uint32_t k = node_info.in_begin; k < node_info.in_end; ++k) {
      std::string_view input = g.ins[k];
      if (input.empty()) {
        model_.AddNodeInput(node, ValueId::Invalid());
        continue;
      }
      bool found = false;
      ValueId value = ResolveInput(index, graph, input, &found);
      if (!found) {
        Report(DiagnosticCode::kDanglingInput, NodeLocation(node_info),
               fmt::format("node '{}' ({}) input {} '{}' is produced by no "
                           "node, graph input or initializer of graph '{}' "
                           "or an enclosing graph",
                           ShortString(name), ShortString(node_info.op_type),
                           k - node_info.in_begin, ShortString(input),
                           ShortString(graph_name)));
      }
      model_.AddNodeInput(node, value);
    }
    for (uint32_t k = node_info.out_begin; k < node_info.out_end; ++k) {
      std::string_view output = g.outs[k];
      model_.AddNodeOutput(
          node, output.empty() ? ValueId::Invalid() : table.Get(output).id);
    }
    for (uint32_t k = node_info.attr_begin; k < node_info.attr_end; ++k) {
      model_.AddNodeAttribute(
          node, ConvertAttribute(g, g.attrs[k], graph, node, name, &bodies));
    }
  }
  for (const ValueInfo& output : g.outputs) {
    bool found = false;
    ValueId value = ResolveInput(index, graph, output.name, &found);
    if (!found) {
      Report(DiagnosticCode::kDanglingInput, SourceLocation{ctx_.path},
             fmt::format("graph output '{}' of graph '{}' is produced by no "
                         "node, graph input or initializer",
                         ShortString(output.name),
                         ShortString(model_.str(model_.graph(graph).name))));
      if (output.type != kNone) ApplyType(value, output.type);
    }
    model_.AddValueFlags(value, kValueGraphOutput);
    model_.mutable_graph(graph).outputs.push_back(value);
  }

  model_.AssignScopesFromNames(graph);
  CheckGraphCycles(
      model_, graph, [&](size_t i) { return NodeLocation(g.nodes[i]); },
      [&](DiagnosticCode code, SourceLocation location, std::string message) {
        Report(code, std::move(location), std::move(message));
      });

  for (const PendingBody& body : bodies) {
    // kNone: an absent body (type GRAPH, no g) is an empty graph.
    ConvertGraph(body.graph_index, body.graph);
  }
}

}  // namespace

bool TryImportOnnxDirect(std::string_view file_bytes,
                         const OnnxConvertOptions& options, ImportContext& ctx,
                         const PrefetchHook& prefetch) {
  if (ctx.model == nullptr) return false;
  Decoder decoder(ctx.path, file_bytes.size(), prefetch);
  if (!decoder.DecodeModel(file_bytes)) return false;
  DirectConverter converter(decoder, options, ctx);
  if (!converter.Prepare()) return false;
  converter.Convert();
  return true;
}

}  // namespace mi::importers::onnx_import
