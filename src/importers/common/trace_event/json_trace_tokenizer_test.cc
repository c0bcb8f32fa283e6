#include "importers/common/trace_event/json_trace_tokenizer.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mi::importers::trace_event {
namespace {

class CollectingDelegate : public JsonTraceTokenizer::Delegate {
 public:
  Status OnTraceEvent(std::string_view event_json) override {
    events.emplace_back(event_json);
    return Status::Ok();
  }
  Status OnTopLevelValue(std::string_view key,
                         std::string_view value_json) override {
    values[std::string(key)] = std::string(value_json);
    return Status::Ok();
  }
  std::vector<std::string> events;
  std::map<std::string, std::string> values;
};

struct Result {
  Status status;
  std::vector<std::string> events;
  std::map<std::string, std::string> values;
  bool unterminated = false;
  TraceContainer container = TraceContainer::kUnknown;
  uint64_t garbage = 0;
};

// Feeds `text` split at the given offsets.
Result Tokenize(std::string_view text, std::vector<size_t> splits = {}) {
  CollectingDelegate delegate;
  JsonTraceTokenizer tokenizer("t.json", &delegate);
  Result result;
  size_t begin = 0;
  splits.push_back(text.size());
  for (size_t split : splits) {
    result.status = tokenizer.Feed(text.substr(begin, split - begin));
    if (!result.status.ok()) return result;
    begin = split;
  }
  result.status = tokenizer.Finish();
  result.events = delegate.events;
  result.values = delegate.values;
  result.unterminated = tokenizer.unterminated_array();
  result.container = tokenizer.container();
  result.garbage = tokenizer.trailing_garbage_bytes();
  return result;
}

TEST(JsonTraceTokenizerTest, ArrayContainer) {
  Result r = Tokenize("[ {\"a\":1},\n{\"b\":{\"c\":2}} ]\n");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.container, TraceContainer::kArray);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0], "{\"a\":1}");
  EXPECT_EQ(r.events[1], "{\"b\":{\"c\":2}}");
  EXPECT_FALSE(r.unterminated);
}

TEST(JsonTraceTokenizerTest, UnterminatedArrayIsAccepted) {
  Result r = Tokenize("[{\"a\":1},\n{\"b\":2},\n");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.events.size(), 2u);
  EXPECT_TRUE(r.unterminated);
}

TEST(JsonTraceTokenizerTest, ObjectContainerWithKeysBeforeAndAfter) {
  std::string text = R"({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "GPU {0]"}],
  "metadata": {"x": [1, 2, {"y": "}"}]},
  "traceEvents": [{"ph":"X"}, {"ph":"i"}],
  "displayTimeUnit": "ms",
  "distributedInfo": {"rank": 3, "world_size": 8},
  "baseTimeNanoseconds": 1751410836000000000
})";
  Result r = Tokenize(text);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.container, TraceContainer::kObject);
  EXPECT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.values["schemaVersion"], "1");
  EXPECT_EQ(r.values["baseTimeNanoseconds"], "1751410836000000000");
  EXPECT_EQ(r.values["displayTimeUnit"], "\"ms\"");
  EXPECT_EQ(r.values["distributedInfo"], R"({"rank": 3, "world_size": 8})");
  EXPECT_EQ(r.values.count("metadata"), 0u);
}

TEST(JsonTraceTokenizerTest, StringsWithBracesQuotesAndEscapes) {
  std::string text =
      R"([{"name":"a}b{c","x":"q\"}\\","y":"\\"},{"name":"\u007d"}])";
  Result r = Tokenize(text);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0], R"({"name":"a}b{c","x":"q\"}\\","y":"\\"})");
  EXPECT_EQ(r.events[1], R"({"name":"\u007d"})");
}

TEST(JsonTraceTokenizerTest, EverySplitPointGivesTheSameEvents) {
  std::string text = R"({"otherData": {"k": "v\"}"},
 "traceEvents": [
  {"name": "a\\", "ph": "X", "args": {"s": "}{\""}},
  {"name": "b", "ph": "B"}
 ],
 "baseTimeNanoseconds": 42}
)";
  Result whole = Tokenize(text);
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  ASSERT_EQ(whole.events.size(), 2u);
  for (size_t split = 0; split <= text.size(); ++split) {
    Result r = Tokenize(text, {split});
    ASSERT_TRUE(r.status.ok())
        << "split " << split << ": " << r.status.ToString();
    EXPECT_EQ(r.events, whole.events) << "split " << split;
    EXPECT_EQ(r.values, whole.values) << "split " << split;
  }
  // Three chunks too.
  for (size_t a = 0; a <= text.size(); a += 3) {
    for (size_t b = a; b <= text.size(); b += 7) {
      Result r = Tokenize(text, {a, b});
      ASSERT_TRUE(r.status.ok());
      EXPECT_EQ(r.events, whole.events) << a << "," << b;
    }
  }
}

TEST(JsonTraceTokenizerTest, TruncatedInsideAnEventSaysWhereItStarted) {
  Result r = Tokenize("[\n{\"a\":1},\n  {\"b\": \"x", {5, 12});
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(r.status.message().find("t.json:3:3: truncated"), std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("started at line 3"), std::string::npos);
}

TEST(JsonTraceTokenizerTest, ErrorsSayWhatWasExpected) {
  Result empty = Tokenize("  \n");
  EXPECT_NE(empty.status.message().find("empty input"), std::string::npos);
  Result garbage = Tokenize("[{\"a\":1}\n x]");
  EXPECT_NE(garbage.status.message().find(
                "t.json:2:2: unexpected character in the trace event list; "
                "expected '{' (a trace event) or ']', found 'x]'"),
            std::string::npos)
      << garbage.status.message();
  Result not_array = Tokenize("{\"traceEvents\": 5}");
  EXPECT_NE(not_array.status.message().find("\"traceEvents\" is not an array"),
            std::string::npos);
  Result no_events = Tokenize("{\"a\": 1}");
  EXPECT_NE(no_events.status.message().find("no \"traceEvents\""),
            std::string::npos);
  Result not_json = Tokenize("hello");
  EXPECT_NE(not_json.status.message().find("t.json:1:1: not a Chrome trace"),
            std::string::npos);
}

TEST(JsonTraceTokenizerTest, DeepTopLevelNestingIsSkippedWithoutRecursion) {
  std::string text = "{\"metadata\": " + std::string(100000, '[') +
                     std::string(100000, ']') + ", \"traceEvents\": [{}]}";
  Result r = Tokenize(text);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(JsonTraceTokenizerTest, DeeplyNestedEventIsRefused) {
  std::string text = "[\n{\"args\": " + std::string(100000, '[') +
                     std::string(100000, ']') + "}]";
  Result r = Tokenize(text, {1000, 50000});
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("t.json:2:1: trace event nested deeper"),
            std::string::npos)
      << r.status.message();
}

TEST(JsonTraceTokenizerTest, TrailingGarbageIsCounted) {
  Result r = Tokenize("[{\"a\":1}]\nxyz");
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.garbage, 3u);
}

TEST(JsonTraceTokenizerTest, ByteOrderMarkIsSkipped) {
  Result r = Tokenize("\xEF\xBB\xBF[{\"a\":1}]", {1});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(JsonTraceTokenizerTest, CountNewlinesAndPositions) {
  std::string text(1000, 'x');
  text[3] = '\n';
  text[500] = '\n';
  text[999] = '\n';
  EXPECT_EQ(CountNewlines(text), 3u);
  TextPosition p = AdvancePosition({1, 1}, "ab\ncd");
  EXPECT_EQ(p.line, 2u);
  EXPECT_EQ(p.column, 3u);
}

}  // namespace
}  // namespace mi::importers::trace_event
