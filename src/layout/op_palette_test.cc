#include "layout/op_palette.h"

#include <gtest/gtest.h>

namespace mi::layout {
namespace {

// The same vectors are checked on the web side (web/test/palette_test.mjs):
// both read op_palette.json and must agree on the hash fallback.
TEST(OpPaletteTest, TableColours) {
  EXPECT_EQ(OpFill("Conv"), (Rgb{0x8f, 0xb8, 0xf0}));
  EXPECT_EQ(OpOutline("Conv"), (Rgb{79, 101, 132}));
  EXPECT_EQ(CssHex(OpFill("Add")), "#f7c58f");
  EXPECT_EQ(CssHex(OpFill("MemcpyToHost")), "#c8c8c8");
}

TEST(OpPaletteTest, HashFallbackMatchesTheWebUi) {
  EXPECT_EQ(OpFill("MyCustomOp"), (Rgb{239, 190, 223}));
  EXPECT_EQ(OpOutline("MyCustomOp"), (Rgb{131, 104, 123}));
  EXPECT_EQ(OpFill("ge:TransData"), (Rgb{192, 239, 190}));
  EXPECT_EQ(OpOutline("ge:TransData"), (Rgb{106, 131, 104}));
}

TEST(OpPaletteTest, StableAndDistinct) {
  EXPECT_EQ(OpFill("Whatever"), OpFill("Whatever"));
  EXPECT_NE(OpFill("Conv"), OpFill("Relu"));
  EXPECT_EQ(CssHex({0, 1, 255}), "#0001ff");
}

}  // namespace
}  // namespace mi::layout
