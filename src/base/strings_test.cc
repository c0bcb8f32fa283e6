#include "base/strings.h"

#include <algorithm>
#include <string>
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
}

}  // namespace
}  // namespace mi
