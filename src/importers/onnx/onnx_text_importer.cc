// ONNX models in text: the textual syntax of onnx/defs/parser.h, protobuf's
// text format of ModelProto (Glow's .onnxtxt, OpenVINO's .prototxt) and
// protobuf's JSON mapping of ModelProto (.onnx.json). The form is decided by
// the content; whole-line "//" comments (onnx-mlir's lit tests put RUN and
// CHECK lines around the model) are blanked first in all three. Each form
// parses to a ModelProto and shares the conversion with the binary importer.

#include <cctype>
#include <charconv>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "importers/common/protobuf_text.h"
#include "importers/onnx/onnx_convert_util.h"
#include "importers/onnx/onnx_importer.h"
#include "importers/onnx/onnx_model_converter.h"
#include "importers/onnx/onnx_skeleton.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace mi::importers {
namespace {

// The parser recurses once per bracket level; deeper text is rejected before
// parsing so hostile input cannot exhaust the stack.
constexpr int kMaxBracketDepth = onnx_import::kMaxSubgraphDepth * 3;
// Model form without an opset: the IR version of libonnx 1.12.
constexpr int64_t kDefaultIrVersion = 8;

// Skips whitespace, '#' comments (the syntax's and protobuf text's comment
// form) and "//" comments (onnx-mlir's lit-test lines).
size_t SkipSpaceAndComments(std::string_view s, size_t pos) {
  while (pos < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[pos]))) {
      ++pos;
    } else if (s[pos] == '#' || s.substr(pos, 2) == "//") {
      while (pos < s.size() && s[pos] != '\n') ++pos;
    } else {
      break;
    }
  }
  return pos;
}

// Replaces each line whose first non-blank characters are "//" by spaces up
// to its end, so line and column numbers of the rest stay those of the file.
// (No string literal of the three forms spans lines, so such a line is never
// inside one.)
void BlankSlashCommentLines(std::string& s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t i = pos;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    size_t end = s.find('\n', i);
    if (end == std::string::npos) end = s.size();
    if (s.compare(i, 2, "//") == 0) {
      std::fill(s.begin() + static_cast<std::ptrdiff_t>(i),
                s.begin() + static_cast<std::ptrdiff_t>(end), ' ');
    }
    pos = end + 1;
  }
}

// The three text forms of an ONNX model.
enum class TextForm : uint8_t { kNone, kSyntax, kProtobufText, kJson };

// ModelProto's field names: a protobuf text model starts with one of them.
bool IsModelProtoField(std::string_view name) {
  static constexpr std::string_view kFields[] = {
      "ir_version",     "opset_import",  "producer_name", "producer_version",
      "domain",         "model_version", "doc_string",    "graph",
      "metadata_props", "training_info", "functions"};
  for (std::string_view f : kFields) {
    if (name == f) return true;
  }
  return false;
}

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The form a text starts with (after comments), from its first token:
// '{' JSON, '<' a syntax model, "name (" a syntax graph, "field:" or
// "field {" protobuf text.
TextForm FormAt(std::string_view s, size_t pos, std::string_view* first_word) {
  if (pos >= s.size()) return TextForm::kNone;
  if (s[pos] == '{') return TextForm::kJson;
  if (s[pos] == '<') return TextForm::kSyntax;
  size_t end = pos;
  while (end < s.size() && IsIdentifierChar(s[end])) ++end;
  if (end == pos || std::isdigit(static_cast<unsigned char>(s[pos]))) {
    return TextForm::kNone;
  }
  *first_word = s.substr(pos, end - pos);
  size_t next = SkipSpaceAndComments(s, end);
  if (next >= s.size()) return TextForm::kNone;
  if (s[next] == '(') return TextForm::kSyntax;
  if (s[next] == ':' || s[next] == '{' || s[next] == '<') {
    return TextForm::kProtobufText;
  }
  return TextForm::kNone;
}

// Turns the parser's "[ParseError at position (line: L column: C)]\n
// Error context: X\nMessage" into "<file>:L:C: message; error context: X".
Status ParseErrorStatus(const std::string& path, const std::string& message) {
  uint64_t line = 0;
  uint64_t column = 0;
  size_t at = message.find("(line: ");
  if (at != std::string::npos) {
    std::sscanf(message.c_str() + at, "(line: %lu column: %lu)", &line,
                &column);
  }
  std::string context;
  std::string what = message;
  size_t context_at = message.find("Error context: ");
  if (context_at != std::string::npos) {
    size_t context_end = message.find('\n', context_at);
    context =
        message.substr(context_at + 15, context_end == std::string::npos
                                            ? std::string::npos
                                            : context_end - context_at - 15);
    what = context_end == std::string::npos ? std::string()
                                            : message.substr(context_end + 1);
  }
  while (!what.empty() && (what.back() == '\n' || what.back() == '.')) {
    what.pop_back();
  }
  if (what.empty()) what = "syntax error";
  if (!what.empty()) {
    what[0] =
        static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  }
  std::string out = line > 0
                        ? fmt::format("{}:{}:{}: {}", path, line, column, what)
                        : fmt::format("{}: {}", path, what);
  if (!context.empty()) out += fmt::format("; error context: '{}'", context);
  return MalformedInputError(out);
}

int64_t LatestDefaultOpset() {
  const auto& map =
      ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find("");
  return it == map.end() ? 17 : it->second.second;
}

// libonnx's textual-syntax parser converts number literals with std::stoll
// (dimensions, integer attributes, versions), std::stoull, std::stof and
// std::stod and lets their exceptions out, whose message is only the
// function's name ("stoll"). This finds the literal it failed on: the
// first, in the parser's own lexing (ParserBase::Parse(Literal&): '-' or a
// digit, digits with at most one '.', an optional exponent; '#' comments
// and "..." strings skipped), that the named conversion cannot take,
// checked with std::from_chars. nullopt when `conversion` is none of those
// or no literal fails it.
std::optional<Status> NumberLiteralError(const std::string& source,
                                         const std::string& path,
                                         std::string_view conversion) {
  const bool to_int = conversion == "stoll" || conversion == "stoi";
  const bool to_uint = conversion == "stoull" || conversion == "stoul";
  const bool to_float = conversion == "stof";
  const bool to_double = conversion == "stod";
  if (!to_int && !to_uint && !to_float && !to_double) return std::nullopt;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto is_alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  const size_t n = source.size();
  size_t i = 0;
  while (i < n) {
    char c = source[i];
    if (c == '#') {
      while (i < n && source[i] != '\n') ++i;
      continue;
    }
    if (c == '"') {
      ++i;
      while (i < n && source[i] != '"') ++i;
      ++i;
      continue;
    }
    if (is_alpha(c)) {
      while (i < n && (is_alpha(source[i]) || is_digit(source[i]))) ++i;
      continue;
    }
    if (!is_digit(c) && c != '-') {
      ++i;
      continue;
    }
    const size_t from = i++;
    bool is_float = false;
    while (i < n && (is_digit(source[i]) || source[i] == '.')) {
      if (source[i] == '.') {
        if (is_float) break;
        is_float = true;
      }
      ++i;
    }
    if (i < n && (source[i] == 'e' || source[i] == 'E')) {
      is_float = true;
      ++i;
      if (i < n && (source[i] == '+' || source[i] == '-')) ++i;
      while (i < n && is_digit(source[i])) ++i;
    }
    std::string_view literal(source.data() + from, i - from);
    std::string problem;
    if ((to_int || to_uint) && !is_float) {
      std::string_view digits = literal;
      // std::stoull takes "-N" (and wraps it); only its digits can fail.
      if (to_uint && digits.starts_with('-')) digits.remove_prefix(1);
      bool fits = to_int ? ParseInteger<int64_t>(digits).has_value()
                         : ParseInteger<uint64_t>(digits).has_value();
      if (!fits) {
        problem =
            digits == "-" || digits.empty()
                ? "'-' is not followed by a digit; expected a number"
                : fmt::format(
                      "integer {} is out of range; expected an integer from "
                      "{} to {}",
                      onnx_import::ShortString(literal),
                      to_int ? std::to_string(INT64_MIN) : std::string("0"),
                      to_int ? std::to_string(INT64_MAX)
                             : std::to_string(UINT64_MAX));
      }
    } else if (to_float || to_double) {
      bool ok;
      if (to_float) {
        float value;
        auto [end, ec] =
            std::from_chars(literal.data(), literal.data() + literal.size(),
                            value, std::chars_format::general);
        ok = ec == std::errc() && end == literal.data() + literal.size();
      } else {
        double value;
        auto [end, ec] =
            std::from_chars(literal.data(), literal.data() + literal.size(),
                            value, std::chars_format::general);
        ok = ec == std::errc() && end == literal.data() + literal.size();
      }
      if (!ok) {
        problem = literal == "-"
                      ? "'-' is not followed by a digit; expected a number"
                      : fmt::format(
                            "number {} cannot be held by a {}; expected a "
                            "finite value within its range",
                            onnx_import::ShortString(literal),
                            to_float ? "float32" : "float64");
      }
    }
    if (!problem.empty()) {
      uint64_t line = 0;
      uint64_t column = 0;
      LineAndColumnAt(source, from, &line, &column);
      return MalformedInputError(
          fmt::format("{}:{}:{}: {}", path, line, column, problem));
    }
  }
  return std::nullopt;
}

// The textual syntax: a model ('<' first) or a bare graph.
Status ParseOnnxSyntax(const std::string& source, size_t first,
                       const std::string& path, ::onnx::ModelProto* model) {
  std::string parse_error;
  try {
    if (source[first] == '<') {
      auto status = ::onnx::OnnxParser::Parse(*model, source.c_str());
      if (!status.IsOK()) parse_error = status.ErrorMessage();
    } else {
      auto status =
          ::onnx::OnnxParser::Parse(*model->mutable_graph(), source.c_str());
      if (!status.IsOK()) parse_error = status.ErrorMessage();
      model->set_ir_version(kDefaultIrVersion);
      auto* opset = model->add_opset_import();
      opset->set_domain("");
      opset->set_version(LatestDefaultOpset());
    }
  } catch (const std::exception& e) {
    parse_error = e.what();
    if (auto located = NumberLiteralError(source, path, parse_error)) {
      return *located;
    }
    if (parse_error == "stoll" || parse_error == "stoull" ||
        parse_error == "stof" || parse_error == "stod") {
      return MalformedInputError(fmt::format(
          "{}: a number literal is out of range or malformed (libonnx's "
          "{} failed); expected integers within int64 and floats within "
          "float32",
          path, parse_error));
    }
    if (parse_error.empty()) parse_error = "syntax error";
  } catch (...) {
    parse_error = "syntax error";
  }
  if (!parse_error.empty()) return ParseErrorStatus(path, parse_error);
  return Status::Ok();
}

// Records where JSON syntax first fails; builds nothing.
class JsonSyntaxCheck : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    failed = true;
    token = last_token;
    // `position` is just past the offending token: point at its start.
    at = position >= last_token.size() ? position - last_token.size() : 0;
    // "...: syntax error while parsing object - unexpected X; expected Y".
    std::string_view what = e.what();
    size_t dash = what.rfind(" - ");
    if (dash != std::string_view::npos) detail = what.substr(dash + 3);
    return false;
  }
  bool failed = false;
  std::size_t at = 0;  // 0-based byte offset of the offending token
  std::string token;
  std::string detail;  // "unexpected X; expected Y"
};

// Protobuf's JSON mapping of ModelProto (camelCase or proto field names,
// int64 as strings, bytes in base64). Syntax errors are placed by line and
// column; schema errors name the field protobuf's parser stopped at.
Status ParseOnnxJson(const std::string& source, const std::string& path,
                     ::onnx::ModelProto* model) {
  JsonSyntaxCheck check;
  nlohmann::json::sax_parse(source, &check,
                            nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  if (check.failed) {
    uint64_t line = 0;
    uint64_t column = 0;
    LineAndColumnAt(source, check.at, &line, &column);
    std::string token = check.token.substr(0, 40);
    std::string detail = check.detail.empty() ? "" : " (" + check.detail + ")";
    return MalformedInputError(fmt::format(
        "{}:{}:{}: JSON syntax error at '{}'{}; expected JSON of an ONNX "
        "ModelProto",
        path, line, column, token, detail));
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // fields of newer ONNX versions
  auto status =
      google::protobuf::util::JsonStringToMessage(source, model, options);
  if (!status.ok()) {
    std::string what(status.message());
    while (!what.empty() && (what.back() == '\n' || what.back() == '.')) {
      what.pop_back();
    }
    // Protobuf names the field as "(graph.node): ...": say "at graph.node".
    if (!what.empty() && what[0] == '(') {
      size_t close = what.find("): ");
      if (close != std::string::npos) {
        what =
            "at " + what.substr(1, close - 1) + ": " + what.substr(close + 3);
      }
    }
    // Protobuf quotes a value it cannot take ('invalid value "X"') but not
    // where it is: placed when that JSON string occurs once in the file.
    std::string where = path;
    size_t quoted = what.find("invalid value \"");
    if (quoted != std::string::npos) {
      size_t begin = quoted + 14;  // at the opening quote
      size_t end = what.find('"', begin + 1);
      if (end != std::string::npos) {
        std::string needle = what.substr(begin, end - begin + 1);
        size_t at = source.find(needle);
        if (at != std::string::npos &&
            source.find(needle, at + 1) == std::string::npos) {
          uint64_t line = 0;
          uint64_t column = 0;
          LineAndColumnAt(source, at, &line, &column);
          where = fmt::format("{}:{}:{}", path, line, column);
        }
      }
    }
    return MalformedInputError(fmt::format(
        "{}: {}; expected protobuf's JSON mapping of an ONNX ModelProto "
        "(camelCase field names, int64 as strings)",
        where, what));
  }
  return Status::Ok();
}

class OnnxTextImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor = new ImporterDescriptor{
        "onnx_text",
        {".onnxtxt", ".onnx.txt", ".onnxtext", ".prototxt", ".onnx.json"},
        5,
        ContentKind::kGraph,
        "an ONNX model in text form (textual syntax, "
        "protobuf text or JSON)"};
    return *kDescriptor;
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    return SniffOnnxText(head, path);
  }

  Status Import(ImportContext& ctx) const override {
    MemoryCharge text_charge(ctx.budget);
    MI_ASSIGN_OR_RETURN(std::string text, ReadTextToParse(ctx, &text_charge));
    return ImportOnnxTextFromBuffer(text, ctx);
  }
};

}  // namespace

int SniffOnnxText(std::string_view head, std::string_view path) {
  head = head.substr(0, kSniffLookahead);
  // Text only: a NUL or most control bytes mean a binary file.
  for (char c : head) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\r' && c != '\t') return 0;
  }
  size_t pos = SkipSpaceAndComments(head, 0);
  if (pos >= head.size()) return 0;
  std::string_view plain = StripGzSuffix(path);
  bool named_ext = plain.ends_with(".onnxtxt") ||
                   plain.ends_with(".onnx.txt") || plain.ends_with(".onnxtext");
  auto has = [&](std::string_view key) {
    return head.find(key) != std::string_view::npos;
  };
  std::string_view first_word;
  switch (FormAt(head, pos, &first_word)) {
    case TextForm::kJson: {
      // ONNX keys in either spelling JsonStringToMessage accepts; an ATC
      // JSON or a trace has none of them.
      bool model_keys = has("\"irVersion\"") || has("\"opsetImport\"") ||
                        has("\"ir_version\"") || has("\"opset_import\"");
      bool graph_keys = has("\"opType\"") || has("\"op_type\"");
      if (!model_keys && !(graph_keys && has("\"graph\""))) return 0;
      return plain.ends_with(".onnx.json") ? 95 : 85;
    }
    case TextForm::kProtobufText: {
      // GE's ge_onnx dumps are the same text with GE op types: theirs.
      if (has("op_type: \"ge:") || FileNameOf(path).starts_with("ge_onnx_")) {
        return 0;
      }
      if (!IsModelProtoField(first_word)) return 0;
      bool model_keys = has("ir_version") || has("opset_import");
      bool graph_keys = has("node {") && has("op_type:");
      if (!model_keys && !graph_keys) return 0;
      return named_ext || plain.ends_with(".prototxt") ||
                     plain.ends_with(".pbtxt")
                 ? 90
                 : 80;
    }
    case TextForm::kSyntax:
      break;
    case TextForm::kNone:
      return 0;
  }
  if (head[pos] == '<') {
    bool has_key = has("ir_version") || has("opset_import");
    if (!has_key) return 0;
    return named_ext ? 95 : 80;
  }
  // A bare graph: "name (inputs) => (outputs) { ... }".
  if (!has("=>")) return 0;
  return named_ext ? 90 : 60;
}

Status ImportOnnxTextFromBuffer(std::string_view text, ImportContext& ctx) {
  if (ctx.model == nullptr) {
    return InternalError(
        "ImportOnnxTextFromBuffer: ImportContext has no model");
  }
  // The parser reads a NUL-terminated string.
  std::string source(text.substr(0, text.find('\0')));
  BlankSlashCommentLines(source);
  size_t first = SkipSpaceAndComments(source, 0);
  if (first >= source.size()) {
    return MalformedInputError(fmt::format(
        "{}:1:1: empty file; expected an ONNX model in text: the textual "
        "syntax (a model '<ir_version: ...> graph ...' or a graph 'name (...) "
        "=> (...) {{...}}'), protobuf text ('ir_version: ... graph {{...}}') "
        "or JSON ('{{\"irVersion\": ...}}')",
        ctx.path));
  }
  std::string_view first_word;
  TextForm form = FormAt(source, first, &first_word);
  // Protobuf text is guarded inside ParseProtobufText (at most 100 levels
  // of { and <); the other forms nest ( [ { here.
  size_t deepest_at = 0;
  if (form != TextForm::kProtobufText &&
      MaxTextNesting(source, "([{", ")]}", "\"", &deepest_at) >
          kMaxBracketDepth) {
    uint64_t line = 0;
    uint64_t column = 0;
    LineAndColumnAt(source, deepest_at, &line, &column);
    return MalformedInputError(fmt::format(
        "{}:{}:{}: brackets nested too deeply; expected at most {} levels, "
        "found more",
        ctx.path, line, column, kMaxBracketDepth));
  }

  ::onnx::ModelProto model;
  if (form == TextForm::kProtobufText) {
    MI_RETURN_IF_ERROR(ParseProtobufText(
        source, ctx.path, "protobuf text of an ONNX ModelProto", &model));
  } else if (form == TextForm::kJson) {
    MI_RETURN_IF_ERROR(ParseOnnxJson(source, ctx.path, &model));
  } else {
    MI_RETURN_IF_ERROR(ParseOnnxSyntax(source, first, ctx.path, &model));
  }
  if (form != TextForm::kSyntax && !model.has_graph()) {
    return MalformedInputError(fmt::format(
        "{}: the model has no graph; expected a ModelProto with a graph",
        ctx.path));
  }

  onnx_import::OnnxConvertOptions options;
  if (!ctx.path.empty()) {
    std::string dir = std::filesystem::path(ctx.path).parent_path().string();
    options.model_directory = dir.empty() ? "." : dir;
  }
  return onnx_import::ConvertOnnxModel(model, options, ctx);
}

std::unique_ptr<Importer> CreateOnnxTextImporter() {
  return std::make_unique<OnnxTextImporter>();
}

}  // namespace mi::importers
