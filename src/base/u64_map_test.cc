#include "base/u64_map.h"

#include <gtest/gtest.h>

namespace mi {
namespace {

TEST(U64MapTest, InsertsFindsAndKeepsFirstValue) {
  U64Map<uint32_t> map;
  EXPECT_EQ(map.Find(5), nullptr);
  for (uint64_t k = 0; k < 100000; ++k) {
    auto [value, inserted] = map.Emplace((k << 32) | (k * 7), uint32_t(k));
    EXPECT_TRUE(inserted);
    EXPECT_EQ(*value, k);
  }
  EXPECT_EQ(map.size(), 100000u);
  auto [value, inserted] = map.Emplace((3ull << 32) | 21, 999);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*value, 3u);
  for (uint64_t k = 0; k < 100000; k += 13) {
    const uint32_t* found = map.Find((k << 32) | (k * 7));
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, k);
  }
  EXPECT_EQ(map.Find(12345678), nullptr);
}

}  // namespace
}  // namespace mi
