#include "importers/common/protobuf_wire_reader.h"

#include <fmt/format.h>

namespace mi::importers {

std::string_view WireMessageSchema::FieldName(uint32_t number) const {
  for (const WireFieldName& f : fields) {
    if (f.number == number) return f.name;
  }
  return {};
}

void AppendVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendTag(std::string* out, uint32_t number, WireType type) {
  AppendVarint(
      out, (static_cast<uint64_t>(number) << 3) | static_cast<uint64_t>(type));
}

void AppendLengthDelimited(std::string* out, uint32_t number,
                           std::string_view payload) {
  AppendTag(out, number, WireType::kLengthDelimited);
  AppendVarint(out, payload.size());
  out->append(payload);
}

Status WireError(std::string_view file, uint64_t at, std::string_view what,
                 std::string_view expected, std::string_view found) {
  return MalformedInputError(
      fmt::format("{}@byte {}: {}; expected {}, found {}", file, at, what,
                  expected, found));
}

Status WireReader::Error(uint64_t at, std::string_view what,
                         std::string_view expected,
                         std::string_view found) const {
  return WireError(file_, at, what, expected, found);
}

std::string WireReader::DescribeField(uint32_t number) const {
  std::string_view name = schema_.FieldName(number);
  if (name.empty()) {
    return fmt::format("{} field {}", schema_.message_name, number);
  }
  return fmt::format("{}.{} (field {})", schema_.message_name, name, number);
}

Status WireReader::FieldError(const WireField& field, std::string_view what,
                              std::string_view expected,
                              std::string_view found) const {
  return Error(field.tag_offset,
               fmt::format("{} {}", DescribeField(field.number), what),
               expected, found);
}

Status WireReader::ReadVarint(uint64_t* value, std::string_view what) {
  uint64_t start = offset();
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos_ >= bytes_.size()) {
      return Error(
          start, fmt::format("truncated {} varint", what),
          "a final byte below 0x80",
          fmt::format("end of {} after {} bytes", schema_.message_name, i));
    }
    uint8_t byte = static_cast<uint8_t>(bytes_[pos_++]);
    // The 10th byte may only carry the top bit of a 64-bit value.
    if (i == 9 && byte > 1) {
      return Error(start, fmt::format("{} varint longer than 10 bytes", what),
                   "at most 10 bytes", "a continuation bit in byte 10");
    }
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = result;
      return Status::Ok();
    }
  }
  return Error(start, fmt::format("{} varint longer than 10 bytes", what),
               "at most 10 bytes", "more");
}

Status WireReader::NextSlow(WireField* field) {
  field->tag_offset = offset();
  size_t field_start = pos_;
  uint64_t tag = 0;
  MI_RETURN_IF_ERROR(ReadVarint(&tag, "tag"));
  uint64_t number = tag >> 3;
  uint32_t wire_type = static_cast<uint32_t>(tag & 7);
  if (number == 0 || number > 0x1fffffff) {
    return Error(
        field->tag_offset,
        fmt::format("invalid field number in {}", schema_.message_name),
        "1..536870911", std::to_string(number));
  }
  field->number = static_cast<uint32_t>(number);
  switch (wire_type) {
    case 0:
      field->type = WireType::kVarint;
      MI_RETURN_IF_ERROR(ReadVarint(&field->value, "field"));
      break;
    case 1:
    case 5: {
      size_t width = wire_type == 1 ? 8 : 4;
      field->type = wire_type == 1 ? WireType::kFixed64 : WireType::kFixed32;
      if (bytes_.size() - pos_ < width) {
        return Error(field->tag_offset,
                     fmt::format("truncated fixed{} field {}", width * 8,
                                 DescribeField(field->number)),
                     fmt::format("{} bytes", width),
                     fmt::format("{} bytes left in {}", bytes_.size() - pos_,
                                 schema_.message_name));
      }
      uint64_t v = 0;
      for (size_t i = 0; i < width; ++i) {
        v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + i]))
             << (8 * i);
      }
      field->value = v;
      pos_ += width;
      break;
    }
    case 2: {
      field->type = WireType::kLengthDelimited;
      uint64_t length = 0;
      MI_RETURN_IF_ERROR(ReadVarint(&length, "length"));
      uint64_t remaining = bytes_.size() - pos_;
      if (length > remaining) {
        return Error(field->tag_offset,
                     fmt::format("truncated length-delimited field {}",
                                 DescribeField(field->number)),
                     fmt::format("{} bytes (its declared length)", length),
                     fmt::format("{} bytes left in {}", remaining,
                                 schema_.message_name));
      }
      field->value = length;
      field->payload_offset = offset();
      field->payload = bytes_.substr(pos_, static_cast<size_t>(length));
      pos_ += static_cast<size_t>(length);
      break;
    }
    default:
      return Error(field->tag_offset,
                   fmt::format("invalid wire type {} for {}", wire_type,
                               DescribeField(field->number)),
                   "0 (varint), 1 (fixed64), 2 (length-delimited) or 5 "
                   "(fixed32)",
                   wire_type == 3 || wire_type == 4
                       ? fmt::format("{} (obsolete group)", wire_type)
                       : std::to_string(wire_type));
  }
  field->raw = bytes_.substr(field_start, pos_ - field_start);
  return Status::Ok();
}

}  // namespace mi::importers
