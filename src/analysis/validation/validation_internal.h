#pragma once

// Internal to the validation (validation.h): what the rules of the
// validator (validation.cc) and our own per-op shape inference
// (shape_inference.cc) share: op classes, attribute readers and shape
// arithmetic. A dim < 0 is unknown (symbolic or not given).

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "model/model.h"

namespace mi::analysis::validation_detail {

bool IsDefaultDomain(std::string_view domain);

bool OneOf(std::string_view op, std::initializer_list<std::string_view> ops);

// Multidirectional (numpy) broadcasting ops.
bool IsBroadcastOp(std::string_view op);

const Attribute* FindAttr(const Model& m, NodeId n, std::string_view name);

int64_t IntAttr(const Model& m, NodeId n, std::string_view name,
                int64_t fallback);

// The value's dims; nullopt when it is invalid or has no shape.
std::optional<std::vector<int64_t>> Dims(const Model& m, ValueId v);

inline bool Known(int64_t d) { return d >= 0; }

// Numpy broadcasting of two shapes; false when two known dims clash.
bool Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
               std::vector<int64_t>* out);

// The element count; -1 when a dim is unknown or the count overflows.
int64_t Product(std::span<const int64_t> dims);

}  // namespace mi::analysis::validation_detail
