#pragma once

// The statistics kernel's inner loops (stats_kernel.inc), compiled twice:
// for the baseline x86-64 instruction set and for AVX2 + FMA, chosen at run
// time (tensor_stats.cc). Internal to src/probes.

#include <cstdint>

#include "model_inspector/probes.h"

namespace mi::probes {

// Moments of the finite values (count, mean, sum of squared deviations,
// min, max) and the element counts.
struct KernelState {
  int64_t n = 0;
  double mean = 0;
  double m2 = 0;
  double min = 0;
  double max = 0;
  int64_t nan = 0;
  int64_t pos_inf = 0;
  int64_t neg_inf = 0;
  int64_t zero = 0;
};

void StatsKernelBaseline(const void* data, uint64_t count, ProbeDType dtype,
                         KernelState* state);
void StatsKernelAvx2(const void* data, uint64_t count, ProbeDType dtype,
                     KernelState* state);

}  // namespace mi::probes
