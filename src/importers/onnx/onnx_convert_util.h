#pragma once

// Helpers shared by the two ONNX → Model converters (the libonnx one in
// onnx_model_converter.cc and the direct wire-format one in
// onnx_direct_decoder.cc + onnx_direct_import.cc), so that both produce the
// same display text and the same diagnostics.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/checked_math.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "model/model.h"

namespace mi::importers::onnx_import {

// Lists in attribute display text are cut after this many items.
inline constexpr size_t kMaxListItemsShown = 8;
inline constexpr size_t kMaxStringShown = 64;
// Nodes named in a cycle diagnostic.
inline constexpr size_t kMaxCycleNodesNamed = 6;

inline bool IsOrtContribDomain(std::string_view domain) {
  return domain.substr(0, 13) == "com.microsoft";
}

// The level of an imported model: the caller's hint wins; otherwise a model
// using ONNX Runtime's contrib domains is a compiled (optimized) graph.
inline LayerLevel ChooseLevel(LevelHint hint, bool uses_contrib_ops) {
  switch (hint) {
    case LevelHint::kFramework:
      return LayerLevel::kFramework;
    case LevelHint::kCompiled:
      return LayerLevel::kCompiled;
    case LevelHint::kAuto:
      break;
  }
  return uses_contrib_ops ? LayerLevel::kCompiled : LayerLevel::kFramework;
}

inline std::string ShortString(std::string_view s) {
  if (s.size() <= kMaxStringShown) return std::string(s);
  return fmt::format("{}... ({} bytes)", s.substr(0, kMaxStringShown),
                     s.size());
}

// "[1,2,3]"
inline std::string FormatDims(std::span<const int64_t> dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += std::to_string(dims[i]);
  }
  out.push_back(']');
  return out;
}

// "[a,b,c]", cut after kMaxListItemsShown items: "[a,...,h,...] (20 items)".
template <typename Container, typename Format>
std::string FormatList(const Container& items, Format format) {
  std::string out = "[";
  size_t shown = 0;
  for (const auto& item : items) {
    if (shown == kMaxListItemsShown) {
      out += ",...";
      break;
    }
    if (shown > 0) out.push_back(',');
    out += format(item);
    ++shown;
  }
  out.push_back(']');
  if (static_cast<size_t>(items.size()) > kMaxListItemsShown) {
    out += fmt::format(" ({} items)", items.size());
  }
  return out;
}

// Element count of a tensor, or nullopt when a dim is negative or the
// product overflows (hostile dims).
inline std::optional<uint64_t> ElementCount(std::span<const int64_t> dims) {
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    std::optional<uint64_t> next = CheckedMul(count, static_cast<uint64_t>(d));
    if (!next) return std::nullopt;
    count = *next;
  }
  return count;
}

inline std::optional<uint64_t> ElementBytes(int32_t data_type,
                                            std::span<const int64_t> dims) {
  uint32_t element_size = DataTypeSize(data_type);
  if (element_size == 0) return std::nullopt;
  std::optional<uint64_t> count = ElementCount(dims);
  if (!count) return std::nullopt;
  return CheckedMul(*count, element_size);
}

using ReportFn =
    std::function<void(DiagnosticCode, SourceLocation, std::string)>;

// Kahn's algorithm over the data edges of `graph` (whose nodes were added
// consecutively); reports kGraphCycle naming the nodes on one cycle,
// starting with the first in file order. `node_location(i)` locates the
// graph's i-th node.
void CheckGraphCycles(
    const Model& model, GraphId graph,
    const std::function<SourceLocation(size_t)>& node_location,
    const ReportFn& report);

// What the display text of a tensor needs, from either converter (libonnx's
// TensorProto or the direct path's decoded fields).
struct TensorDisplayView {
  int32_t data_type = 0;
  std::span<const int64_t> dims;
  bool external = false;
  std::span<const float> floats;
  std::span<const int32_t> int32s;
  std::span<const int64_t> int64s;
  bool has_raw = false;
  std::string_view raw;
};

// "tensor float32[64,3,7,7]", plus the values of tiny tensors kept in the
// model ("tensor int64[2] = [1,-1]").
std::string DescribeTensor(const TensorDisplayView& t);

}  // namespace mi::importers::onnx_import
