// NumPy .npy files (the probe store's kept tensors, msprobe's tensor
// dumps): magic "\x93NUMPY", version, header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 8), } padded, then
// the raw elements. Format: numpy/lib/format.py (NEP 1).

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/checked_math.h"
#include "base/mapped_file.h"
#include "model_inspector/compare.h"

namespace mi {
namespace {

// The value text after `'key':` in the header dict, up to the next ',' at
// depth 0 (a shape tuple keeps its commas).
StatusOr<std::string_view> HeaderValue(std::string_view header,
                                       std::string_view key,
                                       const std::string& path) {
  std::string quoted = fmt::format("'{}'", key);
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) {
    return MalformedInputError(fmt::format(
        "{}: .npy header lacks '{}'; expected a NumPy header dict", path, key));
  }
  size_t colon = header.find(':', at + quoted.size());
  if (colon == std::string_view::npos) {
    return MalformedInputError(
        fmt::format("{}: .npy header: no ':' after '{}'", path, key));
  }
  size_t begin = colon + 1;
  int depth = 0;
  size_t end = begin;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' && depth == 0) || c == '}') break;
  }
  std::string_view v = header.substr(begin, end - begin);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

StatusOr<TensorDtype> DtypeOfDescr(std::string_view descr,
                                   const std::string& path) {
  if (descr.size() < 4 || (descr.front() != '\'' && descr.front() != '"')) {
    return MalformedInputError(fmt::format(
        "{}: .npy descr {} is not a quoted type string", path, descr));
  }
  std::string_view d = descr.substr(1, descr.size() - 2);
  char order = d[0];
  std::string_view code = d.substr(1);
  if (order == '>' && code != "u1" && code != "i1" && code != "b1") {
    return UnsupportedError(fmt::format(
        "{}: big-endian .npy ('{}') is not supported; expected little-endian "
        "('<')",
        path, d));
  }
  if (code == "f4") return TensorDtype::kFloat32;
  if (code == "f2") return TensorDtype::kFloat16;
  if (code == "f8") return TensorDtype::kFloat64;
  if (code == "i1") return TensorDtype::kInt8;
  if (code == "i2") return TensorDtype::kInt16;
  if (code == "i4") return TensorDtype::kInt32;
  if (code == "i8") return TensorDtype::kInt64;
  if (code == "u1") return TensorDtype::kUint8;
  if (code == "u2") return TensorDtype::kUint16;
  if (code == "u4") return TensorDtype::kUint32;
  if (code == "u8") return TensorDtype::kUint64;
  if (code == "b1") return TensorDtype::kBool;
  return UnsupportedError(fmt::format(
      "{}: .npy element type '{}' cannot be compared; expected a numeric "
      "type",
      path, d));
}

}  // namespace

uint64_t NpyArray::count() const {
  return data.size() / TensorDtypeSize(dtype);
}

TensorSpan NpyArray::view() const {
  return TensorSpan{dtype, data.data(), count()};
}

StatusOr<NpyArray> ReadNpy(const std::string& path) {
  MI_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  return ParseNpy(file->view(), path);
}

StatusOr<NpyArray> ParseNpy(std::string_view bytes, const std::string& path) {
  constexpr std::string_view kMagic("\x93NUMPY", 6);
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    return MalformedInputError(fmt::format(
        "{}@byte 0: not a NumPy .npy file; expected the magic \\x93NUMPY",
        path));
  }
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  uint64_t header_len = 0;
  size_t header_at = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) |
                 (static_cast<uint64_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      return MalformedInputError(
          fmt::format("{}@byte 8: truncated .npy header length", path));
    }
    for (int i = 0; i < 4; ++i) {
      header_len |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[8 + i]))
                    << (8 * i);
    }
    header_at = 12;
  } else {
    return UnsupportedError(fmt::format(
        "{}@byte 6: .npy format version {} is not supported; expected 1, 2 "
        "or 3",
        path, major));
  }
  if (header_at + header_len > bytes.size()) {
    return MalformedInputError(fmt::format(
        "{}@byte {}: the .npy header says {} bytes, the file has {}", path,
        header_at, header_len, bytes.size() - header_at));
  }
  std::string_view header = bytes.substr(header_at, header_len);
  NpyArray out;
  MI_ASSIGN_OR_RETURN(std::string_view descr,
                      HeaderValue(header, "descr", path));
  MI_ASSIGN_OR_RETURN(out.dtype, DtypeOfDescr(descr, path));
  MI_ASSIGN_OR_RETURN(std::string_view fortran,
                      HeaderValue(header, "fortran_order", path));
  if (fortran != "False") {
    return UnsupportedError(fmt::format(
        "{}: Fortran-order .npy is not supported; expected C order", path));
  }
  MI_ASSIGN_OR_RETURN(std::string_view shape,
                      HeaderValue(header, "shape", path));
  uint64_t count = 1;
  size_t i = 0;
  while (i < shape.size()) {
    if (shape[i] >= '0' && shape[i] <= '9') {
      int64_t dim = 0;
      while (i < shape.size() && shape[i] >= '0' && shape[i] <= '9') {
        if (dim > (int64_t{1} << 50)) {
          return MalformedInputError(
              fmt::format("{}: .npy shape {} is too large", path, shape));
        }
        dim = dim * 10 + (shape[i] - '0');
        ++i;
      }
      out.shape.push_back(dim);
      std::optional<uint64_t> product =
          CheckedMul(count, static_cast<uint64_t>(dim));
      if (!product) {
        return MalformedInputError(
            fmt::format("{}: .npy shape {} overflows", path, shape));
      }
      count = *product;
    } else {
      ++i;
    }
  }
  std::optional<uint64_t> needed =
      CheckedMul(count, uint64_t{TensorDtypeSize(out.dtype)});
  uint64_t bytes_needed = needed.value_or(UINT64_MAX);
  if (!needed || bytes_needed > bytes.size() - header_at - header_len) {
    return MalformedInputError(fmt::format(
        "{}@byte {}: the .npy shape {} needs {} bytes of data, the file has "
        "{}",
        path, header_at + header_len, shape, bytes_needed,
        bytes.size() - header_at - header_len));
  }
  out.data.assign(bytes.substr(header_at + header_len, bytes_needed));
  return out;
}

}  // namespace mi
