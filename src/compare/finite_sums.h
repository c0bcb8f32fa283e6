#pragma once

// The sums of a block of pairs known to be finite: the metrics kernel's
// inner loop (tensor_metrics.cc), in a file of its own because it is
// compiled with finite-only math and reassociation so that it vectorizes
// (src/compare/CMakeLists.txt); the NaN / Inf checks stay outside it.

#include <cstddef>
#include <cstdint>

namespace mi::compare_internal {

// Sums over finite pairs (a = reference x, b = y). The order of additions
// is the compiler's, fixed per build.
struct Sums {
  double dot = 0, norm_a = 0, norm_b = 0, sum_abs = 0, sum_sq = 0, sum_rel = 0,
         max_abs = 0, max_rel = 0;
  uint64_t within_1e3 = 0, within_5e3 = 0, within_1e4 = 0, fp16_a = 0,
           fp16_b = 0;
};

// Adds n finite pairs to `s`.
void AddFinite(const double* x, const double* y, size_t n, Sums* s);

}  // namespace mi::compare_internal
