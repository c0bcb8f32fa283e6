#include "base/strings.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mi
