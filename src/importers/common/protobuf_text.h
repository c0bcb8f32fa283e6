#pragma once

// Protobuf text format (GE's ge_proto and ge_onnx graph dumps, ONNX
// ModelProto text) into a message, skipping fields the message's schema
// leaves out, with the first error as
// "<file>:<line>:<column>: <what>; expected <expected>".

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model_inspector/status.h"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace mi::importers {

// Messages nested deeper than this are refused before parsing: protobuf's
// parser, and its skipping of unknown fields, recurses once per level.
inline constexpr int kMaxProtobufTextDepth = 100;

// `unknown_fields`, when not null, receives how many unknown fields were
// skipped. Nesting deeper than kMaxProtobufTextDepth is an error that
// points at the deepest bracket.
Status ParseProtobufText(std::string_view text, std::string_view path,
                         std::string_view expected,
                         google::protobuf::Message* message,
                         uint64_t* unknown_fields = nullptr);

// The deepest nesting of the brackets in `openers` (each closed by the
// character at the same index of `closers`) outside string literals
// (opened by a character of `quotes`) and '#' comments, with the byte
// offset where it is first reached. A string ends at its closing quote or at
// the end of its line, as protobuf's tokenizer ends it: an unclosed quote
// cannot hide the nesting after it.
int MaxTextNesting(std::string_view text, std::string_view openers,
                   std::string_view closers, std::string_view quotes,
                   size_t* deepest_at);

// 1-based line and column of byte `offset` of `text`.
void LineAndColumnAt(std::string_view text, size_t offset, uint64_t* line,
                     uint64_t* column);

}  // namespace mi::importers
