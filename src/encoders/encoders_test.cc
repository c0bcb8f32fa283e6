// The encoders: the JSON adapter writes exactly what base/json_writer
// writes; the tree keeps what a result wrote; the table encoder lays out
// scalars, arrays of objects and sections with units from key names
// (expected text written out by hand below).

#include <string>

#include <gtest/gtest.h>

#include "base/json_writer.h"
#include "encoders/json_encoder.h"
#include "encoders/result_tree.h"
#include "encoders/table_encoder.h"

namespace mi::encoders {
namespace {

// A small result with every kind of value.
struct Sample : AnalysisResult {
  std::string_view analysis_id() const override { return "sample"; }
  void Write(ResultWriter& w) const override {
    w.BeginObject();
    w.Field("name", "rank 1").FieldInt("busy_ns", 62000);
    w.FieldDouble("share", 0.1234).FieldUInt("peak_bytes", 1536);
    w.FieldOptional("rank", std::optional<int32_t>());
    w.FieldBool("ok", true).FieldDouble("ratio", 1.158878504672897);
    w.Key("tracks").BeginArray().UInt(3).UInt(4).EndArray();
    w.Key("sources").BeginArray();
    w.BeginObject().FieldInt("source", 0).Field("name", "rank 0");
    w.FieldInt("busy_ns", 45000).Key("idle").BeginObject();
    w.FieldInt("total_ns", 40000).EndObject().EndObject();
    w.BeginObject().FieldInt("source", 1).Field("name", "rank 1");
    w.FieldInt("busy_ns", 62000).Key("idle").BeginObject();
    w.FieldInt("total_ns", 37000).EndObject().EndObject();
    w.EndArray();
    w.Key("imbalance").BeginObject();
    w.FieldDouble("max_over_mean", 1.5).Field("slowest", "rank 1");
    w.EndObject();
    w.EndObject();
  }
};

TEST(JsonEncoderTest, SameBytesAsJsonWriter) {
  for (bool pretty : {false, true}) {
    std::string expected;
    JsonWriter w(&expected, pretty);
    w.BeginObject().Field("name", "rank 1").FieldInt("busy_ns", 62000);
    w.FieldDouble("share", 0.1234).Key("peak_bytes").UInt(1536);
    w.Key("rank").Null();
    w.FieldBool("ok", true).FieldDouble("ratio", 1.158878504672897);
    w.Key("tracks").BeginArray().UInt(3).UInt(4).EndArray();
    w.Key("sources").BeginArray();
    w.BeginObject().FieldInt("source", 0).Field("name", "rank 0");
    w.FieldInt("busy_ns", 45000).Key("idle").BeginObject();
    w.FieldInt("total_ns", 40000).EndObject().EndObject();
    w.BeginObject().FieldInt("source", 1).Field("name", "rank 1");
    w.FieldInt("busy_ns", 62000).Key("idle").BeginObject();
    w.FieldInt("total_ns", 37000).EndObject().EndObject();
    w.EndArray();
    w.Key("imbalance").BeginObject();
    w.FieldDouble("max_over_mean", 1.5).Field("slowest", "rank 1");
    w.EndObject().EndObject();
    expected.push_back('\n');
    EXPECT_EQ(
        EncodeJson(Sample(), pretty ? JsonStyle::kPretty : JsonStyle::kCompact),
        expected);
  }
}

TEST(ResultTreeTest, KeepsStructureAndOrder) {
  ResultValue v = ToTree(Sample());
  ASSERT_EQ(v.kind, ResultValue::Kind::kObject);
  ASSERT_EQ(v.members.size(), 10u);
  EXPECT_EQ(v.members[0].first, "name");
  EXPECT_EQ(v.Find("busy_ns")->int_value, 62000);
  EXPECT_EQ(v.Find("rank")->kind, ResultValue::Kind::kNull);
  const ResultValue* sources = v.Find("sources");
  ASSERT_EQ(sources->items.size(), 2u);
  EXPECT_EQ(sources->items[1].Find("idle")->Find("total_ns")->int_value, 37000);
}

TEST(TableEncoderTest, UnitsFromKeyNames) {
  ResultValue ns;
  ns.kind = ResultValue::Kind::kInt;
  ns.int_value = 62000;
  EXPECT_EQ(HeaderOf("busy_ns"), "busy (us)");
  EXPECT_EQ(CellOf("busy_ns", ns), "62.0");  // 62000 ns = 62.0 us
  EXPECT_EQ(HeaderOf("ns"), "time (us)");
  EXPECT_EQ(HeaderOf("total_us"), "total (us)");
  ResultValue bytes;
  bytes.kind = ResultValue::Kind::kUInt;
  bytes.uint_value = 1536;  // 1.5 x 1024
  EXPECT_EQ(HeaderOf("peak_bytes"), "peak");
  EXPECT_EQ(CellOf("peak_bytes", bytes), "1.5 KiB");
  bytes.uint_value = 512;
  EXPECT_EQ(CellOf("bytes", bytes), "512 B");
  bytes.uint_value = 3 * 1024 * 1024;
  EXPECT_EQ(CellOf("weight_bytes", bytes), "3.0 MiB");
  ResultValue share;
  share.kind = ResultValue::Kind::kDouble;
  share.double_value = 0.1234;
  EXPECT_EQ(CellOf("share", share), "12.3%");
  EXPECT_EQ(CellOf("overlap_share", share), "12.3%");
  EXPECT_EQ(CellOf("ratio", share), "0.1234");
}

TEST(TableEncoderTest, MembersTakeTheirObjectsUnit) {
  ResultValue ns;
  ns.kind = ResultValue::Kind::kInt;
  ns.int_value = 322000;
  // "idle_by_reason_ns": {"host": 322000} is 322.0 us of host idle.
  EXPECT_EQ(HeaderOf("idle_by_reason_ns.host"), "idle by reason.host (us)");
  EXPECT_EQ(CellOf("idle_by_reason_ns.host", ns), "322.0");
  // A share object does not make its members shares.
  EXPECT_EQ(HeaderOf("by_share.count"), "by share.count");
  EXPECT_EQ(HeaderOf("a.b_ns.c"), "a.b.c (us)");
}

TEST(TableEncoderTest, TextLayout) {
  // Scalars as "key: value" lines, the array of objects as a table with
  // the nested object flattened, the nested object as a titled section.
  std::string expected =
      "Sample\n"
      "name: rank 1\n"
      "busy (us): 62.0\n"
      "share: 12.3%\n"
      "peak: 1.5 KiB\n"
      "rank: -\n"
      "ok: true\n"
      "ratio: 1.159\n"
      "tracks: 3, 4\n"
      "\n"
      "Sample / sources\n"
      "source  name    busy (us)  idle.total (us)\n"
      "------  ------  ---------  ---------------\n"
      "     0  rank 0       45.0             40.0\n"
      "     1  rank 1       62.0             37.0\n"
      "\n"
      "Sample / imbalance\n"
      "max over mean: 1.5\n"
      "slowest: rank 1\n";
  EXPECT_EQ(EncodeTables(Sample(), "Sample", TableFormat::kText), expected);
}

TEST(TableEncoderTest, CsvAndMarkdown) {
  std::string csv = EncodeTables(Sample(), "Sample", TableFormat::kCsv);
  EXPECT_NE(csv.find("# Sample / sources\nsource,name,busy (us),idle.total "
                     "(us)\n0,rank 0,45.0,40.0\n1,rank 1,62.0,37.0\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("# Sample\nfield,value\nname,rank 1\n"), std::string::npos)
      << csv;
  std::string md = EncodeTables(Sample(), "Sample", TableFormat::kMarkdown);
  EXPECT_NE(md.find("### Sample / sources\n\n| source | name | busy (us) | "
                    "idle.total (us) |\n|---:|---|---:|---:|\n"),
            std::string::npos)
      << md;
}

TEST(TableEncoderTest, TopLevelArrayAndEmptyArrays) {
  struct Rows : AnalysisResult {
    std::string_view analysis_id() const override { return "rows"; }
    void Write(ResultWriter& w) const override {
      w.BeginArray();
      w.BeginObject().Field("rule", "a").FieldInt("time_ns", 1500).EndObject();
      w.EndArray();
    }
  };
  EXPECT_EQ(EncodeTables(Rows(), "Findings", TableFormat::kText),
            "Findings\nrule  time (us)\n----  ---------\na           1.5\n");
  struct Empty : AnalysisResult {
    std::string_view analysis_id() const override { return "empty"; }
    void Write(ResultWriter& w) const override {
      w.BeginObject().Key("gaps").BeginArray().EndArray().EndObject();
    }
  };
  EXPECT_EQ(EncodeTables(Empty(), "Idle", TableFormat::kText),
            "Idle\ngaps: none\n");
}

// A name from an input file with ESC sequences, CR/LF and a C1 control:
// made visible in every table format before the format's own quoting, so
// no output holds a byte a terminal acts on (expected text by hand).
TEST(TableEncoderTest, TerminalControlsInCellsAreShownEscaped) {
  struct Hostile : AnalysisResult {
    std::string_view analysis_id() const override { return "hostile"; }
    void Write(ResultWriter& w) const override {
      w.BeginArray();
      w.BeginObject()
          .Field("name", "a\x1b]0;t\x07,\"b\"|\r\nfake row\xc2\x9b")
          .FieldInt("time_ns", 1000)
          .EndObject();
      w.EndArray();
    }
  };
  const std::string shown = "a\\x1b]0;t\\x07,\"b\"|\\r\\nfake row\\u009b";
  EXPECT_EQ(EncodeTables(Hostile(), "T\x1b[2J", TableFormat::kText),
            "T\\x1b[2J\nname" + std::string(shown.size() - 4, ' ') +
                "  time (us)\n" + std::string(shown.size(), '-') +
                "  ---------\n" + shown + "        1.0\n");
  EXPECT_EQ(EncodeTables(Hostile(), "T", TableFormat::kCsv),
            "# T\nname,time (us)\n"
            "\"a\\x1b]0;t\\x07,\"\"b\"\"|\\r\\nfake row\\u009b\",1.0\n");
  EXPECT_EQ(EncodeTables(Hostile(), "T", TableFormat::kMarkdown),
            "### T\n\n| name | time (us) |\n|---|---:|\n"
            "| a\\x1b]0;t\\x07,\"b\"\\|\\r\\nfake row\\u009b | 1.0 |\n");
}

}  // namespace
}  // namespace mi::encoders
