#include "compare/finite_sums.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mi::compare_internal {
namespace {

constexpr double kFp16Max = 65504.0;
// msprobe's Const.FLOAT_EPSILON (np.finfo(float).eps).
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

}  // namespace

void AddFinite(const double* x, const double* y, size_t n, Sums* s) {
  double dot = 0, norm_a = 0, norm_b = 0, sum_abs = 0, sum_sq = 0, sum_rel = 0,
         max_abs = s->max_abs, max_rel = s->max_rel;
  // Counts as doubles (exact below 2^53) so that every lane is a double.
  double w3 = 0, w5 = 0, w4 = 0, fa = 0, fb = 0;
  for (size_t i = 0; i < n; ++i) {
    double xi = x[i], yi = y[i];
    double diff = yi - xi;
    double abs_diff = std::fabs(diff);
    double abs_x = std::fabs(xi);
    dot += xi * yi;
    norm_a += xi * xi;
    norm_b += yi * yi;
    sum_abs += abs_diff;
    sum_sq += diff * diff;
    max_abs = std::max(max_abs, abs_diff);
    // msprobe: a zero reference gets epsilon added on both sides, so the
    // error is |b| / epsilon (abs_diff is |b| there).
    double rel = abs_diff / (xi == 0 ? kEpsilon : abs_x);
    max_rel = std::max(max_rel, rel);
    sum_rel += rel;
    w3 += rel < 0.001 ? 1.0 : 0.0;
    w5 += rel < 0.005 ? 1.0 : 0.0;
    w4 += rel < 0.0001 ? 1.0 : 0.0;
    fa += abs_x > kFp16Max ? 1.0 : 0.0;
    fb += std::fabs(yi) > kFp16Max ? 1.0 : 0.0;
  }
  s->dot += dot;
  s->norm_a += norm_a;
  s->norm_b += norm_b;
  s->sum_abs += sum_abs;
  s->sum_sq += sum_sq;
  s->sum_rel += sum_rel;
  s->max_abs = max_abs;
  s->max_rel = max_rel;
  s->within_1e3 += static_cast<uint64_t>(w3);
  s->within_5e3 += static_cast<uint64_t>(w5);
  s->within_1e4 += static_cast<uint64_t>(w4);
  s->fp16_a += static_cast<uint64_t>(fa);
  s->fp16_b += static_cast<uint64_t>(fb);
}

}  // namespace mi::compare_internal
