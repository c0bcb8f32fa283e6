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

Status ParseProtobufText(std::string_view text, std::string_view path,
                         std::string_view expected,
                         google::protobuf::Message* message,
                         uint64_t* unknown_fields) {
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
