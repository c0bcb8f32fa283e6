#include "base/strings.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "base/checked_math.h"

namespace mi {
namespace {

TEST(StringsTest, NaturalLessOrdersDigitRunsAsNumbers) {
  // msprof numbers its timeline slices from 0 without padding.
  std::vector<std::string> names = {
      "msprof_slice_10.json", "msprof_slice_2.json", "msprof_slice_0.json",
      "msprof_slice_1.json"};
  std::sort(names.begin(), names.end(),
            [](const auto& a, const auto& b) { return NaturalLess(a, b); });
  EXPECT_EQ(names, (std::vector<std::string>{
                       "msprof_slice_0.json", "msprof_slice_1.json",
                       "msprof_slice_2.json", "msprof_slice_10.json"}));
  EXPECT_FALSE(NaturalLess("a7", "a007"));  // equal numbers: neither first
  EXPECT_FALSE(NaturalLess("a007", "a7"));
  EXPECT_TRUE(NaturalLess("a7b", "a7c"));
  EXPECT_TRUE(NaturalLess("a", "a1"));  // a prefix comes first
  EXPECT_TRUE(NaturalLess("B", "a"));   // bytewise outside digits
  EXPECT_FALSE(NaturalLess("x", "x"));
}

TEST(StringsTest, CaseInsensitiveMatching) {
  EXPECT_TRUE(EqualsIgnoringCase("HCCL", "hccl"));
  EXPECT_FALSE(EqualsIgnoringCase("HCCL", "HCC"));
  EXPECT_TRUE(ContainsIgnoringCase("MEMCPY_ASYNC", "memcpy"));
  EXPECT_TRUE(ContainsIgnoringCase("gpu_memcpy", "MEMCPY"));
  EXPECT_TRUE(ContainsIgnoringCase("abc", ""));
  EXPECT_FALSE(ContainsIgnoringCase("dm", "dma"));
  EXPECT_TRUE(ContainsIgnoringCase("", ""));
  EXPECT_TRUE(StartsWithIgnoringCase("hcom_allReduce", "HCOM_"));
  EXPECT_TRUE(StartsWithIgnoringCase("KERNEL_AICORE", "kernel_"));
  EXPECT_FALSE(StartsWithIgnoringCase("hco", "hcom_"));
  EXPECT_FALSE(StartsWithIgnoringCase("xhcom_", "hcom_"));
  EXPECT_TRUE(Contains("a \"ph\": 1", "\"ph\""));
  EXPECT_FALSE(Contains("ph", "\"ph\""));
}

TEST(StringsTest, TrimsTheGivenBytes) {
  EXPECT_EQ(Trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(Trim("\v\fx\f"), "x");  // isspace's set by default
  EXPECT_EQ(Trim("\vx", kJsonWhitespace), "\vx");
  EXPECT_EQ(TrimLeft("  a  "), "a  ");
  EXPECT_EQ(TrimRight("  a  "), "  a");
  EXPECT_EQ(TrimRight("12\t\r", " \t\r"), "12");
  EXPECT_EQ(Trim("//a/b//", "/"), "a/b");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim(""), "");
}

TEST(StringsTest, SplitsAndJoins) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(Split("a,,b", ','), (V{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (V{""}));
  EXPECT_EQ(Split("a,", ','), (V{"a", ""}));
  EXPECT_EQ(Split("/api/runs", '/'), (V{"", "api", "runs"}));
  EXPECT_EQ(SplitNonEmpty("a,,b,", ','), (V{"a", "b"}));
  EXPECT_EQ(SplitNonEmpty("", ','), V{});
  EXPECT_EQ(Join(V{"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join(std::vector<std::string>{"x"}, " > "), "x");
  EXPECT_EQ(Join(V{}, ", "), "");
  // Empty items keep their separators.
  EXPECT_EQ(Join(V{"", "a"}, ","), ",a");
}

TEST(StringsTest, FileNameOfAPath) {
  EXPECT_EQ(FileNameOf("a/b/c.json"), "c.json");
  EXPECT_EQ(FileNameOf("C:\\prof\\op_summary.csv"), "op_summary.csv");
  EXPECT_EQ(FileNameOf("plain.onnx"), "plain.onnx");
  EXPECT_EQ(FileNameOf("dir/"), "");
}

TEST(StringsTest, ParsesWholeNumbersOnly) {
  EXPECT_EQ(ParseInteger<uint64_t>("0"), 0u);
  EXPECT_EQ(ParseInteger<uint64_t>("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseInteger<uint64_t>("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseInteger<int64_t>("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseInteger<int64_t>("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseInteger<int64_t>("-17"), -17);
  EXPECT_EQ(ParseInteger<uint32_t>("4294967296"), std::nullopt);
  for (std::string_view bad :
       {"", "-", "-1", "+1", " 1", "1 ", "0x1", "1e3", "1.0", "\xef\xbc\x91"}) {
    EXPECT_EQ(ParseInteger<uint64_t>(bad), std::nullopt) << bad;
  }
  for (std::string_view bad : {"", "-", "+1", " 1", "1 ", "1.5"}) {
    EXPECT_EQ(ParseInteger<int64_t>(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseDouble("0.25"), 0.25);
  EXPECT_EQ(ParseDouble("-1e3"), -1000.0);
  EXPECT_EQ(ParseDouble("954.3701171875"), 954.3701171875);
  for (std::string_view bad : {"", "+1", " 1", "1 ", "1,5", "1e999", "x"}) {
    EXPECT_EQ(ParseDouble(bad), std::nullopt) << bad;
  }
}

TEST(StringsTest, DecodesUtf8Strictly) {
  EXPECT_EQ(DecodeUtf8("a", 0).code_point, U'a');
  Utf8Char e_acute = DecodeUtf8("\xc3\xa9", 0);  // U+00E9
  EXPECT_EQ(e_acute.code_point, 0xE9u);
  EXPECT_EQ(e_acute.length, 2u);
  Utf8Char rlo = DecodeUtf8("\xe2\x80\xae", 0);  // U+202E
  EXPECT_EQ(rlo.code_point, 0x202Eu);
  EXPECT_EQ(rlo.length, 3u);
  EXPECT_EQ(DecodeUtf8("\xf0\x9f\x98\x80", 0).code_point, 0x1F600u);
  // Stray continuation, overlong '/', surrogate U+D800, past U+10FFFF,
  // truncated.
  for (std::string_view bad :
       {"\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
        "\xe2\x80"}) {
    EXPECT_EQ(DecodeUtf8(bad, 0).length, 0u) << bad.size();
  }
}

// Expected texts written out by hand from the rules in strings.h.
TEST(StringsTest, EscapesTerminalControls) {
  EXPECT_EQ(EscapeForTerminal("Conv_0/relu"), "Conv_0/relu");
  EXPECT_EQ(EscapeForTerminal("caf\xc3\xa9 \xe6\xa8\xa1\xe5\x9e\x8b"),
            "caf\xc3\xa9 \xe6\xa8\xa1\xe5\x9e\x8b");  // UTF-8 text stays
  EXPECT_EQ(EscapeForTerminal("a\\b"), "a\\b");
  // OSC 0 (set the window title) ended by BEL; CSI 2J (clear screen).
  EXPECT_EQ(EscapeForTerminal("x\x1b]0;pwned\x07y"), "x\\x1b]0;pwned\\x07y");
  EXPECT_EQ(EscapeForTerminal("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(EscapeForTerminal("row\r\nfake\trow"), "row\\r\\nfake\\trow");
  EXPECT_EQ(EscapeForTerminal(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeForTerminal("del\x7f"), "del\\x7f");
  // C1 CSI (U+009B) as UTF-8, and a bare 0x9b byte (8-bit CSI).
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b"
                              "2J"),
            "\\u009b2J");
  EXPECT_EQ(EscapeForTerminal("\x9b"
                              "2J"),
            "\\x9b2J");
  // Right-to-left override and a first-strong isolate.
  EXPECT_EQ(EscapeForTerminal("abc\xe2\x80\xae"
                              "fdp.exe\xe2\x81\xa8"),
            "abc\\u202efdp.exe\\u2068");
  EXPECT_EQ(EscapeForTerminal("\xe2\x80"), "\\xe2\\x80");  // truncated
}

TEST(CheckedMathTest, SaturatingInt64) {
  EXPECT_EQ(SaturatingInt64(-3.9), -3);
  EXPECT_EQ(SaturatingInt64(1e300), INT64_MAX);
  EXPECT_EQ(SaturatingInt64(-1e300), INT64_MIN);
  EXPECT_EQ(SaturatingInt64(9223372036854775808.0), INT64_MAX);
  EXPECT_EQ(SaturatingInt64(-9223372036854775808.0), INT64_MIN);
  EXPECT_EQ(SaturatingInt64(std::nan("")), 0);
}

}  // namespace
}  // namespace mi
