// ScopeGlobMatch on the demo's (ResNet-18, test/fixtures/resnet18/model.onnx)
// node names and scope paths. Every expectation is read off the path by
// hand: a pattern without a leading '/' must match a trailing run of whole
// segments, one with it the whole path.

#include "session/scope_glob.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace mi {
namespace {

bool Match(std::string_view pattern, std::string_view path) {
  std::vector<uint8_t> scratch;
  return ScopeGlobMatch(pattern, path, &scratch);
}

// The scope of the first conv of layer1's first block, and its node.
constexpr std::string_view kConvScope = "/layer1/layer1.0/conv1";
constexpr std::string_view kConvNode = "/layer1/layer1.0/conv1/Conv";

TEST(ScopeGlobTest, StarStaysInOneSegmentAndMatchesSuffixes) {
  // layer1 / layer1.0 / conv1: '*' takes "layer1.0", "conv*" takes "conv1".
  EXPECT_TRUE(Match("layer1/*/conv*", kConvScope));
  // The node's own path has four segments; its last three are
  // "layer1.0/conv1/Conv", whose first is not "layer1".
  EXPECT_FALSE(Match("layer1/*/conv*", kConvNode));
  // "conv*" ignores case, so it takes the node's last segment "Conv".
  EXPECT_TRUE(Match("layer1/*/*/conv*", kConvNode));
  EXPECT_TRUE(Match("conv*", kConvNode));
  EXPECT_TRUE(Match("conv1", kConvScope));
  // A suffix is whole segments: "onv1" is not a segment of the scope.
  EXPECT_FALSE(Match("onv1", kConvScope));
  // '*' does not cross '/': "layer1/*/Conv" would need three segments
  // ending in "Conv" and starting with "layer1".
  EXPECT_FALSE(Match("layer1/*/Conv", kConvNode));
  // The relu of the same block is not a conv.
  EXPECT_FALSE(Match("layer1/*/conv*", "/layer1/layer1.0/relu"));
  // The Add of a block sits directly in it: "/layer1/layer1.0".
  EXPECT_TRUE(Match("layer1/*", "/layer1/layer1.0"));
  EXPECT_FALSE(Match("layer1/*", kConvScope));
}

TEST(ScopeGlobTest, DoubleStarCrossesSegments) {
  EXPECT_TRUE(Match("layer1/**/conv*", kConvScope));
  EXPECT_TRUE(Match("layer1/**/conv*", kConvNode));
  // '**/' may also match no segment: "layer1.0/conv1" directly.
  EXPECT_TRUE(Match("layer1.0/**/conv1", kConvScope));
  EXPECT_TRUE(Match("**conv?/Conv", kConvNode));
  // The downsample conv of layer2's first block is two scopes down.
  constexpr std::string_view kDownsample =
      "/layer2/layer2.0/downsample/downsample.0/Conv";
  EXPECT_TRUE(Match("layer2/**/Conv", kDownsample));
  EXPECT_FALSE(Match("layer2/*/Conv", kDownsample));
  EXPECT_TRUE(
      Match("downsample/*", "/layer2/layer2.0/downsample/downsample.0"));
}

TEST(ScopeGlobTest, LeadingSlashAnchorsAtTheRoot) {
  EXPECT_TRUE(Match("/layer1/*/conv1/Conv", kConvNode));
  EXPECT_FALSE(Match("/layer1.0/conv1/Conv", kConvNode));
  // The stem conv "/conv1/Conv" against "/conv1/Conv", and the block's.
  EXPECT_TRUE(Match("/conv1/Conv", "/conv1/Conv"));
  EXPECT_FALSE(Match("/conv1/Conv", kConvNode));
  EXPECT_TRUE(Match("conv1/Conv", kConvNode));
  // A path without a leading '/' ("Flatten" under no scope) anchors too.
  EXPECT_TRUE(Match("/flatten", "Flatten"));
  EXPECT_TRUE(Match("flatten", "/Flatten"));
}

TEST(ScopeGlobTest, QuestionMarkIsOneCharacterOfASegment) {
  EXPECT_TRUE(Match("layer?/*/conv1/Conv", kConvNode));
  EXPECT_FALSE(Match("layer?", "/layer1/layer1.0"));  // "layer1.0" is longer
  EXPECT_TRUE(Match("layer?.?", "/layer1/layer1.0"));
  EXPECT_FALSE(Match("layer1?layer1.0", "/layer1/layer1.0"));  // not '/'
}

TEST(ScopeGlobTest, ManyStarsStayPolynomial) {
  // 200 stars against a 4000-character path that cannot match: the
  // matcher is pattern x path steps, not exponential.
  std::string pattern(200, '*');
  pattern += "b";
  std::string path(4000, 'a');
  EXPECT_FALSE(Match(pattern, path));
  std::string stars;
  for (int i = 0; i < 100; ++i) stars += "*/";
  stars += "x";
  EXPECT_FALSE(Match(stars, std::string(2000, '/')));
}

}  // namespace
}  // namespace mi
