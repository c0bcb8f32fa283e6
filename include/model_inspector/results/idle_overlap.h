#pragma once

// Per-stream busy / idle with the idle breakdown, long gaps, copy/compute
// overlap per device and host synchronize waits
// (src/analysis/timing/idle_overlap.h; JSON: docs/reference/http-api.md
// "Timing analyses", analyses.json "idle_overlap").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"

namespace mi {

struct StreamIdleInfo {
  uint32_t track = 0;
  std::string name;
  uint64_t tasks = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  // Idle by what the next task waited for.
  int64_t idle_host_ns = 0;
  int64_t idle_other_stream_ns = 0;
  int64_t idle_other_ns = 0;
  uint64_t gaps = 0;
};

struct IdleGapInfo {
  uint32_t track = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string reason;  // "host" | "other_stream" | "other"
  std::optional<uint32_t> before_task;
  std::optional<uint32_t> after_task;
  std::optional<uint32_t> cause_task;
};

struct DeviceOverlapInfo {
  std::string device;
  int64_t compute_ns = 0;
  int64_t data_movement_ns = 0;
  int64_t overlap_ns = 0;
  double overlap_share = 0;
  std::vector<uint32_t> exposed_copies;
};

struct SyncWaitInfo {
  uint32_t task = 0;
  int64_t duration_ns = 0;
  int64_t device_idle_ns = 0;
  std::optional<uint32_t> device_before;
  std::optional<uint32_t> device_after;
};

struct IdleOverlapResult : AnalysisResult {
  std::string clock;
  std::optional<int> run;
  int64_t gap_threshold_ns = 0;
  std::vector<StreamIdleInfo> streams;
  uint64_t gaps_over_threshold = 0;
  std::vector<IdleGapInfo> gaps;
  std::vector<DeviceOverlapInfo> devices;
  uint64_t sync_calls = 0;
  int64_t sync_ns = 0;
  int64_t sync_device_idle_ns = 0;
  std::vector<SyncWaitInfo> sync_waits;

  std::string_view analysis_id() const override { return "idle_overlap"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
