#pragma once

// Checked arithmetic for sizes and offsets read from files (ORT SafeInt
// rule): an overflow is reported, never wrapped.

#include <cmath>
#include <cstdint>
#include <optional>

namespace mi {

// A number read from a file as a double, as int64: truncated toward zero,
// NaN as 0, values beyond int64's range as its ends (a plain cast is
// undefined behaviour there).
inline int64_t SaturatingInt64(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(d);
}

inline std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedMulSigned(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace mi
