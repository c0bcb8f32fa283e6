// The statistics of one tensor (include/model_inspector/probes.h): the
// kernel (stats_kernel.inc) for AVX2 + FMA when the processor has them,
// else for the baseline instruction set; dtype names and sizes.

#include <algorithm>
#include <cmath>
#include <limits>

#include "model_inspector/probes.h"
#include "probes/stats_kernel.h"

namespace mi {
namespace {

bool HasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

}  // namespace

std::string_view ProbeDTypeName(ProbeDType dtype) {
  switch (dtype) {
    case ProbeDType::kFloat16:
      return "float16";
    case ProbeDType::kBFloat16:
      return "bfloat16";
    case ProbeDType::kFloat32:
      return "float32";
    case ProbeDType::kFloat64:
      return "float64";
    case ProbeDType::kInt8:
      return "int8";
    case ProbeDType::kInt16:
      return "int16";
    case ProbeDType::kInt32:
      return "int32";
    case ProbeDType::kInt64:
      return "int64";
    case ProbeDType::kUInt8:
      return "uint8";
    case ProbeDType::kUInt16:
      return "uint16";
    case ProbeDType::kUInt32:
      return "uint32";
    case ProbeDType::kUInt64:
      return "uint64";
    case ProbeDType::kBool:
      return "bool";
  }
  return "?";
}

std::optional<ProbeDType> ParseProbeDType(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(ProbeDType::kBool); ++i) {
    const auto dtype = static_cast<ProbeDType>(i);
    if (ProbeDTypeName(dtype) == name) return dtype;
  }
  return std::nullopt;
}

size_t ProbeDTypeSize(ProbeDType dtype) {
  switch (dtype) {
    case ProbeDType::kInt8:
    case ProbeDType::kUInt8:
    case ProbeDType::kBool:
      return 1;
    case ProbeDType::kFloat16:
    case ProbeDType::kBFloat16:
    case ProbeDType::kInt16:
    case ProbeDType::kUInt16:
      return 2;
    case ProbeDType::kFloat32:
    case ProbeDType::kInt32:
    case ProbeDType::kUInt32:
      return 4;
    case ProbeDType::kFloat64:
    case ProbeDType::kInt64:
    case ProbeDType::kUInt64:
      return 8;
  }
  return 1;
}

bool ProbeDTypeIsFloat(ProbeDType dtype) {
  return dtype == ProbeDType::kFloat16 || dtype == ProbeDType::kBFloat16 ||
         dtype == ProbeDType::kFloat32 || dtype == ProbeDType::kFloat64;
}

const std::vector<std::string>& TensorStatsNames() {
  static const std::vector<std::string> names = {
      "count", "nan",  "pos_inf", "neg_inf", "zero",   "min",
      "max",   "mean", "std",     "l2",      "abs_max"};
  return names;
}

StatusOr<uint64_t> ShapeElementCount(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return InvalidArgumentError("tensor shape has a negative dimension " +
                                  std::to_string(d));
    }
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() /
                              static_cast<uint64_t>(d)) {
      return InvalidArgumentError("tensor shape's element count overflows");
    }
    count *= static_cast<uint64_t>(d);
  }
  return count;
}

TensorStats ComputeTensorStats(const void* data, uint64_t count,
                               ProbeDType dtype) {
  probes::KernelState k;
  if (HasAvx2()) {
    probes::StatsKernelAvx2(data, count, dtype, &k);
  } else {
    probes::StatsKernelBaseline(data, count, dtype, &k);
  }
  TensorStats stats;
  stats.count = static_cast<int64_t>(count);
  stats.nan = k.nan;
  stats.pos_inf = k.pos_inf;
  stats.neg_inf = k.neg_inf;
  stats.zero = k.zero;
  stats.dtype = std::string(ProbeDTypeName(dtype));
  if (k.n > 0) {
    const double n = static_cast<double>(k.n);
    stats.min = k.min;
    stats.max = k.max;
    stats.mean = k.mean;
    stats.std = std::sqrt(std::max(0.0, k.m2 / n));
    // sum x^2 = M2 + n * mean^2 (both terms non-negative: no cancellation).
    stats.l2 = std::sqrt(k.m2 + n * k.mean * k.mean);
    stats.abs_max = std::max(std::fabs(k.min), std::fabs(k.max));
  }
  return stats;
}

StatusOr<TensorStats> ComputeTensorStats(const TensorView& tensor) {
  MI_ASSIGN_OR_RETURN(uint64_t count, ShapeElementCount(tensor.shape));
  if (count > 0 && tensor.data == nullptr) {
    return InvalidArgumentError("tensor has elements but no data");
  }
  TensorStats stats = ComputeTensorStats(tensor.data, count, tensor.dtype);
  stats.shape = tensor.shape;
  return stats;
}

}  // namespace mi
