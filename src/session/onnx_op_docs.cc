#include "session/onnx_op_docs.h"

#include <cctype>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "onnx/defs/schema.h"

namespace mi {

std::string PlainSummary(std::string_view md, size_t max_bytes) {
  // Skip leading blank lines, then take lines up to the first blank one.
  size_t start = 0;
  while (start < md.size()) {
    size_t eol = md.find('\n', start);
    std::string_view line = md.substr(
        start, eol == std::string_view::npos ? md.size() - start : eol - start);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) break;
    if (eol == std::string_view::npos) return "";
    start = eol + 1;
  }
  std::string para;
  for (size_t pos = start; pos < md.size();) {
    size_t eol = md.find('\n', pos);
    std::string_view line = md.substr(
        pos, eol == std::string_view::npos ? md.size() - pos : eol - pos);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) break;
    para.append(line);
    para.push_back(' ');
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  // Minimal Markdown: [text](url) -> text; drop ` and emphasis markers
  // (* and _ pairs at word edges; a '*' inside "a*b" stays); collapse
  // whitespace.
  std::string out;
  out.reserve(para.size());
  for (size_t i = 0; i < para.size(); ++i) {
    char c = para[i];
    if (c == '[') {
      size_t close = para.find(']', i);
      if (close != std::string::npos && close + 1 < para.size() &&
          para[close + 1] == '(') {
        size_t paren = para.find(')', close);
        if (paren != std::string::npos) {
          out.append(para, i + 1, close - i - 1);
          i = paren;
          continue;
        }
      }
    }
    if (c == '`') continue;
    if (c == '*' || c == '_') {
      bool prev_word =
          i > 0 && std::isalnum(static_cast<unsigned char>(para[i - 1]));
      bool next_word = i + 1 < para.size() &&
                       std::isalnum(static_cast<unsigned char>(para[i + 1]));
      if (!(prev_word && next_word)) continue;
    }
    if (c == '\t' || c == '\r' || c == '\n') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<uint8_t>(out[cut]) & 0xc0) == 0x80) --cut;
    // At a word boundary when one is near.
    size_t space = out.rfind(' ', cut);
    if (space != std::string::npos && space + 40 > cut) cut = space;
    out.resize(cut);
    out += "...";
  }
  return out;
}

std::optional<OnnxOpDoc> FindOnnxOpDoc(std::string_view op_type,
                                       std::string_view domain, int64_t opset) {
  if (op_type.empty()) return std::nullopt;
  std::string d(domain == "ai.onnx" ? std::string_view() : domain);
  int version =
      opset > 0 && opset < INT_MAX ? static_cast<int>(opset) : INT_MAX;
  const ::onnx::OpSchema* schema =
      ::onnx::OpSchemaRegistry::Schema(std::string(op_type), version, d);
  if (schema == nullptr) return std::nullopt;
  OnnxOpDoc doc;
  doc.domain = schema->domain();
  if (doc.domain == "ai.onnx") doc.domain.clear();
  doc.since_version = schema->since_version();
  const char* text = schema->doc();
  doc.summary = PlainSummary(text != nullptr ? text : "");
  return doc;
}

}  // namespace mi
