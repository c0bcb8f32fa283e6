// The ONNX textual syntax importer (onnx/defs/parser.h): parses to a
// ModelProto and shares the conversion with the binary importer.

#include <cctype>
#include <exception>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "importers/onnx/onnx_importer.h"
#include "importers/onnx/onnx_model_converter.h"
#include "importers/onnx/onnx_skeleton.h"
#include "io/chunk_reader.h"
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

// Skips whitespace and '#' comments (the syntax's only comment form).
size_t SkipSpaceAndComments(std::string_view s, size_t pos) {
  while (pos < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[pos]))) {
      ++pos;
    } else if (s[pos] == '#') {
      while (pos < s.size() && s[pos] != '\n') ++pos;
    } else {
      break;
    }
  }
  return pos;
}

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Max nesting of (, [, { outside string literals and comments, with the
// offset where the limit was passed.
int MaxBracketDepth(std::string_view s, size_t* deepest_at) {
  int depth = 0;
  int max_depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\') ++i;
      }
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > max_depth) {
        max_depth = depth;
        *deepest_at = i;
      }
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return max_depth;
}

void LineAndColumn(std::string_view s, size_t offset, uint64_t* line,
                   uint64_t* column) {
  *line = 1;
  *column = 1;
  for (size_t i = 0; i < offset && i < s.size(); ++i) {
    if (s[i] == '\n') {
      ++*line;
      *column = 1;
    } else {
      ++*column;
    }
  }
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

class OnnxTextImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor =
        new ImporterDescriptor{"onnx_text",
                               {".onnxtxt", ".onnx.txt"},
                               5,
                               ContentKind::kGraph,
                               "an ONNX model in text form"};
    return *kDescriptor;
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    return SniffOnnxText(head, path);
  }

  Status Import(ImportContext& ctx) const override {
    MI_ASSIGN_OR_RETURN(std::string text, io::ReadDecompressedFile(ctx.path));
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
  bool named_ext = path.ends_with(".onnxtxt") || path.ends_with(".onnx.txt");
  if (head[pos] == '<') {
    bool has_key = head.find("ir_version") != std::string_view::npos ||
                   head.find("opset_import") != std::string_view::npos;
    if (!has_key) return 0;
    return named_ext ? 95 : 80;
  }
  // A bare graph: "name (inputs) => (outputs) { ... }".
  size_t end = pos;
  while (end < head.size() && IsIdentifierChar(head[end])) ++end;
  if (end == pos || std::isdigit(static_cast<unsigned char>(head[pos]))) {
    return 0;
  }
  size_t paren = SkipSpaceAndComments(head, end);
  if (paren >= head.size() || head[paren] != '(') return 0;
  if (head.find("=>", paren) == std::string_view::npos) return 0;
  return named_ext ? 90 : 60;
}

Status ImportOnnxTextFromBuffer(std::string_view text, ImportContext& ctx) {
  if (ctx.model == nullptr) {
    return InternalError(
        "ImportOnnxTextFromBuffer: ImportContext has no model");
  }
  // The parser reads a NUL-terminated string.
  std::string source(text.substr(0, text.find('\0')));
  size_t first = SkipSpaceAndComments(source, 0);
  if (first >= source.size()) {
    return MalformedInputError(
        fmt::format("{}:1:1: empty file; expected ONNX text syntax (a model "
                    "'<ir_version: ...> graph ...' or a graph 'name (...) => "
                    "(...) {{...}}')",
                    ctx.path));
  }
  size_t deepest_at = 0;
  if (MaxBracketDepth(source, &deepest_at) > kMaxBracketDepth) {
    uint64_t line = 0;
    uint64_t column = 0;
    LineAndColumn(source, deepest_at, &line, &column);
    return MalformedInputError(fmt::format(
        "{}:{}:{}: brackets nested too deeply; expected at most {} levels, "
        "found more",
        ctx.path, line, column, kMaxBracketDepth));
  }

  ::onnx::ModelProto model;
  std::string parse_error;
  try {
    if (source[first] == '<') {
      auto status = ::onnx::OnnxParser::Parse(model, source.c_str());
      if (!status.IsOK()) parse_error = status.ErrorMessage();
    } else {
      auto status =
          ::onnx::OnnxParser::Parse(*model.mutable_graph(), source.c_str());
      if (!status.IsOK()) parse_error = status.ErrorMessage();
      model.set_ir_version(kDefaultIrVersion);
      auto* opset = model.add_opset_import();
      opset->set_domain("");
      opset->set_version(LatestDefaultOpset());
    }
  } catch (const std::exception& e) {
    parse_error = e.what();
    if (parse_error.empty()) parse_error = "syntax error";
  } catch (...) {
    parse_error = "syntax error";
  }
  if (!parse_error.empty()) return ParseErrorStatus(ctx.path, parse_error);

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
