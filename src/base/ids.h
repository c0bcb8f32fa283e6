#pragma once

// Strong ids: a NodeId cannot be passed where a TaskId is expected.

#include <cstdint>
#include <functional>
#include <limits>

namespace mi {

template <typename Tag>
class StrongId {
 public:
  static constexpr uint32_t kInvalidValue =
      std::numeric_limits<uint32_t>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(uint32_t value) : value_(value) {}

  static constexpr StrongId Invalid() { return StrongId(); }
  constexpr bool valid() const { return value_ != kInvalidValue; }
  constexpr uint32_t value() const { return value_; }

  friend constexpr bool operator==(StrongId a, StrongId b) {
    return a.value_ == b.value_;
  }
  friend constexpr bool operator!=(StrongId a, StrongId b) {
    return a.value_ != b.value_;
  }
  friend constexpr bool operator<(StrongId a, StrongId b) {
    return a.value_ < b.value_;
  }

 private:
  uint32_t value_ = kInvalidValue;
};

using StringId = StrongId<struct StringIdTag>;
using GraphId = StrongId<struct GraphIdTag>;
using NodeId = StrongId<struct NodeIdTag>;
using ValueId = StrongId<struct ValueIdTag>;
using ScopeId = StrongId<struct ScopeIdTag>;
using TaskId = StrongId<struct TaskIdTag>;
using TrackId = StrongId<struct TrackIdTag>;
// One profiled run of one process / rank: a trace file, or the files of one
// profiler output folder (trace/trace.h SourceInfo).
using SourceId = StrongId<struct SourceIdTag>;

}  // namespace mi

template <typename Tag>
struct std::hash<mi::StrongId<Tag>> {
  size_t operator()(mi::StrongId<Tag> id) const noexcept {
    return std::hash<uint32_t>()(id.value());
  }
};
