// GE's ONNX graph dumps (ge_onnx_*.pbtxt): protobuf text of an ONNX
// ModelProto in which GE writes its ops as "ge:<Type>", tensors as
// "op:index", the tensor descs as node attributes (output_desc_layout:<i>,
// output_desc_origin_layout:<i>, output_desc_origin_shape:<i>, ...) and, at
// DUMP_GE_GRAPH=1, _datadump_original_op_names
// (shared/formats/ascend.md §3.5). Parsed with protobuf's text format
// into libonnx's ModelProto, then converted like any ONNX model.

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/strings.h"
#include "importers/common/ge_dump_names.h"
#include "importers/common/protobuf_text.h"
#include "importers/onnx/onnx_importer.h"
#include "importers/onnx/onnx_model_converter.h"
#include "model/model.h"
#include "onnx/onnx_pb.h"

namespace mi::importers {
namespace {

const ::onnx::AttributeProto* FindAttr(const ::onnx::NodeProto& node,
                                       const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

class GeOnnxImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor = new ImporterDescriptor{
        "ge_onnx_text",
        {".pbtxt"},
        4,
        ContentKind::kGraph,
        "a GE graph dump as ONNX text (ge_onnx_*.pbtxt)"};
    return *kDescriptor;
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    head = head.substr(0, kSniffLookahead);
    for (char c : head) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 && c != '\n' && c != '\r' && c != '\t') return 0;
    }
    bool named = FileNameOf(path).starts_with("ge_onnx_");
    bool onnx_text = head.find("ir_version:") != std::string_view::npos &&
                     head.find("graph {") != std::string_view::npos;
    bool ge_ops = head.find("op_type: \"ge:") != std::string_view::npos;
    if (onnx_text && ge_ops) return named ? 95 : 85;
    if (named && onnx_text) return 80;
    return 0;
  }

  Status Import(ImportContext& ctx) const override {
    MemoryCharge text_charge(ctx.budget);
    MI_ASSIGN_OR_RETURN(std::string text, ReadTextToParse(ctx, &text_charge));
    return ImportGeOnnxTextFromBuffer(text, ctx);
  }
};

}  // namespace

Status ImportGeOnnxTextFromBuffer(std::string_view text, ImportContext& ctx) {
  if (ctx.model == nullptr) {
    return InternalError("ImportGeOnnxTextFromBuffer: no model");
  }
  ::onnx::ModelProto model;
  MI_RETURN_IF_ERROR(ParseProtobufText(
      text, ctx.path, "protobuf text of an ONNX ModelProto (a GE ge_onnx dump)",
      &model));
  if (!model.has_graph()) {
    return MalformedInputError(fmt::format(
        "{}: no 'graph {{ ... }}'; expected a GE ge_onnx dump", ctx.path));
  }
  // GE's op types carry a "ge:" prefix (for Netron): the type is the rest,
  // in GE's own domain (no ONNX schema applies).
  // Control edges are written as inputs "src:-1" (and outputs "name:-1"):
  // they carry no tensor, so they become a control_inputs attribute.
  auto is_control = [](const std::string& s) {
    return s.size() > 3 && s.compare(s.size() - 3, 3, ":-1") == 0;
  };
  for (auto& node : *model.mutable_graph()->mutable_node()) {
    std::string_view type = node.op_type();
    if (type.substr(0, 3) == "ge:") {
      node.set_op_type(std::string(type.substr(3)));
      node.set_domain("ge");
    }
    std::string control;
    auto* inputs = node.mutable_input();
    for (int i = inputs->size(); i-- > 0;) {
      if (!is_control(inputs->Get(i))) continue;
      std::string src = inputs->Get(i).substr(0, inputs->Get(i).size() - 3);
      control = control.empty() ? src : src + ", " + control;
      inputs->erase(inputs->begin() + i);
    }
    auto* outputs = node.mutable_output();
    for (int i = outputs->size(); i-- > 0;) {
      if (is_control(outputs->Get(i))) outputs->erase(outputs->begin() + i);
    }
    if (!control.empty()) {
      auto* a = node.add_attribute();
      a->set_name("control_inputs");
      a->set_type(::onnx::AttributeProto::STRING);
      a->set_s("[" + control + "]");
    }
  }
  ge::DumpFileName name = ge::ParseDumpFileName(ctx.path);
  if (ctx.level_hint == LevelHint::kAuto && !name.stage.empty()) {
    ctx.level_hint = ge::IsCompiledStage(name.stage) ? LevelHint::kCompiled
                                                     : LevelHint::kFramework;
  }
  onnx_import::OnnxConvertOptions options;
  options.run_shape_inference = false;  // GE ops have no ONNX schema
  size_t before = ctx.graphs_added.size();
  MI_RETURN_IF_ERROR(onnx_import::ConvertOnnxModel(model, options, ctx));
  // Layouts from the per-output desc attributes.
  Model& m = *ctx.model;
  for (size_t i = before; i < ctx.graphs_added.size(); ++i) {
    GraphId root = ctx.graphs_added[i];
    if (!name.stage.empty()) {
      m.mutable_graph(root).producer = m.strings().Intern("GE " + name.stage);
    }
    // Nodes keep file order, so the i-th proto node is the i-th node of the
    // root graph (by position: a repeated name must not borrow another
    // node's layouts).
    auto root_nodes = m.graph_nodes(root);
    const bool by_position =
        root_nodes.size() == static_cast<size_t>(model.graph().node_size());
    for (int index = 0; index < model.graph().node_size(); ++index) {
      const auto& node = model.graph().node(index);
      NodeId n = by_position ? root_nodes[static_cast<size_t>(index)]
                             : m.FindNode(root, node.name());
      if (!n.valid()) continue;
      auto outputs = m.node_outputs(n);
      for (size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].valid()) continue;
        const auto* layout =
            FindAttr(node, fmt::format("output_desc_layout:{}", k));
        const auto* origin =
            FindAttr(node, fmt::format("output_desc_origin_layout:{}", k));
        const auto* origin_shape =
            FindAttr(node, fmt::format("output_desc_origin_shape:{}", k));
        std::string shape;
        if (origin_shape != nullptr) {
          shape = "[";
          for (int d = 0; d < origin_shape->ints_size(); ++d) {
            if (d > 0) shape += ",";
            shape += std::to_string(origin_shape->ints(d));
          }
          shape += "]";
        }
        if (layout == nullptr && origin == nullptr && shape.empty()) continue;
        m.SetValueLayout(outputs[k],
                         m.strings().Intern(layout ? layout->s() : ""),
                         m.strings().Intern(origin ? origin->s() : ""),
                         m.strings().Intern(shape));
      }
    }
  }
  return Status::Ok();
}

std::unique_ptr<Importer> CreateGeOnnxTextImporter() {
  return std::make_unique<GeOnnxImporter>();
}

}  // namespace mi::importers
