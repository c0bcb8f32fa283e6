#pragma once

// Protobuf text format (GE's ge_proto and ge_onnx graph dumps) into a
// message, skipping fields the message's schema leaves out, with the first
// error as "<file>:<line>:<column>: <what>; expected <expected>".

#include <string_view>

#include "model_inspector/status.h"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace mi::importers {

// `unknown_fields`, when not null, receives how many unknown fields were
// skipped.
Status ParseProtobufText(std::string_view text, std::string_view path,
                         std::string_view expected,
                         google::protobuf::Message* message,
                         uint64_t* unknown_fields = nullptr);

}  // namespace mi::importers
