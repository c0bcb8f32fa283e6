#include "importers/common/trace_event/json_trace_parser.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace mi::importers::trace_event {
namespace {

TEST(TimestampTest, ExactNanosecondsWithoutDoubles) {
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1696000000123.456"),
            int64_t{1696000000123456});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1234.567"), int64_t{1234567});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("4909914679591.525"),
            int64_t{4909914679591525});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1623143093496582"),
            int64_t{1623143093496582000});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("5"), int64_t{5000});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("0.001"), int64_t{1});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("-2.5"), int64_t{-2500});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds(" 7.25 "), int64_t{7250});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds(".5"), int64_t{500});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("00012"), int64_t{12000});
}

TEST(TimestampTest, RoundsBeyondTheNanosecond) {
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1.0005"), int64_t{1001});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1.0004999"), int64_t{1000});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("0.0004"), int64_t{0});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1696000000123.4567"),
            int64_t{1696000000123457});
}

TEST(TimestampTest, Exponents) {
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1e3"), int64_t{1000000});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1.5E+2"), int64_t{150000});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("25e-3"), int64_t{25});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("0e400"), int64_t{0});
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("1e-400"), int64_t{0});
}

TEST(TimestampTest, OutOfRangeAndNotNumbers) {
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds("1e400"));
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds("9223372036854776"));
  EXPECT_EQ(ParseMicrosecondsToNanoseconds("9223372036854775.807"),
            std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds(""));
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds("abc"));
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds("1.2.3"));
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds("1e"));
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds("."));
  EXPECT_FALSE(ParseMicrosecondsToNanoseconds(std::string(400, '9')));
}

TEST(JsonTraceParserTest, ParsesFieldsOfEveryDialect) {
  JsonTraceParser parser;
  ParsedEvent e;
  EventParseError error;
  ASSERT_EQ(parser.Parse(R"({"ph": "X", "cat": "kernel", "name": "k",
      "pid": 0, "tid": "stream 7", "ts": "1696000000123.456", "dur": 5.527,
      "args": {"device": 0, "stream": 7, "correlation": 92159,
               "External id": 12, "bytes": "64", "grid": [1, 1, 1]}})",
                         &e, &error),
            JsonTraceParser::Outcome::kParsed)
      << error.what;
  EXPECT_EQ(e.ph, "X");
  EXPECT_EQ(e.cat, "kernel");
  EXPECT_EQ(e.ts_ns, 1696000000123456);
  EXPECT_EQ(e.dur_ns, 5527);
  EXPECT_EQ(e.pid.number, 0);
  EXPECT_EQ(e.tid.label, "stream 7");
  EXPECT_EQ(e.device, 0);
  EXPECT_EQ(e.stream, 7);
  EXPECT_EQ(e.correlation, 92159);
  EXPECT_EQ(e.external_id, 12);
  EXPECT_EQ(e.bytes, 64);

  ASSERT_EQ(parser.Parse(R"({"cat" : "Node","pid" :1,"tid" :"42","dur" :3,
      "ts" :10,"ph" : "X","name" :"conv_kernel_time","args" : {
      "op_name" : "Conv", "provider" : "CPUExecutionProvider",
      "input_type_shape" : [{"float":[1,3,224,224]}]}})",
                         &e, &error),
            JsonTraceParser::Outcome::kParsed);
  EXPECT_EQ(e.tid.number, 42);
  EXPECT_TRUE(e.tid.label.empty());
  EXPECT_EQ(e.op_name, "Conv");
  EXPECT_EQ(e.provider, "CPUExecutionProvider");
  EXPECT_EQ(e.shapes, R"([{"float":[1,3,224,224]}])");
}

TEST(JsonTraceParserTest, RepairsUnescapedOrtNames) {
  JsonTraceParser parser;
  ParsedEvent e;
  EventParseError error;
  EXPECT_EQ(
      parser.Parse("{\"name\":\"a\tb\nc\",\"ph\":\"X\",\"ts\":1}", &e, &error),
      JsonTraceParser::Outcome::kRepaired);
  EXPECT_EQ(e.name, "a\tb\nc");
  EXPECT_EQ(
      parser.Parse(R"({"name":"C:\models\x","ph":"X","ts":1})", &e, &error),
      JsonTraceParser::Outcome::kRepaired);
  EXPECT_EQ(e.name, "C:\\models\\x");
  EXPECT_EQ(
      parser.Parse("{\"name\":\"caf\xE9\",\"ph\":\"X\",\"ts\":1}", &e, &error),
      JsonTraceParser::Outcome::kRepaired);
  EXPECT_EQ(e.name, "caf\xEF\xBF\xBD");
}

TEST(JsonTraceParserTest, UnrepairableEventsFailWithAReason) {
  JsonTraceParser parser;
  ParsedEvent e;
  EventParseError error;
  EXPECT_EQ(parser.Parse(R"({"name":"a"b"c","ph":"X","ts":1})", &e, &error),
            JsonTraceParser::Outcome::kFailed);
  EXPECT_NE(error.what.find("invalid JSON"), std::string::npos);
  EXPECT_EQ(parser.Parse(R"({"name":"a","ph":"X","ts":1e400})", &e, &error),
            JsonTraceParser::Outcome::kFailed);
  EXPECT_NE(error.what.find("\"ts\" value '1e400'"), std::string::npos)
      << error.what;
  std::string deep =
      "{\"ph\":" + std::string(5000, '[') + std::string(5000, ']') + "}";
  EXPECT_EQ(parser.Parse(deep, &e, &error), JsonTraceParser::Outcome::kFailed);
}

TEST(RepairTest, LeavesValidJsonAlone) {
  std::string out;
  EXPECT_FALSE(
      RepairUnescapedStrings(R"({"a":"\"\\\/\b\f\n\r\t\u00e9"})", &out));
  EXPECT_TRUE(RepairUnescapedStrings("{\"a\":\"\x01\"}", &out));
  EXPECT_EQ(out, "{\"a\":\"\\u0001\"}");
}

}  // namespace
}  // namespace mi::importers::trace_event
