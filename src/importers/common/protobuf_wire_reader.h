#pragma once

// A minimal reader of the protobuf wire format over a byte view: varints,
// fixed32/64 and length-delimited fields. It exists so that the ONNX
// importer can walk a multi-GB memory-mapped ModelProto and skip tensor
// payloads by their length without touching (paging in) their bytes, which
// protobuf's own parser cannot do. All offsets are 64-bit and absolute
// (relative to the start of the file) so error messages can point at the
// exact byte. Group wire types (3, 4) are obsolete and treated as malformed.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

namespace mi::importers {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5,
};

// Names of the fields of one message type, for error messages such as
// "GraphProto.node (field 1)".
struct WireFieldName {
  uint32_t number;
  std::string_view name;
};
struct WireMessageSchema {
  std::string_view message_name;
  std::span<const WireFieldName> fields;
  std::string_view FieldName(uint32_t number) const;
};

struct WireField {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t tag_offset = 0;  // absolute offset of the field's tag
  // kVarint / kFixed32 / kFixed64: the value. kLengthDelimited: the length.
  uint64_t value = 0;
  // kLengthDelimited: the payload. Only its pointer and size are used unless
  // the caller reads it, so skipping never touches the payload's pages.
  std::string_view payload;
  uint64_t payload_offset = 0;  // absolute offset of the payload
  std::string_view raw;         // the whole field, tag included
};

// Appends protobuf wire encodings (for building the skeleton).
void AppendVarint(std::string* out, uint64_t value);
void AppendTag(std::string* out, uint32_t number, WireType type);
void AppendLengthDelimited(std::string* out, uint32_t number,
                           std::string_view payload);

class WireReader {
 public:
  // `bytes` holds one message; `base_offset` is where it starts in the file
  // named `file` (used in messages only).
  WireReader(std::string_view bytes, uint64_t base_offset,
             const WireMessageSchema& schema, std::string_view file)
      : bytes_(bytes),
        base_offset_(base_offset),
        schema_(schema),
        file_(file) {}

  bool done() const { return pos_ >= bytes_.size(); }
  uint64_t offset() const { return base_offset_ + pos_; }

  // Reads the next field. Errors are MalformedInputError of the shape
  // "<file>@byte <N>: <what>; expected <X>, found <Y>".
  Status Next(WireField* field) {
    // Fast path (most fields of a graph): a one-byte tag of field 1..15
    // with a one-byte varint value or length.
    if (bytes_.size() - pos_ >= 2) {
      uint8_t tag = static_cast<uint8_t>(bytes_[pos_]);
      uint8_t next = static_cast<uint8_t>(bytes_[pos_ + 1]);
      if (tag < 0x80 && tag >= 8 && next < 0x80) {
        if ((tag & 7) == 0) {
          field->tag_offset = offset();
          field->number = tag >> 3;
          field->type = WireType::kVarint;
          field->value = next;
          field->raw = bytes_.substr(pos_, 2);
          pos_ += 2;
          return Status::Ok();
        }
        if ((tag & 7) == 2 && next <= bytes_.size() - pos_ - 2) {
          field->tag_offset = offset();
          field->number = tag >> 3;
          field->type = WireType::kLengthDelimited;
          field->value = next;
          field->payload_offset = field->tag_offset + 2;
          field->payload = bytes_.substr(pos_ + 2, next);
          field->raw = bytes_.substr(pos_, 2 + size_t{next});
          pos_ += 2 + size_t{next};
          return Status::Ok();
        }
      }
    }
    return NextSlow(field);
  }

  // An error about `field` (e.g. a wire type that does not fit its number).
  Status FieldError(const WireField& field, std::string_view what,
                    std::string_view expected, std::string_view found) const;
  // "GraphProto.node (field 1)"
  std::string DescribeField(uint32_t number) const;
  const WireMessageSchema& schema() const { return schema_; }

 private:
  Status NextSlow(WireField* field);
  Status Error(uint64_t at, std::string_view what, std::string_view expected,
               std::string_view found) const;
  Status ReadVarint(uint64_t* value, std::string_view what);

  std::string_view bytes_;
  uint64_t base_offset_;
  const WireMessageSchema& schema_;
  std::string_view file_;
  size_t pos_ = 0;
};

// "model.onnx@byte 12: <what>; expected <X>, found <Y>"
Status WireError(std::string_view file, uint64_t at, std::string_view what,
                 std::string_view expected, std::string_view found);

}  // namespace mi::importers
