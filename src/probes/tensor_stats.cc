// The statistics kernel (include/model_inspector/probes.h).
//
// The tensor is read in chunks of kChunk elements. Per chunk, a first
// branch-free pass (vectorised by the compiler: independent lanes, no
// reduction the compiler would have to reorder) gives the sum, min, max and
// zero count; a sum that is not finite says the chunk holds a NaN or an
// infinity, and that chunk is then read again by a scalar pass that counts
// them and skips them. A second pass over the chunk, from cache, sums the
// squared deviations from the chunk's mean; chunks are merged with Chan et
// al.'s pairwise update, so the variance is exact to rounding even when the
// mean is large against the spread. Sums are in double for every type.
// float16 and bfloat16 chunks are widened to float first (a table for
// float16, a shift for bfloat16).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "model_inspector/probes.h"
#include "probes/half.h"

namespace mi {
namespace {

constexpr size_t kChunk = 2048;
constexpr int kLanes = 8;

// Running (n, mean, M2) of the finite values, plus min / max.
struct Moments {
  int64_t n = 0;
  double mean = 0;
  double m2 = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  void Merge(int64_t nb, double mean_b, double m2_b, double min_b,
             double max_b) {
    if (nb == 0) return;
    if (n == 0) {
      n = nb;
      mean = mean_b;
      m2 = m2_b;
    } else {
      const double total = static_cast<double>(n + nb);
      const double delta = mean_b - mean;
      mean += delta * static_cast<double>(nb) / total;
      m2 += m2_b + delta * delta * static_cast<double>(n) *
                       static_cast<double>(nb) / total;
      n += nb;
    }
    min = std::min(min, min_b);
    max = std::max(max, max_b);
  }
};

struct Counts {
  int64_t nan = 0;
  int64_t pos_inf = 0;
  int64_t neg_inf = 0;
  int64_t zero = 0;
};

// Sum of squared deviations from `mean` over n values (all finite).
template <typename T>
double SquaredDeviations(const T* x, size_t n, double mean) {
  std::array<double, kLanes> acc{};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double d = static_cast<double>(x[i + j]) - mean;
      acc[j] += d * d;
    }
  }
  double total = 0;
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    total += d * d;
  }
  for (double a : acc) total += a;
  return total;
}

// A chunk with a NaN or an infinity (floating types only): scalar, counting
// them and taking the moments of the finite values.
template <typename T>
void SlowChunk(const T* x, size_t n, Moments* moments, Counts* counts) {
  int64_t finite = 0;
  double sum = 0;
  double mn = std::numeric_limits<double>::infinity();
  double mx = -mn;
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    if (std::isnan(v)) {
      ++counts->nan;
    } else if (std::isinf(v)) {
      ++(v > 0 ? counts->pos_inf : counts->neg_inf);
    } else {
      ++finite;
      sum += v;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      if (v == 0) ++counts->zero;
    }
  }
  if (finite == 0) return;
  const double mean = sum / static_cast<double>(finite);
  double m2 = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    if (std::isfinite(v)) m2 += (v - mean) * (v - mean);
  }
  moments->Merge(finite, mean, m2, mn, mx);
}

template <typename T>
void Chunk(const T* x, size_t n, Moments* moments, Counts* counts) {
  // Lanes: independent accumulators the compiler keeps in vector registers.
  std::array<double, kLanes> sum{};
  std::array<T, kLanes> mn;
  std::array<T, kLanes> mx;
  std::array<int64_t, kLanes> zeros{};
  mn.fill(x[0]);
  mx.fill(x[0]);
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const T v = x[i + j];
      sum[j] += static_cast<double>(v);
      mn[j] = v < mn[j] ? v : mn[j];
      mx[j] = v > mx[j] ? v : mx[j];
      zeros[j] += v == T(0) ? 1 : 0;
    }
  }
  double total = 0;
  T lo = mn[0];
  T hi = mx[0];
  int64_t zero = 0;
  for (; i < n; ++i) {
    total += static_cast<double>(x[i]);
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
    zero += x[i] == T(0) ? 1 : 0;
  }
  for (int j = 0; j < kLanes; ++j) {
    total += sum[j];
    lo = mn[j] < lo ? mn[j] : lo;
    hi = mx[j] > hi ? mx[j] : hi;
    zero += zeros[j];
  }
  if constexpr (std::is_floating_point_v<T>) {
    // A NaN or an infinity makes the sum not finite (finite values summed
    // in double cannot overflow from float; from double they can, and the
    // scalar pass then gives the same answer).
    if (!std::isfinite(total)) {
      SlowChunk(x, n, moments, counts);
      return;
    }
  }
  const double mean = total / static_cast<double>(n);
  const double m2 = SquaredDeviations(x, n, mean);
  counts->zero += zero;
  moments->Merge(static_cast<int64_t>(n), mean, m2, static_cast<double>(lo),
                 static_cast<double>(hi));
}

template <typename T>
void Run(const void* data, uint64_t count, Moments* moments, Counts* counts) {
  const T* x = static_cast<const T*>(data);
  for (uint64_t at = 0; at < count; at += kChunk) {
    const size_t n =
        static_cast<size_t>(std::min<uint64_t>(kChunk, count - at));
    Chunk(x + at, n, moments, counts);
  }
}

const std::vector<float>& HalfTable() {
  static const std::vector<float>* table = [] {
    auto* t = new std::vector<float>(65536);
    for (uint32_t h = 0; h < 65536; ++h) {
      (*t)[h] = probes::HalfToFloat(static_cast<uint16_t>(h));
    }
    return t;
  }();
  return *table;
}

// float16 / bfloat16: widened to float chunk by chunk.
void RunHalf(const void* data, uint64_t count, bool bfloat, Moments* moments,
             Counts* counts) {
  const auto* x = static_cast<const uint16_t*>(data);
  const float* table = bfloat ? nullptr : HalfTable().data();
  std::array<float, kChunk> buffer;
  for (uint64_t at = 0; at < count; at += kChunk) {
    const size_t n =
        static_cast<size_t>(std::min<uint64_t>(kChunk, count - at));
    if (bfloat) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = static_cast<uint32_t>(x[at + i]) << 16;
        std::memcpy(&buffer[i], &bits, 4);
      }
    } else {
      for (size_t i = 0; i < n; ++i) buffer[i] = table[x[at + i]];
    }
    Chunk(buffer.data(), n, moments, counts);
  }
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
  Moments moments;
  Counts counts;
  if (count > 0) {
    switch (dtype) {
      case ProbeDType::kFloat16:
        RunHalf(data, count, false, &moments, &counts);
        break;
      case ProbeDType::kBFloat16:
        RunHalf(data, count, true, &moments, &counts);
        break;
      case ProbeDType::kFloat32:
        Run<float>(data, count, &moments, &counts);
        break;
      case ProbeDType::kFloat64:
        Run<double>(data, count, &moments, &counts);
        break;
      case ProbeDType::kInt8:
        Run<int8_t>(data, count, &moments, &counts);
        break;
      case ProbeDType::kInt16:
        Run<int16_t>(data, count, &moments, &counts);
        break;
      case ProbeDType::kInt32:
        Run<int32_t>(data, count, &moments, &counts);
        break;
      case ProbeDType::kInt64:
        Run<int64_t>(data, count, &moments, &counts);
        break;
      case ProbeDType::kUInt8:
      case ProbeDType::kBool:  // one byte, 0 or 1
        Run<uint8_t>(data, count, &moments, &counts);
        break;
      case ProbeDType::kUInt16:
        Run<uint16_t>(data, count, &moments, &counts);
        break;
      case ProbeDType::kUInt32:
        Run<uint32_t>(data, count, &moments, &counts);
        break;
      case ProbeDType::kUInt64:
        Run<uint64_t>(data, count, &moments, &counts);
        break;
    }
  }
  TensorStats stats;
  stats.count = static_cast<int64_t>(count);
  stats.nan = counts.nan;
  stats.pos_inf = counts.pos_inf;
  stats.neg_inf = counts.neg_inf;
  stats.zero = counts.zero;
  stats.dtype = std::string(ProbeDTypeName(dtype));
  if (moments.n > 0) {
    const double n = static_cast<double>(moments.n);
    stats.min = moments.min;
    stats.max = moments.max;
    stats.mean = moments.mean;
    stats.std = std::sqrt(std::max(0.0, moments.m2 / n));
    // sum x^2 = M2 + n * mean^2 (both terms non-negative: no cancellation).
    stats.l2 = std::sqrt(moments.m2 + n * moments.mean * moments.mean);
    stats.abs_max = std::max(std::fabs(moments.min), std::fabs(moments.max));
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
