#include "importers/common/ge_model/ge_model_converter.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "importers/common/ge_model/ge_ir_subset.pb.h"
#include "model/model.h"

namespace mi::importers::ge {
namespace {

constexpr std::string_view kOriginNamesAttr = "_datadump_original_op_names";
// Nested subgraphs deeper than this are not followed (hostile input).
constexpr int kMaxSubgraphDepth = 64;
// Attribute texts are capped: a weight tensor or a long list is shown, not
// copied whole.
constexpr size_t kMaxAttrText = 256;

// GE's DataType numbering to ONNX's (the model's lingua franca); 0 when ONNX
// has no such type.
int32_t OnnxDataType(int ge) {
  switch (ge) {
    case ge_ir::DT_FLOAT:
      return 1;
    case ge_ir::DT_UINT8:
      return 2;
    case ge_ir::DT_INT8:
      return 3;
    case ge_ir::DT_UINT16:
      return 4;
    case ge_ir::DT_INT16:
      return 5;
    case ge_ir::DT_INT32:
      return 6;
    case ge_ir::DT_INT64:
      return 7;
    case ge_ir::DT_STRING:
      return 8;
    case ge_ir::DT_BOOL:
      return 9;
    case ge_ir::DT_FLOAT16:
      return 10;
    case ge_ir::DT_DOUBLE:
      return 11;
    case ge_ir::DT_UINT32:
      return 12;
    case ge_ir::DT_UINT64:
      return 13;
    case ge_ir::DT_COMPLEX64:
      return 14;
    case ge_ir::DT_COMPLEX128:
      return 15;
    case ge_ir::DT_BF16:
      return 16;
    case ge_ir::DT_FLOAT8_E4M3FN:
      return 17;
    case ge_ir::DT_FLOAT8_E5M2:
      return 19;
    case ge_ir::DT_INT4:
      return 22;
    default:
      return 0;
  }
}

void AppendCapped(std::string& out, std::string_view piece) {
  if (out.size() >= kMaxAttrText) return;
  out.append(piece.substr(0, kMaxAttrText - out.size()));
}

std::string ListText(const ge_ir::AttrDef::ListValue& list, bool* strings) {
  std::string out = "[";
  *strings = false;
  auto sep = [&out] {
    if (out.size() > 1) AppendCapped(out, ", ");
  };
  for (const std::string& s : list.s()) {
    sep();
    AppendCapped(out, s);
    *strings = true;
  }
  for (int64_t i : list.i()) {
    sep();
    AppendCapped(out, std::to_string(i));
  }
  for (float f : list.f()) {
    sep();
    AppendCapped(out, fmt::format("{}", f));
  }
  for (bool b : list.b()) {
    sep();
    AppendCapped(out, b ? "true" : "false");
  }
  for (int64_t dt : list.dt()) {
    sep();
    AppendCapped(out, ge_ir::DataType_IsValid(static_cast<int>(dt))
                          ? ge_ir::DataType_Name(static_cast<int>(dt))
                          : std::to_string(dt));
  }
  if (list.td_size() > 0) {
    sep();
    AppendCapped(out, fmt::format("{} tensor descs", list.td_size()));
  }
  if (list.t_size() > 0) {
    sep();
    AppendCapped(out, fmt::format("{} tensors", list.t_size()));
  }
  if (list.g_size() > 0) {
    sep();
    AppendCapped(out, fmt::format("{} graphs", list.g_size()));
  }
  if (out.size() >= kMaxAttrText) out += "...";
  out += "]";
  return out;
}

std::string ShapeText(const ge_ir::ShapeDef& shape) {
  std::string out = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(shape.dim(i));
  }
  return out + "]";
}

// The display form of an attribute and its kind in the model.
Attribute ConvertAttr(Model& model, const std::string& name,
                      const ge_ir::AttrDef& value) {
  Attribute a;
  a.name = model.strings().Intern(name);
  std::string text;
  switch (value.value_case()) {
    case ge_ir::AttrDef::kS:
    case ge_ir::AttrDef::kExpression:
      a.kind = AttributeKind::kString;
      AppendCapped(text, value.value_case() == ge_ir::AttrDef::kS
                             ? value.s()
                             : value.expression());
      break;
    case ge_ir::AttrDef::kI:
      a.kind = AttributeKind::kInt;
      a.int_value = value.i();
      text = std::to_string(value.i());
      break;
    case ge_ir::AttrDef::kF:
      a.kind = AttributeKind::kFloat;
      a.float_value = value.f();
      text = fmt::format("{}", value.f());
      break;
    case ge_ir::AttrDef::kB:
      a.kind = AttributeKind::kInt;
      a.int_value = value.b() ? 1 : 0;
      text = value.b() ? "true" : "false";
      break;
    case ge_ir::AttrDef::kDt:
      a.kind = AttributeKind::kInt;
      a.int_value = value.dt();
      text = ge_ir::DataType_IsValid(static_cast<int>(value.dt()))
                 ? ge_ir::DataType_Name(static_cast<int>(value.dt()))
                 : std::to_string(value.dt());
      break;
    case ge_ir::AttrDef::kList: {
      bool strings = false;
      text = ListText(value.list(), &strings);
      a.kind = strings                     ? AttributeKind::kStrings
               : value.list().f_size() > 0 ? AttributeKind::kFloats
                                           : AttributeKind::kInts;
      break;
    }
    case ge_ir::AttrDef::kTd:
      a.kind = AttributeKind::kTensor;
      text = fmt::format("{}{}", ge_ir::DataType_Name(value.td().dtype()),
                         ShapeText(value.td().shape()));
      break;
    case ge_ir::AttrDef::kT:
      a.kind = AttributeKind::kTensor;
      text = fmt::format(
          "{}{} ({} bytes)", ge_ir::DataType_Name(value.t().desc().dtype()),
          ShapeText(value.t().desc().shape()), value.t().data().size());
      break;
    case ge_ir::AttrDef::kG:
      a.kind = AttributeKind::kGraph;
      text = value.g().name();
      break;
    case ge_ir::AttrDef::kFunc:
      a.kind = AttributeKind::kOther;
      text = value.func().name();
      break;
    case ge_ir::AttrDef::kBt:
      a.kind = AttributeKind::kOther;
      text = fmt::format("{} bytes", value.bt().size());
      break;
    case ge_ir::AttrDef::kListListInt:
    case ge_ir::AttrDef::kListListFloat:
      a.kind = AttributeKind::kOther;
      text = "list of lists";
      break;
    case ge_ir::AttrDef::VALUE_NOT_SET:
      a.kind = AttributeKind::kUndefined;
      break;
  }
  a.text = model.strings().Intern(text);
  return a;
}

std::string_view AttrString(const ge_ir::TensorDescriptor& desc,
                            std::string_view key) {
  auto it = desc.attr().find(std::string(key));
  if (it == desc.attr().end()) return {};
  if (it->second.value_case() == ge_ir::AttrDef::kS) return it->second.s();
  return {};
}

std::string AttrInts(const ge_ir::TensorDescriptor& desc,
                     std::string_view key) {
  auto it = desc.attr().find(std::string(key));
  if (it == desc.attr().end() ||
      it->second.value_case() != ge_ir::AttrDef::kList) {
    return {};
  }
  std::string out = "[";
  for (int i = 0; i < it->second.list().i_size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(it->second.list().i(i));
  }
  return out + "]";
}

// "src:3" -> ("src", 3); a name with no index is output 0.
bool SplitInput(std::string_view input, std::string_view* op, int64_t* index) {
  size_t colon = input.rfind(':');
  if (colon == std::string_view::npos) {
    *op = input;
    *index = 0;
    return true;
  }
  *op = input.substr(0, colon);
  std::optional<int64_t> parsed =
      ParseInteger<int64_t>(input.substr(colon + 1));
  if (parsed) *index = *parsed;
  return parsed.has_value();
}

class Converter {
 public:
  Converter(const ge_ir::ModelDef& model, std::string_view stage,
            ImportContext& ctx, const GeModelExtras* extras = nullptr)
      : def_(model),
        stage_(stage),
        ctx_(ctx),
        model_(*ctx.model),
        extras_(extras) {
    for (int g = 0; g < def_.graph_size(); ++g) {
      graph_index_.emplace(def_.graph(g).name(), g);
    }
  }

  // The model's name, version and scalar attributes (soc_version,
  // framework_type, ...) as the model-properties panel shows them; lists
  // such as the task index are left out.
  void AddMetadata(GraphInfo* info) {
    auto add = [&](std::string_view key, std::string_view value) {
      info->metadata.emplace_back(model_.strings().Intern(key),
                                  model_.strings().Intern(value));
    };
    if (!def_.name().empty()) add("model name", def_.name());
    if (def_.version() != 0) add("version", std::to_string(def_.version()));
    if (!def_.custom_version().empty()) {
      add("custom version", def_.custom_version());
    }
    std::vector<std::pair<std::string, std::string>> attrs;
    for (const auto& [key, a] : def_.attr()) {
      switch (a.value_case()) {
        case ge_ir::AttrDef::kS:
          if (a.s().size() <= 256) attrs.emplace_back(key, a.s());
          break;
        case ge_ir::AttrDef::kI:
          attrs.emplace_back(key, std::to_string(a.i()));
          break;
        case ge_ir::AttrDef::kF:
          attrs.emplace_back(key, fmt::format("{}", a.f()));
          break;
        case ge_ir::AttrDef::kB:
          attrs.emplace_back(key, a.b() ? "true" : "false");
          break;
        default:
          break;
      }
    }
    // Protobuf maps have no order: sorted, so the panel is stable.
    std::sort(attrs.begin(), attrs.end());
    for (const auto& [key, value] : attrs) add(key, value);
  }

  // om_task_count: how many device tasks the op launches.
  void AddTaskCount(NodeId node, int64_t count) {
    Attribute a;
    a.name = model_.strings().Intern("om_task_count");
    a.kind = AttributeKind::kInt;
    a.int_value = count;
    a.text = model_.strings().Intern(std::to_string(count));
    model_.AddNodeAttribute(node, a);
  }

  Status Run() {
    // An .om's task list (ATC JSON model attr task_index_op_name: the op of
    // each task in TASK_INFO order; atomic-clean ops appear twice): how many
    // device tasks each op launches, shown on the node.
    // An .om read directly counts them from TASK_INFO itself (extras_), which
    // also holds the tasks of merged submodels.
    auto tasks = def_.attr().find("task_index_op_name");
    if (extras_ == nullptr && tasks != def_.attr().end() &&
        tasks->second.value_case() == ge_ir::AttrDef::kList) {
      for (const std::string& op : tasks->second.list().s()) {
        ++task_count_[op];
      }
    }
    if (def_.graph_size() == 0) {
      return MalformedInputError(
          ctx_.path +
          ": no graph in the GE model; expected at least one 'graph { ... }'");
    }
    level_ = ChooseLevel();
    std::string name =
        def_.graph(0).name().empty() ? def_.name() : def_.graph(0).name();
    GraphId root = model_.AddGraph(level_, name, ctx_.path);
    GraphInfo& info = model_.mutable_graph(root);
    std::string producer = "GE";
    if (!stage_.empty()) producer += " " + std::string(stage_);
    if (extras_ != nullptr && !extras_->producer.empty()) {
      producer = extras_->producer;
    }
    info.producer = model_.strings().Intern(producer);
    AddMetadata(&info);
    if (extras_ != nullptr) {
      for (const auto& [key, value] : extras_->metadata) {
        info.metadata.emplace_back(model_.strings().Intern(key),
                                   model_.strings().Intern(value));
      }
    }
    used_.assign(static_cast<size_t>(def_.graph_size()), false);
    used_[0] = true;
    MI_RETURN_IF_ERROR(ConvertGraph(def_.graph(0), root, 0));
    // Graphs no op names as its subgraph still belong to the model (a
    // partition's other subgraphs): nested under the root, no parent node.
    for (int g = 1; g < def_.graph_size(); ++g) {
      if (used_[g]) continue;
      used_[g] = true;
      GraphId sub =
          model_.AddGraph(level_, def_.graph(g).name(), ctx_.path, root);
      MI_RETURN_IF_ERROR(ConvertGraph(def_.graph(g), sub, 1));
    }
    ctx_.graphs_added.push_back(root);
    return Status::Ok();
  }

 private:
  LayerLevel ChooseLevel() const {
    if (ctx_.level_hint == LevelHint::kFramework) return LayerLevel::kFramework;
    if (ctx_.level_hint == LevelHint::kCompiled) return LayerLevel::kCompiled;
    if (!stage_.empty()) {
      return IsCompiledStage(stage_) ? LayerLevel::kCompiled
                                     : LayerLevel::kFramework;
    }
    // No stage in the name: a graph whose ops say which framework ops they
    // came from has been through fusion.
    for (const ge_ir::GraphDef& g : def_.graph()) {
      for (const ge_ir::OpDef& op : g.op()) {
        if (op.attr().count(std::string(kOriginNamesAttr))) {
          return LayerLevel::kCompiled;
        }
      }
    }
    return LayerLevel::kFramework;
  }

  Status ConvertGraph(const ge_ir::GraphDef& graph, GraphId id, int depth) {
    // Producers first: every op's outputs are tensors "op:i" typed from its
    // output_desc, so inputs can be resolved in any order.
    std::unordered_map<std::string_view, int> op_index;
    for (int i = 0; i < graph.op_size(); ++i) {
      op_index.emplace(graph.op(i).name(), i);
    }
    // Outputs an op must have: its output_desc entries, and any index a
    // consumer reads beyond them (dumps at basic levels omit descs).
    std::vector<int64_t> output_count(static_cast<size_t>(graph.op_size()), 0);
    for (int i = 0; i < graph.op_size(); ++i) {
      output_count[i] = graph.op(i).output_desc_size();
    }
    for (const ge_ir::OpDef& op : graph.op()) {
      for (const std::string& input : op.input()) {
        std::string_view src;
        int64_t index = 0;
        if (input.empty() || !SplitInput(input, &src, &index) || index < 0) {
          continue;
        }
        auto it = op_index.find(src);
        if (it != op_index.end() && index < (int64_t{1} << 20)) {
          output_count[it->second] =
              std::max(output_count[it->second], index + 1);
        }
      }
    }
    int op_position = 0;
    for (const ge_ir::OpDef& op : graph.op()) {
      NodeId node = model_.AddNode(id, op.type(), "ge", op.name());
      std::string control;
      for (const std::string& input : op.input()) {
        if (input.empty()) {
          model_.AddNodeInput(node, ValueId::Invalid());  // absent optional
          continue;
        }
        std::string_view src;
        int64_t index = 0;
        if (!SplitInput(input, &src, &index)) {
          ctx_.diagnostics->Report(
              DiagnosticCode::kDanglingInput, {ctx_.path},
              fmt::format("op '{}': input '{}' is not 'name:index'", op.name(),
                          input));
          model_.AddNodeInput(node, ValueId::Invalid());
          continue;
        }
        if (index < 0) {  // control edge "src:-1"
          if (!control.empty()) control += ", ";
          control += src;
          continue;
        }
        ValueId v = model_.GetOrAddValue(id, input);
        model_.AddNodeInput(node, v);
        if (op_index.find(src) == op_index.end() && depth == 0) {
          ctx_.diagnostics->Report(
              DiagnosticCode::kDanglingInput, {ctx_.path},
              fmt::format("op '{}' ({}): input '{}' names no op of graph '{}'",
                          op.name(), op.type(), input, graph.name()));
        }
      }
      // Outputs "op:i", typed from the output_desc when there is one.
      int64_t outputs = output_count[op_position++];
      for (int64_t i = 0; i < outputs; ++i) {
        ValueId v =
            model_.GetOrAddValue(id, fmt::format("{}:{}", op.name(), i));
        model_.AddNodeOutput(node, v);
        if (i < op.output_desc_size()) {
          DescribeTensor(v, op.output_desc(static_cast<int>(i)));
        }
      }
      // Attributes in key order: maps have no order of their own.
      std::vector<const std::string*> keys;
      keys.reserve(op.attr().size());
      for (const auto& [key, value] : op.attr()) keys.push_back(&key);
      std::sort(
          keys.begin(), keys.end(),
          [](const std::string* a, const std::string* b) { return *a < *b; });
      for (const std::string* key : keys) {
        const ge_ir::AttrDef& value = op.attr().at(*key);
        model_.AddNodeAttribute(node, ConvertAttr(model_, *key, value));
        if (*key == kOriginNamesAttr &&
            value.value_case() == ge_ir::AttrDef::kList) {
          for (const std::string& origin : value.list().s()) {
            model_.AddNodeOriginName(node, model_.strings().Intern(origin));
          }
        }
      }
      if (auto it = task_count_.find(op.name()); it != task_count_.end()) {
        AddTaskCount(node, it->second);
      }
      if (extras_ != nullptr) AddOmExtras(op, node);
      if (op.stream_id() != 0) {
        Attribute a;
        a.name = model_.strings().Intern("stream_id");
        a.kind = AttributeKind::kInt;
        a.int_value = op.stream_id();
        a.text = model_.strings().Intern(std::to_string(op.stream_id()));
        model_.AddNodeAttribute(node, a);
      }
      if (!control.empty()) {
        Attribute a;
        a.name = model_.strings().Intern("control_inputs");
        a.kind = AttributeKind::kStrings;
        a.text = model_.strings().Intern("[" + control + "]");
        model_.AddNodeAttribute(node, a);
      }
      pending_subgraphs_.clear();
      for (const std::string& sub : op.subgraph_name()) {
        auto it = graph_index_.find(sub);
        if (it == graph_index_.end() || used_[it->second]) continue;
        pending_subgraphs_.push_back(it->second);
      }
      std::vector<int> subgraphs = pending_subgraphs_;
      for (int g : subgraphs) {
        used_[g] = true;
        Attribute a;
        a.name = model_.strings().Intern("subgraph");
        a.kind = AttributeKind::kGraph;
        a.text = model_.strings().Intern(def_.graph(g).name());
        // The subgraph is created after the node's lists are complete.
        deferred_.push_back({node, g});
        model_.AddNodeAttribute(node, a);
      }
    }
    // Graph outputs: the names GraphDef.output lists ("op:i").
    for (const std::string& out : graph.output()) {
      ValueId v = model_.FindValue(id, out);
      if (!v.valid()) continue;
      model_.AddValueFlags(v, kValueGraphOutput);
      model_.mutable_graph(id).outputs.push_back(v);
    }
    std::vector<std::pair<NodeId, int>> deferred;
    deferred.swap(deferred_);
    for (auto [node, g] : deferred) {
      if (depth + 1 > kMaxSubgraphDepth) {
        return MalformedInputError(fmt::format(
            "{}: subgraphs nested deeper than {} levels (graph '{}')",
            ctx_.path, kMaxSubgraphDepth, def_.graph(g).name()));
      }
      GraphId sub =
          model_.AddGraph(level_, def_.graph(g).name(), ctx_.path, id, node);
      MI_RETURN_IF_ERROR(ConvertGraph(def_.graph(g), sub, depth + 1));
    }
    return Status::Ok();
  }

  // An .om's tasks and kernel binary for the op, and a Const's weight size.
  void AddOmExtras(const ge_ir::OpDef& op, NodeId node) {
    auto add = [&](std::string_view name, std::string_view text) {
      Attribute a;
      a.name = model_.strings().Intern(name);
      a.kind = AttributeKind::kString;
      a.text = model_.strings().Intern(text);
      model_.AddNodeAttribute(node, a);
    };
    if (auto it = extras_->op_tasks.find(op.name());
        it != extras_->op_tasks.end()) {
      AddTaskCount(node, static_cast<int64_t>(it->second.size()));
      for (size_t i = 0; i < it->second.size(); ++i) {
        add(fmt::format("om_task_{}", i), it->second[i]);
      }
    }
    if (auto it = extras_->op_kernels.find(op.name());
        it != extras_->op_kernels.end()) {
      add("om_kernel_binary", it->second);
    }
    if (extras_->const_weight_sizes &&
        (op.type() == "Const" || op.type() == "Constant")) {
      auto value = op.attr().find("value");
      std::span<const ValueId> outputs = model_.node_outputs(node);
      if (value != op.attr().end() &&
          value->second.value_case() == ge_ir::AttrDef::kT &&
          !outputs.empty() && outputs[0].valid()) {
        const ge_ir::TensorDef& t = value->second.t();
        uint64_t bytes = t.desc().weight_size() > 0
                             ? static_cast<uint64_t>(t.desc().weight_size())
                             : t.data().size();
        model_.SetValueData(outputs[0], bytes, StringPool::kEmpty);
        add("om_weight_bytes", t.desc().weight_size() > 0
                                   ? fmt::format("{} (WEIGHTS_DATA offset {})",
                                                 bytes, t.desc().data_offset())
                                   : fmt::format("{} (inline)", bytes));
      }
    }
  }

  void DescribeTensor(ValueId v, const ge_ir::TensorDescriptor& desc) {
    model_.SetValueType(v, OnnxDataType(desc.dtype()));
    if (desc.has_shape()) {
      dims_.assign(desc.shape().dim().begin(), desc.shape().dim().end());
      // GE writes -1 (unknown) and -2 (unknown rank) dims.
      if (std::find(dims_.begin(), dims_.end(), -2) == dims_.end()) {
        for (int64_t& d : dims_) d = d < 0 ? -1 : d;
        names_.assign(dims_.size(), StringPool::kEmpty);
        model_.SetValueShape(v, dims_, names_);
      }
    }
    std::string_view origin_format = AttrString(desc, "origin_format");
    std::string origin_shape = AttrInts(desc, "origin_shape");
    model_.SetValueLayout(v, model_.strings().Intern(desc.layout()),
                          model_.strings().Intern(origin_format),
                          model_.strings().Intern(origin_shape));
  }

  const ge_ir::ModelDef& def_;
  std::string_view stage_;
  ImportContext& ctx_;
  Model& model_;
  const GeModelExtras* extras_;
  LayerLevel level_ = LayerLevel::kFramework;
  std::unordered_map<std::string_view, int> graph_index_;
  std::unordered_map<std::string, int64_t> task_count_;
  std::vector<bool> used_;
  std::vector<int> pending_subgraphs_;
  std::vector<std::pair<NodeId, int>> deferred_;
  std::vector<int64_t> dims_;
  std::vector<StringId> names_;
};

}  // namespace

Status ConvertGeModel(const ge_ir::ModelDef& model, std::string_view stage,
                      ImportContext& ctx) {
  if (ctx.model == nullptr) {
    return InternalError("ConvertGeModel: ImportContext has no model");
  }
  return Converter(model, stage, ctx).Run();
}

Status ConvertGeModel(const ge_ir::ModelDef& model, std::string_view stage,
                      ImportContext& ctx, const GeModelExtras& extras) {
  if (ctx.model == nullptr) {
    return InternalError("ConvertGeModel: ImportContext has no model");
  }
  return Converter(model, stage, ctx, &extras).Run();
}

}  // namespace mi::importers::ge
