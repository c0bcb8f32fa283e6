// GE graph dumps (ge_proto_*.txt: protobuf text of ModelDef) and ATC JSON
// (`atc --mode=1` / `--mode=5` output: the same ModelDef as JSON with maps as
// [{key, value}] arrays, enums as names or numbers and floats as strings).
// Both become a ge_ir::ModelDef (our subset schema) and go through one
// converter.

#include "importers/ge/ge_importer.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/checked_math.h"
#include "base/strings.h"
#include "importers/common/ge_model/ge_ir_subset.pb.h"
#include "importers/common/ge_model/ge_model_converter.h"
#include "importers/common/protobuf_text.h"
#include "importers/common/run_files.h"

namespace mi::importers {
namespace {

bool IsTextHead(std::string_view head) {
  for (char c : head) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
  }
  return true;
}

// ---------------------------------------------------------------- text

class GeProtoTextImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor =
        new ImporterDescriptor{"ge_proto_text",
                               {".txt"},
                               4,
                               ContentKind::kGraph,
                               "a GE graph dump (ge_proto_*.txt)"};
    return *kDescriptor;
  }

  // GE writes each stage twice by default (DUMP_GRAPH_FORMAT=ge_proto|onnx);
  // the ge_proto form always has _datadump_original_op_names (the ONNX form
  // only at DUMP_GE_GRAPH=1), so a ge_onnx dump whose ge_proto twin (same
  // folder, same index and stage) is in the run is left out.
  void ClaimRunFiles(RunFiles& files) const override {
    auto twin_key = [](std::string_view path, std::string_view prefix,
                       std::string_view ext) -> std::string {
      size_t slash = path.find_last_of('/');
      std::string_view folder =
          slash == std::string_view::npos ? "" : path.substr(0, slash + 1);
      std::string_view name =
          slash == std::string_view::npos ? path : path.substr(slash + 1);
      if (!name.starts_with(prefix) || !name.ends_with(ext) ||
          name.size() < prefix.size() + ext.size()) {
        return {};
      }
      name.remove_prefix(prefix.size());
      name.remove_suffix(ext.size());
      return std::string(folder) + std::string(name);
    };
    std::vector<std::string> protos;
    for (const RunFiles::File& f : files.files()) {
      std::string key = twin_key(f.path, "ge_proto_", ".txt");
      if (!key.empty()) protos.push_back(std::move(key));
    }
    if (protos.empty()) return;
    std::sort(protos.begin(), protos.end());
    for (size_t i = 0; i < files.files().size(); ++i) {
      std::string key = twin_key(files.files()[i].path, "ge_onnx_", ".pbtxt");
      if (!key.empty() &&
          std::binary_search(protos.begin(), protos.end(), key)) {
        files.LeaveOut(i,
                       "GE wrote this stage twice; its ge_proto twin, which "
                       "always carries _datadump_original_op_names, is read");
      }
    }
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    head = head.substr(0, kSniffLookahead);
    if (!IsTextHead(head)) return 0;
    std::string_view body = TrimLeft(head);
    bool named = FileNameOf(path).starts_with("ge_proto_");
    bool graph_first =
        body.rfind("graph {", 0) == 0 || body.rfind("graph{", 0) == 0;
    bool model_first = body.rfind("name:", 0) == 0 &&
                       head.find("\ngraph {") != std::string_view::npos;
    bool has_op = head.find("op {") != std::string_view::npos;
    if ((graph_first || model_first) && has_op) return named ? 95 : 75;
    if (named && (graph_first || model_first)) return 70;
    return 0;
  }

  Status Import(ImportContext& ctx) const override {
    MemoryCharge text_charge(ctx.budget);
    MI_ASSIGN_OR_RETURN(std::string text, ReadTextToParse(ctx, &text_charge));
    return ImportGeProtoTextFromBuffer(text, ctx);
  }
};

// ---------------------------------------------------------------- JSON

// Fills `out` (a ge_ir message) from Pb2Json's JSON: maps are arrays of
// {key, value}, enums names or numbers, numbers possibly strings.
class JsonToGe {
 public:
  explicit JsonToGe(std::string path) : path_(std::move(path)) {}

  Status Model(const nlohmann::json& j, ge_ir::ModelDef* out) {
    if (!j.is_object()) return Error("the top level", "an object");
    out->set_name(Str(j, "name"));
    for (const auto& g : Array(j, "graph")) {
      MI_RETURN_IF_ERROR(Graph(g, out->add_graph()));
    }
    return Attrs(j, "attr", out->mutable_attr());
  }

 private:
  Status Error(std::string_view where, std::string_view expected) const {
    return MalformedInputError(fmt::format(
        "{}: ATC JSON: {} is not {}; expected the output of `atc --mode=1` "
        "or `--mode=5`",
        path_, where, expected));
  }

  static const nlohmann::json& Array(const nlohmann::json& j,
                                     std::string_view key) {
    static const nlohmann::json kEmpty = nlohmann::json::array();
    auto it = j.find(key);
    return it != j.end() && it->is_array() ? *it : kEmpty;
  }
  static std::string Str(const nlohmann::json& j, std::string_view key) {
    auto it = j.find(key);
    if (it == j.end()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    return {};
  }
  static int64_t Int(const nlohmann::json& v) {
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number()) return SaturatingInt64(v.get<double>());
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      return std::strtoll(s.c_str(), nullptr, 10);
    }
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    return 0;
  }
  static double Float(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      return std::strtod(v.get_ref<const std::string&>().c_str(), nullptr);
    }
    return 0;
  }
  static bool Bool(const nlohmann::json& v) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_string()) return v.get<std::string>() == "true";
    return Int(v) != 0;
  }
  static int DataTypeOf(const nlohmann::json& v) {
    if (v.is_string()) {
      ge_ir::DataType dt = ge_ir::DT_UNDEFINED;
      if (ge_ir::DataType_Parse(v.get<std::string>(), &dt)) return dt;
      return static_cast<int>(Int(v));
    }
    return static_cast<int>(Int(v));
  }

  Status Graph(const nlohmann::json& j, ge_ir::GraphDef* out) {
    if (!j.is_object()) return Error("a graph", "an object");
    out->set_name(Str(j, "name"));
    for (const auto& s : Array(j, "input")) {
      if (s.is_string()) out->add_input(s.get<std::string>());
    }
    for (const auto& s : Array(j, "output")) {
      if (s.is_string()) out->add_output(s.get<std::string>());
    }
    for (const auto& op : Array(j, "op")) {
      MI_RETURN_IF_ERROR(Op(op, out->add_op()));
    }
    return Attrs(j, "attr", out->mutable_attr());
  }

  Status Op(const nlohmann::json& j, ge_ir::OpDef* out) {
    if (!j.is_object()) {
      return Error(fmt::format("an op of graph op list"), "an object");
    }
    out->set_name(Str(j, "name"));
    out->set_type(Str(j, "type"));
    if (j.contains("id")) out->set_id(Int(j["id"]));
    if (j.contains("stream_id")) out->set_stream_id(Int(j["stream_id"]));
    for (const auto& s : Array(j, "input")) {
      if (s.is_string()) out->add_input(s.get<std::string>());
    }
    for (const auto& s : Array(j, "subgraph_name")) {
      if (s.is_string()) out->add_subgraph_name(s.get<std::string>());
    }
    for (const auto& d : Array(j, "input_desc")) {
      MI_RETURN_IF_ERROR(Desc(d, out->add_input_desc()));
    }
    for (const auto& d : Array(j, "output_desc")) {
      MI_RETURN_IF_ERROR(Desc(d, out->add_output_desc()));
    }
    return Attrs(j, "attr", out->mutable_attr());
  }

  Status Desc(const nlohmann::json& j, ge_ir::TensorDescriptor* out) {
    if (!j.is_object()) return Error("a tensor descriptor", "an object");
    out->set_name(Str(j, "name"));
    if (j.contains("dtype")) {
      int dt = DataTypeOf(j["dtype"]);
      out->set_dtype(ge_ir::DataType_IsValid(dt)
                         ? static_cast<ge_ir::DataType>(dt)
                         : ge_ir::DT_UNDEFINED);
    }
    out->set_layout(Str(j, "layout"));
    out->set_device_type(Str(j, "device_type"));
    auto shape = j.find("shape");
    if (shape != j.end() && shape->is_object()) {
      ge_ir::ShapeDef* s = out->mutable_shape();
      for (const auto& d : Array(*shape, "dim")) s->add_dim(Int(d));
    }
    return Attrs(j, "attr", out->mutable_attr());
  }

  template <typename Map>
  Status Attrs(const nlohmann::json& j, std::string_view key, Map* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return Status::Ok();
    if (it->is_object()) {  // a plain object map, in case a writer uses one
      for (const auto& [k, v] : it->items()) {
        MI_RETURN_IF_ERROR(Attr(v, &(*out)[k], 0));
      }
      return Status::Ok();
    }
    if (!it->is_array()) return Error(fmt::format("'{}'", key), "an array");
    for (const auto& entry : *it) {
      if (!entry.is_object() || !entry.contains("key")) {
        return Error(fmt::format("an entry of '{}'", key),
                     "a {\"key\", \"value\"} object");
      }
      std::string k = Str(entry, "key");
      auto v = entry.find("value");
      if (v == entry.end() || v->is_null()) continue;
      MI_RETURN_IF_ERROR(Attr(*v, &(*out)[k], 0));
    }
    return Status::Ok();
  }

  Status Attr(const nlohmann::json& j, ge_ir::AttrDef* out, int depth) {
    if (depth > 32) return Error("an attribute", "nested less than 32 deep");
    if (!j.is_object()) return Status::Ok();  // null or odd: no value
    if (j.contains("s")) {
      out->set_s(Str(j, "s"));
    } else if (j.contains("i")) {
      out->set_i(Int(j["i"]));
    } else if (j.contains("f")) {
      out->set_f(static_cast<float>(Float(j["f"])));
    } else if (j.contains("b")) {
      out->set_b(Bool(j["b"]));
    } else if (j.contains("dt")) {
      out->set_dt(DataTypeOf(j["dt"]));
    } else if (j.contains("list")) {
      const nlohmann::json& l = j["list"];
      ge_ir::AttrDef::ListValue* list = out->mutable_list();
      if (l.is_object()) {
        for (const auto& v : Array(l, "s")) {
          list->add_s(v.is_string() ? v.get<std::string>() : v.dump());
        }
        for (const auto& v : Array(l, "i")) list->add_i(Int(v));
        for (const auto& v : Array(l, "f")) {
          list->add_f(static_cast<float>(Float(v)));
        }
        for (const auto& v : Array(l, "b")) list->add_b(Bool(v));
        for (const auto& v : Array(l, "dt")) list->add_dt(DataTypeOf(v));
        for (const auto& v : Array(l, "td")) {
          MI_RETURN_IF_ERROR(Desc(v, list->add_td()));
        }
      }
    } else if (j.contains("td")) {
      MI_RETURN_IF_ERROR(Desc(j["td"], out->mutable_td()));
    } else if (j.contains("t")) {
      const nlohmann::json& t = j["t"];
      if (t.is_object() && t.contains("desc")) {
        MI_RETURN_IF_ERROR(Desc(t["desc"], out->mutable_t()->mutable_desc()));
      } else {
        out->mutable_t();
      }
    } else if (j.contains("g")) {
      const nlohmann::json& g = j["g"];
      out->mutable_g()->set_name(g.is_object() ? Str(g, "name") : "");
    } else if (j.contains("func")) {
      const nlohmann::json& f = j["func"];
      out->mutable_func()->set_name(f.is_object() ? Str(f, "name") : "");
    }
    return Status::Ok();
  }

  std::string path_;
};

class AtcJsonImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor =
        new ImporterDescriptor{"atc_json",
                               {".om.json"},
                               3,
                               ContentKind::kGraph,
                               "an ATC model JSON (.om.json)"};
    return *kDescriptor;
  }

  int Sniff(std::string_view raw_head, std::string_view path) const override {
    // ATC usually writes the JSON indented (`atc --mode=1 --json=...`): the
    // checks below read the head with the blanks between tokens dropped, so
    // an indented file is recognised like a compact one, whatever its name.
    std::string compact = DropJsonBlanks(raw_head.substr(0, kSniffLookahead));
    std::string_view head = compact;
    std::string_view body = head;
    if (body.empty() || body[0] != '{') return 0;
    // ATC writes the model's keys first: name, version, attr, graph; GE
    // model attrs (atc_cmdline, soc_version, ...) or op descs follow.
    bool ge_keys = head.find("\"graph\"") != std::string_view::npos ||
                   head.find("\"op\"") != std::string_view::npos;
    bool atc_marks =
        head.find("atc_cmdline") != std::string_view::npos ||
        head.find("soc_version") != std::string_view::npos ||
        head.find("\"input_desc\"") != std::string_view::npos ||
        head.find("_datadump_original_op_names") != std::string_view::npos ||
        head.find("VT_LIST_") != std::string_view::npos;
    bool named = path.ends_with(".om.json");
    // A big model's attr list (task_index_op_name) can fill the whole head
    // before "graph" appears: the attr-first shape with GE marks suffices.
    bool attr_first = body.rfind("{\"attr\"", 0) == 0 &&
                      head.find("\"key\"") != std::string_view::npos;
    if ((ge_keys || attr_first) && atc_marks) return named ? 95 : 85;
    // ModelDef's attr map as Pb2Json writes it, first in the file (keys
    // sorted): {"attr":[{"key":"...","value":{"s"|"i"|"f"|"b"|"list"...
    // No trace format starts so.
    if (attr_first && IsPb2JsonAttrHead(head)) return named ? 95 : 80;
    if (named && ge_keys) return 70;
    return 0;
  }

 private:
  // `head` without the JSON blanks (space, tab, CR, LF) outside strings.
  static std::string DropJsonBlanks(std::string_view head) {
    std::string out;
    out.reserve(head.size());
    bool in_string = false, escaped = false;
    for (char c : head) {
      if (in_string) {
        out.push_back(c);
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
      if (c == '"') in_string = true;
      out.push_back(c);
    }
    if (std::string_view(out).starts_with("\xEF\xBB\xBF")) out.erase(0, 3);
    return out;
  }

  // The first attr entry's value is one of ge.proto.AttrDef's typed fields.
  static bool IsPb2JsonAttrHead(std::string_view head) {
    if (!head.starts_with("{\"attr\":[{\"key\":\"")) return false;
    size_t value = head.find("\"value\":{\"");
    if (value == std::string_view::npos) return false;
    std::string_view field = head.substr(value + 10);
    for (std::string_view f : {"s\"", "i\"", "f\"", "b\"", "list\"", "t\"",
                               "g\"", "bt\"", "func\""}) {
      if (field.starts_with(f)) return true;
    }
    return false;
  }

 public:
  Status Import(ImportContext& ctx) const override {
    MemoryCharge text_charge(ctx.budget);
    MI_ASSIGN_OR_RETURN(std::string text, ReadTextToParse(ctx, &text_charge));
    return ImportAtcJsonFromBuffer(text, ctx);
  }
};

}  // namespace

Status ImportGeProtoTextFromBuffer(std::string_view text, ImportContext& ctx) {
  std::string_view body = TrimLeft(text);
  if (body.empty()) {
    return MalformedInputError(fmt::format(
        "{}:1:1: empty file; expected a GE graph dump (protobuf text of "
        "ge.proto.ModelDef: 'graph {{ op {{ ... }} }}')",
        ctx.path));
  }
  ge_ir::ModelDef model;
  uint64_t skipped = 0;
  MI_RETURN_IF_ERROR(ParseProtobufText(
      text, ctx.path, "protobuf text of ge.proto.ModelDef", &model, &skipped));
  if (skipped > 0 && ctx.diagnostics != nullptr) {
    ctx.diagnostics->Report(
        DiagnosticCode::kUnknownFieldSkipped, {ctx.path},
        fmt::format("{} fields not read by model-inspector skipped", skipped));
  }
  ge::DumpFileName name = ge::ParseDumpFileName(ctx.path);
  return ge::ConvertGeModel(model, name.stage, ctx);
}

Status ImportAtcJsonFromBuffer(std::string_view text, ImportContext& ctx) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    // Locate the error: parse again with exceptions for the byte offset.
    size_t byte = 0;
    try {
      nlohmann::json again = nlohmann::json::parse(text);
      (void)again;
    } catch (const nlohmann::json::parse_error& e) {
      byte = e.byte;
    } catch (const nlohmann::json::exception& e) {
      // A number out of double's range (out_of_range.406: "number overflow
      // parsing '2e308'") carries no offset: locate the number's text.
      std::string_view what = e.what();
      size_t open = what.find('\'');
      size_t close = what.rfind('\'');
      if (open != std::string_view::npos && close > open + 1) {
        size_t at = text.find(what.substr(open + 1, close - open - 1));
        if (at != std::string_view::npos) byte = at + 1;
      }
    }
    uint64_t line = 0, column = 0;
    LineAndColumnAt(text, byte > 0 ? byte - 1 : 0, &line, &column);
    return MalformedInputError(fmt::format(
        "{}:{}:{}: not valid JSON; expected the ATC model JSON of `atc "
        "--mode=1` or `--mode=5`",
        ctx.path, line, column));
  }
  ge_ir::ModelDef model;
  MI_RETURN_IF_ERROR(JsonToGe(ctx.path).Model(doc, &model));
  return ge::ConvertGeModel(model, "", ctx);
}

std::unique_ptr<Importer> CreateGeProtoTextImporter() {
  return std::make_unique<GeProtoTextImporter>();
}

std::unique_ptr<Importer> CreateAtcJsonImporter() {
  return std::make_unique<AtcJsonImporter>();
}

}  // namespace mi::importers
