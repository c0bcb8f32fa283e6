// The element types of tensors on disk (include/model_inspector/compare.h
// "The metrics kernel"): names, sizes and widening to double, below both
// the compare kernel and the readers of .npy tensors (the probe store, the
// session's training views).

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "model_inspector/compare.h"

namespace mi {
namespace {

struct DtypeName {
  TensorDtype dtype;
  std::string_view name;
  size_t size;
};
constexpr std::array<DtypeName, 13> kDtypes = {{
    {TensorDtype::kFloat32, "float32", 4},
    {TensorDtype::kFloat16, "float16", 2},
    {TensorDtype::kBFloat16, "bfloat16", 2},
    {TensorDtype::kFloat64, "float64", 8},
    {TensorDtype::kInt8, "int8", 1},
    {TensorDtype::kInt16, "int16", 2},
    {TensorDtype::kInt32, "int32", 4},
    {TensorDtype::kInt64, "int64", 8},
    {TensorDtype::kUint8, "uint8", 1},
    {TensorDtype::kUint16, "uint16", 2},
    {TensorDtype::kUint32, "uint32", 4},
    {TensorDtype::kUint64, "uint64", 8},
    {TensorDtype::kBool, "bool", 1},
}};

double HalfToDouble(uint16_t h) {
  int sign = (h >> 15) & 1;
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double v;
  if (exponent == 0) {
    v = std::ldexp(static_cast<double>(mantissa), -24);
  } else if (exponent == 31) {
    v = mantissa ? std::numeric_limits<double>::quiet_NaN()
                 : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -v : v;
}

double BFloat16ToDouble(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
void Widen(const void* data, uint64_t begin, size_t n, double* out) {
  const auto* p = static_cast<const unsigned char*>(data) + begin * sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

}  // namespace

void WidenElements(const TensorSpan& t, uint64_t begin, size_t n, double* out) {
  switch (t.dtype) {
    case TensorDtype::kFloat32:
      return Widen<float>(t.data, begin, n, out);
    case TensorDtype::kFloat64:
      return Widen<double>(t.data, begin, n, out);
    case TensorDtype::kFloat16:
    case TensorDtype::kBFloat16: {
      const auto* p = static_cast<const unsigned char*>(t.data) + begin * 2;
      bool half = t.dtype == TensorDtype::kFloat16;
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + i * 2, 2);
        out[i] = half ? HalfToDouble(h) : BFloat16ToDouble(h);
      }
      return;
    }
    case TensorDtype::kInt8:
      return Widen<int8_t>(t.data, begin, n, out);
    case TensorDtype::kInt16:
      return Widen<int16_t>(t.data, begin, n, out);
    case TensorDtype::kInt32:
      return Widen<int32_t>(t.data, begin, n, out);
    case TensorDtype::kInt64:
      return Widen<int64_t>(t.data, begin, n, out);
    case TensorDtype::kUint8:
    case TensorDtype::kBool:
      return Widen<uint8_t>(t.data, begin, n, out);
    case TensorDtype::kUint16:
      return Widen<uint16_t>(t.data, begin, n, out);
    case TensorDtype::kUint32:
      return Widen<uint32_t>(t.data, begin, n, out);
    case TensorDtype::kUint64:
      return Widen<uint64_t>(t.data, begin, n, out);
  }
}

StatusOr<TensorDtype> ParseTensorDtype(std::string_view name) {
  for (const DtypeName& d : kDtypes) {
    if (d.name == name) return d.dtype;
  }
  if (name == "float" || name == "float_") return TensorDtype::kFloat32;
  if (name == "half") return TensorDtype::kFloat16;
  if (name == "double") return TensorDtype::kFloat64;
  return UnsupportedError(fmt::format(
      "element type '{}' cannot be compared; expected one of float32, "
      "float16, bfloat16, float64, int8..int64, uint8..uint64, bool",
      name));
}

std::string_view TensorDtypeName(TensorDtype dtype) {
  for (const DtypeName& d : kDtypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "unknown";
}

size_t TensorDtypeSize(TensorDtype dtype) {
  for (const DtypeName& d : kDtypes) {
    if (d.dtype == dtype) return d.size;
  }
  return 1;
}

}  // namespace mi
