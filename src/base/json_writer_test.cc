#include "base/json_writer.h"

#include <limits>

#include <gtest/gtest.h>

namespace mi {
namespace {

TEST(JsonWriterTest, WritesNestedValues) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject()
      .Field("name", "conv")
      .FieldInt("n", -3)
      .Key("list")
      .BeginArray()
      .Int(1)
      .Double(2.5)
      .Bool(true)
      .Null()
      .EndArray()
      .Key("empty")
      .BeginObject()
      .EndObject()
      .EndObject();
  EXPECT_EQ(out,
            R"({"name":"conv","n":-3,"list":[1,2.5,true,null],"empty":{}})");
}

TEST(JsonWriterTest, EscapesHostileStrings) {
  std::string out;
  JsonWriter::AppendEscaped(&out, std::string("a\"b\\c\n\x01\xff", 8));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\xEF\xBF\xBD\"");
}

// ESC, DEL, C1 CSI (U+009B) and the right-to-left override (U+202E) are
// written as \u escapes: the same string to a JSON reader, nothing a
// terminal acts on when the JSON is printed.
TEST(JsonWriterTest, EscapesTerminalControls) {
  std::string out;
  JsonWriter::AppendEscaped(
      &out, "a\x1b]0;t\x07|\x7f|\xc2\x9b|\xe2\x80\xae|\xc3\xa9");
  EXPECT_EQ(out, "\"a\\u001b]0;t\\u0007|\\u007f|\\u009b|\\u202e|\xc3\xa9\"");
}

TEST(JsonWriterTest, NonFiniteDoublesBecomeNull) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray()
      .Double(std::numeric_limits<double>::infinity())
      .Double(0.1)
      .EndArray();
  EXPECT_EQ(out, "[null,0.1]");
}

}  // namespace
}  // namespace mi
