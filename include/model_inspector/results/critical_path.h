#pragma once

// The critical path of a run: the longest dependency chain by time
// (src/analysis/timing/critical_path.h; JSON: docs/reference/http-api.md
// "Timing analyses", analyses.json "critical_path").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_inspector/analysis_result.h"

namespace mi {

struct CriticalPathStep {
  uint32_t task = 0;
  std::string name;
  std::string op_type;
  std::string kind;  // task kind: "compute", "data_movement", ...
  uint32_t track = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::optional<uint32_t> node;
  // The dependency that led here from the previous step ("launch",
  // "track_order", ...); empty for the first step.
  std::string via;
  int64_t wait_ns = 0;  // time waited after the previous step's release
};

struct CriticalPathResult : AnalysisResult {
  std::string clock;       // "raw" | "calibrated"
  std::optional<int> run;  // absent: the whole trace
  std::vector<uint32_t> tasks;
  std::vector<CriticalPathStep> steps;
  std::vector<uint32_t> nodes;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t length_ns = 0;
  int64_t wall_ns = 0;
  double share = 0;  // length / wall
  int64_t busy_ns = 0;
  struct TrackTime {
    uint32_t track = 0;
    std::string name;
    int64_t ns = 0;
  };
  struct LabelTime {
    std::string label;
    int64_t ns = 0;
  };
  std::vector<TrackTime> by_track;
  std::vector<LabelTime> by_op_type;
  std::vector<LabelTime> waits;  // by dependency kind
  // The dependency graph it was found in.
  uint64_t graph_tasks = 0;
  uint64_t graph_edges = 0;
  std::vector<std::pair<std::string, uint64_t>> edges_by_kind;
  uint64_t broken_edges = 0;
  uint64_t dropped_data_edges = 0;

  std::string_view analysis_id() const override { return "critical_path"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
