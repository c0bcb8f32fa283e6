#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "model_inspector/probes.h"

namespace mi {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// [1, 2, 3, 4] by hand: mean 2.5; deviations -1.5 -0.5 0.5 1.5, squares
// sum to 5, population variance 5/4; sum of squares 1+4+9+16 = 30.
TEST(TensorStats, HandComputedFloat32) {
  const std::vector<float> x = {1, 2, 3, 4};
  TensorStats s =
      *ComputeTensorStats(TensorView{x.data(), ProbeDType::kFloat32, {2, 2}});
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.nan, 0);
  EXPECT_EQ(s.zero, 0);
  EXPECT_EQ(*s.min, 1);
  EXPECT_EQ(*s.max, 4);
  EXPECT_DOUBLE_EQ(*s.mean, 2.5);
  EXPECT_DOUBLE_EQ(*s.std, std::sqrt(1.25));
  EXPECT_DOUBLE_EQ(*s.l2, std::sqrt(30.0));
  EXPECT_EQ(*s.abs_max, 4);
  EXPECT_EQ(s.dtype, "float32");
  EXPECT_EQ(s.shape, (std::vector<int64_t>{2, 2}));
}

// [0, NaN, +Inf, -Inf, -2, 2]: finite values 0, -2, 2: mean 0, variance
// (0 + 4 + 4) / 3, sum of squares 8, |x| at most 2.
TEST(TensorStats, NonFiniteCountedAndSkipped) {
  const std::vector<double> x = {0, kNaN, kInf, -kInf, -2, 2};
  TensorStats s = ComputeTensorStats(x.data(), x.size(), ProbeDType::kFloat64);
  EXPECT_EQ(s.count, 6);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.pos_inf, 1);
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.zero, 1);
  EXPECT_EQ(*s.min, -2);
  EXPECT_EQ(*s.max, 2);
  EXPECT_DOUBLE_EQ(*s.mean, 0);
  EXPECT_DOUBLE_EQ(*s.std, std::sqrt(8.0 / 3.0));
  EXPECT_DOUBLE_EQ(*s.l2, std::sqrt(8.0));
  EXPECT_EQ(*s.abs_max, 2);
}

TEST(TensorStats, NoFiniteValueLeavesMomentsAbsent) {
  const std::vector<float> x = {NAN, INFINITY};
  TensorStats s = ComputeTensorStats(x.data(), x.size(), ProbeDType::kFloat32);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.pos_inf, 1);
  EXPECT_FALSE(s.min.has_value());
  EXPECT_FALSE(s.mean.has_value());
  EXPECT_FALSE(s.std.has_value());
  TensorStats empty = ComputeTensorStats(nullptr, 0, ProbeDType::kFloat32);
  EXPECT_EQ(empty.count, 0);
  EXPECT_FALSE(empty.max.has_value());
}

// float16 bit patterns from IEEE 754 binary16: 0x3c00 = 1, 0xc000 = -2,
// 0x7bff = 65504 (largest finite), 0x0001 = 2^-24 (smallest subnormal),
// 0x7e00 = NaN, 0xfc00 = -Inf, 0x8000 = -0.
TEST(TensorStats, Float16BitPatterns) {
  const std::vector<uint16_t> x = {0x3c00, 0xc000, 0x7bff, 0x0001,
                                   0x7e00, 0xfc00, 0x8000};
  TensorStats s = ComputeTensorStats(x.data(), x.size(), ProbeDType::kFloat16);
  EXPECT_EQ(s.dtype, "float16");
  EXPECT_EQ(s.count, 7);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.zero, 1);
  EXPECT_EQ(*s.max, 65504);
  EXPECT_EQ(*s.min, -2);
  EXPECT_DOUBLE_EQ(*s.mean, (1 - 2 + 65504 + std::ldexp(1.0, -24) + 0) / 5);
}

// bfloat16 is the top half of a float32: 0x3f80 = 1, 0xc040 = -3,
// 0x4120 = 10.
TEST(TensorStats, BFloat16) {
  const std::vector<uint16_t> x = {0x3f80, 0xc040, 0x4120};
  TensorStats s = ComputeTensorStats(x.data(), x.size(), ProbeDType::kBFloat16);
  EXPECT_EQ(s.dtype, "bfloat16");
  EXPECT_EQ(*s.min, -3);
  EXPECT_EQ(*s.max, 10);
  EXPECT_DOUBLE_EQ(*s.mean, 8.0 / 3.0);
  EXPECT_EQ(*s.abs_max, 10);
}

TEST(TensorStats, Integers) {
  const std::vector<int8_t> a = {-128, 127, 0};
  TensorStats s = ComputeTensorStats(a.data(), a.size(), ProbeDType::kInt8);
  EXPECT_EQ(*s.min, -128);
  EXPECT_EQ(*s.max, 127);
  EXPECT_EQ(s.zero, 1);
  EXPECT_NEAR(*s.mean, -1.0 / 3.0, 1e-12);
  EXPECT_EQ(*s.abs_max, 128);
  const std::vector<uint8_t> b = {1, 0, 1, 1};  // bool
  TensorStats t = ComputeTensorStats(b.data(), b.size(), ProbeDType::kBool);
  EXPECT_EQ(t.dtype, "bool");
  EXPECT_DOUBLE_EQ(*t.mean, 0.75);
  EXPECT_EQ(t.zero, 1);
  const std::vector<int64_t> c = {int64_t{1} << 40, -(int64_t{1} << 40)};
  TensorStats u = ComputeTensorStats(c.data(), c.size(), ProbeDType::kInt64);
  EXPECT_DOUBLE_EQ(*u.mean, 0);
  EXPECT_DOUBLE_EQ(*u.std, std::ldexp(1.0, 40));
}

// A large mean against a small spread: 1e9 + (+1 / -1 alternately) has
// mean 1e9 and std exactly 1; the naive sum-of-squares formula loses it.
TEST(TensorStats, VarianceExactWithLargeMean) {
  std::vector<double> x(100001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1e9 + (i % 2 ? 1.0 : -1.0);
  x.back() = 1e9;  // odd count: one value at the mean
  TensorStats s = ComputeTensorStats(x.data(), x.size(), ProbeDType::kFloat64);
  const double n = static_cast<double>(x.size());
  EXPECT_NEAR(*s.std, std::sqrt((n - 1) / n), 1e-9);
  EXPECT_DOUBLE_EQ(*s.mean, 1e9);
}

// Across chunk boundaries, with NaNs and infinities in some chunks only:
// the same figures as a plain two-pass loop in long double. float32 is
// summed in float within blocks (16 values per lane) and in double across
// them, so the figures agree to about float32's own precision (relative
// 1e-6 here; the values themselves carry 6e-8).
TEST(TensorStats, MatchesTwoPassReferenceAcrossChunks) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(3.0f, 5.0f);
  std::vector<float> x(2048 * 5 + 77);
  for (float& v : x) v = normal(rng);
  x[3000] = NAN;
  x[3001] = INFINITY;
  x[9000] = -INFINITY;
  x[10] = 0;
  long double sum = 0;
  long double sq = 0;
  int64_t n = 0;
  float lo = INFINITY;
  float hi = -INFINITY;
  for (float v : x) {
    if (!std::isfinite(v)) continue;
    sum += v;
    sq += static_cast<long double>(v) * v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ++n;
  }
  const long double mean = sum / n;
  long double m2 = 0;
  for (float v : x) {
    if (std::isfinite(v)) m2 += (v - mean) * (v - mean);
  }
  TensorStats s = ComputeTensorStats(x.data(), x.size(), ProbeDType::kFloat32);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.pos_inf, 1);
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.zero, 1);
  EXPECT_EQ(*s.min, lo);
  EXPECT_EQ(*s.max, hi);
  const double ref_std = std::sqrt(static_cast<double>(m2 / n));
  const double ref_l2 = std::sqrt(static_cast<double>(sq));
  EXPECT_NEAR(*s.mean, static_cast<double>(mean), 1e-6 * ref_std);
  EXPECT_NEAR(*s.std, ref_std, 1e-6 * ref_std);
  EXPECT_NEAR(*s.l2, ref_l2, 1e-6 * ref_l2);
}

// float64 is summed in double throughout: agreement to 1e-12.
TEST(TensorStats, Float64MatchesTwoPassReference) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(-7.0, 0.25);
  std::vector<double> x(4096 * 3 + 1000);
  for (double& v : x) v = normal(rng);
  x[5000] = kNaN;
  long double sum = 0;
  int64_t n = 0;
  for (double v : x) {
    if (std::isfinite(v)) sum += v, ++n;
  }
  const long double mean = sum / n;
  long double m2 = 0;
  for (double v : x) {
    if (std::isfinite(v)) m2 += (v - mean) * (v - mean);
  }
  TensorStats s = ComputeTensorStats(x.data(), x.size(), ProbeDType::kFloat64);
  EXPECT_EQ(s.nan, 1);
  EXPECT_NEAR(*s.mean, static_cast<double>(mean), 1e-12);
  EXPECT_NEAR(*s.std, std::sqrt(static_cast<double>(m2 / n)), 1e-12);
}

TEST(TensorStats, DTypeNames) {
  EXPECT_EQ(ParseProbeDType("bfloat16"), ProbeDType::kBFloat16);
  EXPECT_EQ(ParseProbeDType("uint64"), ProbeDType::kUInt64);
  EXPECT_FALSE(ParseProbeDType("complex64").has_value());
  EXPECT_FALSE(ShapeElementCount({2, -1}).ok());
}

}  // namespace
}  // namespace mi
