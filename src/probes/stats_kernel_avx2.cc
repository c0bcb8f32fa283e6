// The statistics kernel for AVX2 + FMA, called only when the processor has
// them (tensor_stats.cc). Every header is included before the target
// switch, so that inline functions and templates the linker may share with
// other files stay baseline code; only the kernel's own functions are
// compiled for AVX2.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "probes/half.h"
#include "probes/stats_kernel.h"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), \
                             apply_to = function)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

#define MI_STATS_KERNEL StatsKernelAvx2
#include "probes/stats_kernel.inc"

#if defined(__clang__)
#pragma clang attribute pop
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
