#include "importers/common/protobuf_wire_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace mi::importers {
namespace {

constexpr WireFieldName kFields[] = {{1, "node"}, {2, "name"}};
constexpr WireMessageSchema kSchema{"GraphProto", kFields};

TEST(WireReaderTest, ReadsEveryWireType) {
  std::string bytes;
  AppendTag(&bytes, 3, WireType::kVarint);
  AppendVarint(&bytes, 300);
  AppendLengthDelimited(&bytes, 2, "abc");
  AppendTag(&bytes, 4, WireType::kFixed32);
  bytes.append("\x01\x00\x00\x00", 4);
  AppendTag(&bytes, 5, WireType::kFixed64);
  bytes.append("\x02\x00\x00\x00\x00\x00\x00\x00", 8);
  WireReader reader(bytes, 100, kSchema, "f.onnx");
  WireField f;
  ASSERT_TRUE(reader.Next(&f).ok());
  EXPECT_EQ(f.number, 3u);
  EXPECT_EQ(f.value, 300u);
  EXPECT_EQ(f.tag_offset, 100u);
  ASSERT_TRUE(reader.Next(&f).ok());
  EXPECT_EQ(f.type, WireType::kLengthDelimited);
  EXPECT_EQ(f.payload, "abc");
  EXPECT_EQ(f.payload_offset, 100u + 3 + 2);
  ASSERT_TRUE(reader.Next(&f).ok());
  EXPECT_EQ(f.value, 1u);
  ASSERT_TRUE(reader.Next(&f).ok());
  EXPECT_EQ(f.value, 2u);
  EXPECT_TRUE(reader.done());
}

TEST(WireReaderTest, TruncatedLengthNamesFieldAndCounts) {
  std::string bytes;
  AppendTag(&bytes, 1, WireType::kLengthDelimited);
  AppendVarint(&bytes, 1200);
  bytes.append(300, 'x');
  WireReader reader(bytes, 10, kSchema, "m.onnx");
  WireField f;
  Status s = reader.Next(&f);
  EXPECT_EQ(s.code(), StatusCode::kMalformedInput);
  EXPECT_EQ(s.message(),
            "m.onnx@byte 10: truncated length-delimited field GraphProto.node "
            "(field 1); expected 1200 bytes (its declared length), found 300 "
            "bytes left in GraphProto");
}

TEST(WireReaderTest, RejectsInvalidAndGroupWireTypes) {
  for (int wire_type : {3, 4, 6, 7}) {
    std::string bytes(1, static_cast<char>((2 << 3) | wire_type));
    WireReader reader(bytes, 0, kSchema, "m.onnx");
    WireField f;
    Status s = reader.Next(&f);
    EXPECT_EQ(s.code(), StatusCode::kMalformedInput);
    EXPECT_NE(
        s.message().find("invalid wire type " + std::to_string(wire_type) +
                         " for GraphProto.name (field 2)"),
        std::string::npos)
        << s.message();
  }
}

TEST(WireReaderTest, RejectsOverlongVarint) {
  std::string bytes = "\x08";
  bytes.append(10, '\xff');
  bytes.push_back('\x01');
  WireReader reader(bytes, 0, kSchema, "m.onnx");
  WireField f;
  Status s = reader.Next(&f);
  EXPECT_NE(s.message().find("varint longer than 10 bytes"), std::string::npos)
      << s.message();
}

TEST(WireReaderTest, RejectsTruncatedVarintAndFieldZero) {
  WireField f;
  std::string truncated = "\x08\x80";
  WireReader r1(truncated, 0, kSchema, "m.onnx");
  EXPECT_NE(r1.Next(&f).message().find("truncated field varint"),
            std::string::npos);
  std::string zero = std::string("\x00\x01", 2);
  WireReader r2(zero, 0, kSchema, "m.onnx");
  EXPECT_NE(r2.Next(&f).message().find("invalid field number"),
            std::string::npos);
}

TEST(WireReaderTest, MaxVarintRoundTrips) {
  std::string bytes;
  AppendTag(&bytes, 1, WireType::kVarint);
  AppendVarint(&bytes, UINT64_MAX);
  WireReader reader(bytes, 0, kSchema, "m.onnx");
  WireField f;
  ASSERT_TRUE(reader.Next(&f).ok());
  EXPECT_EQ(f.value, UINT64_MAX);
}

}  // namespace
}  // namespace mi::importers
