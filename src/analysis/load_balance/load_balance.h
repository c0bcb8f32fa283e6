#pragma once

// Load balance across sources (ranks): per source, the time its devices
// worked and how it splits into compute, collective communication, copies
// and waits; how unevenly the sources worked (the slowest against the
// mean); and per device of a source.
//
// Execution tasks (compute, data movement, sync) count, on the calibrated
// clock. A task is communication when it is a collective: NCCL / HCCL
// kernels (name contains "nccl" or "hccl"), Ascend hcom_* ops, or category
// "communication" / "HCCL" (the Ascend importer's collectives). Every
// figure is a union of intervals, so concurrent streams count once:
//   busy          time some work task (compute, communication, data
//                 movement: IsExecutionWork) of the source ran;
//   compute       ... some compute task that is not communication;
//   communication ... some collective; data_movement ... some copy;
//   sync          ... some sync or wait (IsSyncTask), which is not work
//                 and not part of busy;
//   span          first start to last end of all of them; idle = span -
//                 busy (time in waits is idle).
// A fast rank waits inside the collective for the slow one, so its
// communication time grows and its busy time evens out: the imbalance is
// therefore given on compute as well as on busy time, each with its
// slowest source and how far above the mean it is.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "model_inspector/analysis_result.h"

namespace mi::analysis {

// The time figures of one source or one device.
struct LoadBalanceTimes {
  uint64_t tasks = 0;
  int64_t busy_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t data_movement_ns = 0;
  int64_t sync_ns = 0;
  int64_t span_ns = 0;
  int64_t idle_ns = 0;
};

struct LoadBalanceSource {
  uint32_t source = 0;
  std::string name;  // "rank 1", else the file or folder
  std::optional<int32_t> rank;
  uint64_t devices = 0;
  LoadBalanceTimes times;
  double busy_over_mean = 0;  // this source's busy time / the mean
};

// How unevenly a figure is spread over the sources.
struct LoadBalanceImbalance {
  int64_t max_ns = 0;
  int64_t min_ns = 0;
  double mean_ns = 0;
  double max_over_mean = 0;  // 1: perfectly even
  uint32_t slowest_source = 0;
  std::string slowest_name;
  double slowest_over_mean_ns = 0;  // max - mean
};

struct LoadBalanceDevice {
  uint32_t source = 0;
  std::string source_name;
  int32_t device = -1;  // the device index; -1: host threads
  std::string name;     // "GPU 0", else the process ("HCCL (NPU)")
  uint64_t streams = 0;
  LoadBalanceTimes times;
};

struct LoadBalanceResult : AnalysisResult {
  std::vector<LoadBalanceSource> sources;  // in source order
  LoadBalanceImbalance busy;
  LoadBalanceImbalance compute;
  std::vector<LoadBalanceDevice> devices;  // of every source, or of one

  std::string_view analysis_id() const override { return "load_balance"; }
  void Write(ResultWriter& w) const override;
};

// `source` >= 0 lists the devices of that source only.
LoadBalanceResult ComputeLoadBalance(const Trace& trace, int64_t source = -1);

// Registry entry (registry/builtin_analyses.cc).
const AnalysisDescriptor& LoadBalanceAnalysis();

}  // namespace mi::analysis
