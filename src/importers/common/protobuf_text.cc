#include "importers/common/protobuf_text.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <string>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

namespace mi::importers {
namespace {

// Keeps the parser's first error with its place; warnings (unknown fields,
// skipped on purpose) are counted.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error) return;
    has_error = true;
    this->line = line + 1;
    this->column = column + 1;
    this->message = message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string&) override {
    ++warnings;
  }
  bool has_error = false;
  int line = 0, column = 0;
  std::string message;
  uint64_t warnings = 0;
};

}  // namespace

int MaxTextNesting(std::string_view text, std::string_view openers,
                   std::string_view closers, std::string_view quotes,
                   size_t* deepest_at) {
  int depth = 0;
  int max_depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (quotes.find(c) != std::string_view::npos) {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;
        }
      }
    } else if (openers.find(c) != std::string_view::npos) {
      if (++depth > max_depth) {
        max_depth = depth;
        *deepest_at = i;
      }
    } else if (closers.find(c) != std::string_view::npos && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

void LineAndColumnAt(std::string_view text, size_t offset, uint64_t* line,
                     uint64_t* column) {
  *line = 1;
  *column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++*line;
      *column = 1;
    } else {
      ++*column;
    }
  }
}

Status ParseProtobufText(std::string_view text, std::string_view path,
                         std::string_view expected,
                         google::protobuf::Message* message,
                         uint64_t* unknown_fields) {
  size_t deepest_at = 0;
  if (MaxTextNesting(text, "{<", "}>", "\"'", &deepest_at) >
      kMaxProtobufTextDepth) {
    uint64_t line = 0;
    uint64_t column = 0;
    LineAndColumnAt(text, deepest_at, &line, &column);
    return MalformedInputError(std::string(path) + ":" + std::to_string(line) +
                               ":" + std::to_string(column) +
                               ": braces nested too deeply; expected at most " +
                               std::to_string(kMaxProtobufTextDepth) +
                               " levels, found more");
  }
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  parser.AllowUnknownField(true);
  parser.AllowUnknownExtension(true);
  google::protobuf::io::ArrayInputStream input(
      text.data(), static_cast<int>(std::min<size_t>(text.size(), INT_MAX)));
  if (!parser.Parse(&input, message) || errors.has_error) {
    std::string what = errors.message.empty() ? "syntax error" : errors.message;
    while (!what.empty() && (what.back() == '.' || what.back() == '\n')) {
      what.pop_back();
    }
    if (!what.empty()) {
      what[0] =
          static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
    }
    return MalformedInputError(std::string(path) + ":" +
                               std::to_string(errors.line) + ":" +
                               std::to_string(errors.column) + ": " + what +
                               "; expected " + std::string(expected));
  }
  if (unknown_fields != nullptr) *unknown_fields = errors.warnings;
  return Status::Ok();
}

}  // namespace mi::importers
