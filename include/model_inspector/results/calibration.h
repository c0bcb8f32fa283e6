#pragma once

// The clock calibration applied when the run was opened (method in
// docs/design/analyses.md; JSON: analyses.json "calibration").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_inspector/analysis_result.h"

namespace mi {

// An ordering anchor: task `to_task` cannot have started before (or
// ended after) task `from_task` did.
struct CalibrationAnchor {
  std::string kind;  // "launch" | "event" | "copy" | "sync" | "sync_copy"
  uint32_t from_task = 0;
  uint32_t to_task = 0;
  int64_t from_ns = 0;
  int64_t to_ns = 0;
};

// One clock domain (a source's host threads, a device, or a stream) and the
// offset estimated for it.
struct ClockDomainInfo {
  std::string name;
  std::string kind;  // "host" | "device" | "stream"
  std::optional<uint32_t> source;
  std::optional<int32_t> device;
  bool reference = false;
  bool anchored = false;
  std::optional<int32_t> reference_domain;
  int64_t offset_ns = 0;
  // The feasible interval of the offset, and the estimate's error bound.
  std::optional<int64_t> lower_ns;
  std::optional<int64_t> upper_ns;
  std::optional<int64_t> error_bound_ns;
  bool contradiction = false;
  uint64_t anchors = 0;
  std::vector<uint32_t> tracks;
  std::optional<CalibrationAnchor> binding_lower;
  std::optional<CalibrationAnchor> binding_upper;
};

struct CalibrationResult : AnalysisResult {
  bool computed = false;  // false when the session opened without it
  bool per_stream = false;
  uint64_t anchors = 0;
  std::vector<std::pair<std::string, uint64_t>> anchors_by_kind;
  uint64_t violations_before = 0;
  int64_t worst_violation_before_ns = 0;
  uint64_t residual_violations = 0;
  int64_t worst_residual_ns = 0;
  std::optional<uint32_t> worst_residual_from;  // task ids
  std::optional<uint32_t> worst_residual_to;
  bool converged = false;
  uint64_t contradictions = 0;
  uint64_t unanchored = 0;
  bool time_bases_differ = false;
  std::vector<std::string> notes;
  std::vector<ClockDomainInfo> domains;

  std::string_view analysis_id() const override { return "calibration"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
