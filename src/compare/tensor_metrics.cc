// The metrics kernel: two tensors of any element types, one pass over
// both. Elements are widened to double a block at a time (so every type
// pair shares one loop) and every sum is kept in double.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "compare/finite_sums.h"
#include "model_inspector/compare.h"

namespace mi {
namespace {

using compare_internal::AddFinite;
using compare_internal::Sums;

// msprobe's Const.FLOAT_EPSILON (np.finfo(float).eps): the stand-in for a
// zero reference value in relative errors.
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
constexpr size_t kBlock = 4096;

std::string Figure(double v) { return fmt::format("{:.6g}", v); }

bool AllFinite(const double* x, const double* y, size_t n) {
  // |v| <= DBL_MAX is false for NaN and Inf alike.
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    ok &= std::fabs(x[i]) <= std::numeric_limits<double>::max();
    ok &= std::fabs(y[i]) <= std::numeric_limits<double>::max();
  }
  return ok;
}

}  // namespace

StatusOr<TensorMetrics> CompareTensors(const TensorSpan& a,
                                       const TensorSpan& b) {
  if (a.count != b.count) {
    return InvalidArgumentError(
        fmt::format("the tensors hold {} and {} elements; expected the same "
                    "number",
                    a.count, b.count));
  }
  TensorMetrics m;
  m.count = a.count;
  Sums sums;
  std::array<double, kBlock> va, vb;
  for (uint64_t begin = 0; begin < a.count; begin += kBlock) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, a.count - begin));
    WidenElements(a, begin, n, va.data());
    WidenElements(b, begin, n, vb.data());
    if (AllFinite(va.data(), vb.data(), n)) {
      AddFinite(va.data(), vb.data(), n, &sums);
      m.compared += n;
      continue;
    }
    // A block with NaN or Inf: element by element.
    for (size_t i = 0; i < n; ++i) {
      double x = va[i], y = vb[i];
      bool x_nan = std::isnan(x), y_nan = std::isnan(y);
      bool x_inf = std::isinf(x), y_inf = std::isinf(y);
      m.nan_a += x_nan;
      m.nan_b += y_nan;
      m.inf_a += x_inf;
      m.inf_b += y_inf;
      if (x_nan || y_nan || x_inf || y_inf) {
        if (x_nan != y_nan) {
          ++m.nan_mismatch;
        } else if (x_inf != y_inf || (x_inf && x != y)) {
          ++m.inf_mismatch;
        }
        continue;
      }
      AddFinite(&va[i], &vb[i], 1, &sums);
      ++m.compared;
    }
  }
  double dot = sums.dot, norm_a = sums.norm_a, norm_b = sums.norm_b,
         sum_abs = sums.sum_abs, sum_sq = sums.sum_sq, sum_rel = sums.sum_rel;
  uint64_t within_1e3 = sums.within_1e3, within_5e3 = sums.within_5e3,
           within_1e4 = sums.within_1e4;
  m.max_abs_err = sums.max_abs;
  m.max_rel_err = sums.max_rel;
  m.fp16_overflow_a = sums.fp16_a;
  m.fp16_overflow_b = sums.fp16_b;
  if (m.compared > 0) {
    double n = static_cast<double>(m.compared);
    m.mean_abs_err = sum_abs / n;
    m.rmse = std::sqrt(sum_sq / n);
    m.mean_rel_err = sum_rel / n;
    m.one_thousandth_ratio = within_1e3 / n;
    m.five_thousandths_ratio = within_5e3 / n;
    m.ten_thousandth_ratio = within_1e4 / n;
    m.relative_euclidean = norm_a > 0 ? std::sqrt(sum_sq / norm_a) : 0;
    // msprobe's GetCosineSimilarity: norms within epsilon count as zero.
    bool a_zero = std::sqrt(norm_a) <= kEpsilon;
    bool b_zero = std::sqrt(norm_b) <= kEpsilon;
    if (a_zero && b_zero) {
      m.cosine = 1.0;
    } else if (!a_zero && !b_zero) {
      m.cosine = dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
    }
  }
  return m;
}

StatsMetrics CompareStats(const TensorStatsView& a, const TensorStatsView& b) {
  StatsMetrics m;
  auto one = [](const std::optional<double>& x, const std::optional<double>& y,
                std::optional<double>* diff, std::optional<double>* rel) {
    if (!x || !y || !std::isfinite(*x) || !std::isfinite(*y)) return;
    *diff = *y - *x;
    *rel = std::fabs(*y - *x) / std::max(std::fabs(*x), kEpsilon);
  };
  one(a.max, b.max, &m.max_diff, &m.max_rel_err);
  one(a.min, b.min, &m.min_diff, &m.min_rel_err);
  one(a.mean, b.mean, &m.mean_diff, &m.mean_rel_err);
  one(a.l2, b.l2, &m.l2_diff, &m.l2_rel_err);
  if (a.has_counts && b.has_counts) {
    m.nonfinite_mismatch =
        a.nan != b.nan || a.pos_inf != b.pos_inf || a.neg_inf != b.neg_inf;
  }
  return m;
}

CompareJudgement JudgeTensors(const TensorMetrics& m,
                              const CompareThresholds& t) {
  CompareJudgement j;
  auto fail = [&j](std::string reason) {
    j.pass = false;
    j.reasons.push_back(std::move(reason));
  };
  if (m.nan_mismatch > 0 || m.inf_mismatch > 0) {
    fail(fmt::format("NaN/Inf positions differ ({} NaN, {} Inf mismatches)",
                     m.nan_mismatch, m.inf_mismatch));
  }
  if (m.compared > 0) {
    double cosine = m.cosine.value_or(0.0);
    std::string cos_text = m.cosine ? Figure(cosine) : "undefined";
    if (cosine < t.cosine_min && m.max_abs_err > t.max_abs_err_max) {
      fail(fmt::format("cosine {} < {} and max abs err {} > {}", cos_text,
                       Figure(t.cosine_min), Figure(m.max_abs_err),
                       Figure(t.max_abs_err_max)));
    } else if (cosine < t.cosine_floor) {
      fail(fmt::format("cosine {} < {}", cos_text, Figure(t.cosine_floor)));
    }
    if (m.max_abs_err > t.max_abs_err_ceiling) {
      fail(fmt::format("max abs err {} > {}", Figure(m.max_abs_err),
                       Figure(t.max_abs_err_ceiling)));
    }
    if (t.one_thousandth_min >= 0 &&
        m.one_thousandth_ratio < t.one_thousandth_min) {
      fail(fmt::format("one-thousandth error ratio {} < {}",
                       Figure(m.one_thousandth_ratio),
                       Figure(t.one_thousandth_min)));
    }
    auto limit = [&fail](const char* what, double value, double max) {
      if (max >= 0 && value > max) {
        fail(fmt::format("{} {} > {}", what, Figure(value), Figure(max)));
      }
    };
    limit("max rel err", m.max_rel_err, t.max_rel_err_max);
    limit("mean rel err", m.mean_rel_err, t.mean_rel_err_max);
    limit("relative Euclidean distance", m.relative_euclidean,
          t.relative_euclidean_max);
    limit("RMSE", m.rmse, t.rmse_max);
  }
  if (m.fp16_overflow_b > m.fp16_overflow_a) {
    std::string reason = fmt::format(
        "{} values beyond float16's range (|x| > 65504) in B, {} "
        "in A",
        m.fp16_overflow_b, m.fp16_overflow_a);
    if (t.fp16_overflow_fails) {
      fail(std::move(reason));
    } else {
      j.reasons.push_back("warning: " + reason);
    }
  }
  return j;
}

CompareJudgement JudgeStats(const StatsMetrics& m, const CompareThresholds& t) {
  CompareJudgement j;
  if (m.nonfinite_mismatch) {
    j.pass = false;
    j.reasons.push_back("NaN/Inf counts differ");
  }
  auto check = [&](const char* what, const std::optional<double>& rel) {
    if (rel && *rel > t.stats_rel_err_max) {
      j.pass = false;
      j.reasons.push_back(fmt::format("{} relative error {} > {}", what,
                                      Figure(*rel),
                                      Figure(t.stats_rel_err_max)));
    }
  };
  check("max", m.max_rel_err);
  check("min", m.min_rel_err);
  check("mean", m.mean_rel_err);
  check("L2 norm", m.l2_rel_err);
  return j;
}

}  // namespace mi
