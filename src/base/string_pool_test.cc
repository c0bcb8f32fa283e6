#include "base/string_pool.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mi {
namespace {

TEST(StringPoolTest, InternsOncePerDistinctString) {
  StringPool pool;
  StringId a = pool.Intern("conv1");
  StringId b = pool.Intern(std::string("conv") + "1");
  StringId c = pool.Intern("relu");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(pool.Get(a), "conv1");
  EXPECT_EQ(pool.Intern(""), StringPool::kEmpty);
  EXPECT_FALSE(pool.Find("missing").valid());
  EXPECT_EQ(pool.Find("relu"), c);
}

TEST(StringPoolTest, ViewsSurviveManyInsertions) {
  StringPool pool;
  StringId first = pool.Intern("first");
  std::string_view view = pool.Get(first);
  for (int i = 0; i < 200000; ++i) pool.Intern("s" + std::to_string(i));
  pool.Intern(std::string(600000, 'x'));  // a large string gets its own block
  EXPECT_EQ(view, "first");
  EXPECT_EQ(pool.Get(pool.Find("s199999")), "s199999");
}

}  // namespace
}  // namespace mi

namespace mi {
namespace {

TEST(StringPoolTest, FindAndInternAgreeAcrossGrowth) {
  StringPool pool;
  std::vector<StringId> ids;
  for (int i = 0; i < 50000; ++i) {
    ids.push_back(pool.Intern("/layer" + std::to_string(i % 977) + "/op" +
                              std::to_string(i)));
  }
  for (int i = 0; i < 50000; i += 7) {
    std::string s =
        "/layer" + std::to_string(i % 977) + "/op" + std::to_string(i);
    EXPECT_EQ(pool.Find(s), ids[i]);
    EXPECT_EQ(pool.Intern(s), ids[i]);
    EXPECT_EQ(pool.Get(ids[i]), s);
  }
  EXPECT_EQ(pool.size(), 50001u);
  // Prefixes, suffixes and lengths around the 8-byte step differ.
  EXPECT_NE(pool.Intern("abcdefgh"), pool.Intern("abcdefghi"));
  EXPECT_NE(pool.Intern("abcdefgh"), pool.Intern("abcdefg"));
  EXPECT_NE(pool.Intern(std::string("a\0b", 3)), pool.Intern("a"));
}

}  // namespace
}  // namespace mi
