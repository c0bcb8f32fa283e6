// The whole-trace analyses folded into `summary`: critical path
// share, per-stream idle breakdown, copy/compute overlap, host synchronize
// waits, the estimated memory peak and the diagnosis findings. Summarize()
// (src/analysis/summary) cannot call its sibling analyses, so the session,
// which may use them all, adds them to its report.

#include <algorithm>
#include <string>

#include "analysis/memory/memory.h"
#include "analysis/timing/critical_path.h"
#include "analysis/timing/idle_overlap.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {
namespace {

constexpr double kNsPerUs = 1000.0;
constexpr size_t kPathOpTypes = 5;

void AddCriticalPath(const Session::Impl& run,
                     const analysis::TimingScope& scope,
                     SummaryReport* report) {
  analysis::CriticalPathReport path = analysis::ComputeCriticalPath(
      run.model, run.trace, run.links, scope, &run.dependency_graphs);
  if (path.tasks.empty()) return;
  report->has_critical_path = true;
  CriticalPathSummary& s = report->critical_path;
  s.length_us = static_cast<double>(path.length_ns) / kNsPerUs;
  s.wall_us = static_cast<double>(path.wall_ns) / kNsPerUs;
  s.share = path.share;
  s.tasks = path.tasks.size();
  std::vector<analysis::CriticalPathReport::LabelTime> ops = path.by_op_type;
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.ns > b.ns; });
  for (size_t i = 0; i < ops.size() && i < kPathOpTypes; ++i) {
    s.top_op_types_us.emplace_back(ops[i].label,
                                   static_cast<double>(ops[i].ns) / kNsPerUs);
  }
}

void AddIdleOverlap(const Session::Impl& run,
                    const analysis::TimingScope& scope, SummaryReport* report) {
  analysis::IdleOptions options;
  options.scope = scope;
  analysis::IdleOverlapReport idle = analysis::ComputeIdleOverlap(
      run.model, run.trace, run.links, options, &run.dependency_graphs);
  for (const analysis::StreamIdle& s : idle.streams) {
    for (StreamRow& row : report->streams) {
      if (row.stream_id != s.track.value()) continue;
      row.idle_us = static_cast<double>(s.idle_ns) / kNsPerUs;
      row.idle_waiting_host_us = static_cast<double>(s.idle_host_ns) / kNsPerUs;
      row.idle_waiting_other_stream_us =
          static_cast<double>(s.idle_other_stream_ns) / kNsPerUs;
      row.idle_other_us = static_cast<double>(s.idle_other_ns) / kNsPerUs;
    }
  }
  for (const analysis::DeviceOverlap& d : idle.devices) {
    if (d.data_movement_ns == 0 && d.compute_ns == 0) continue;
    OverlapRow row;
    row.device = d.device;
    row.compute_us = static_cast<double>(d.compute_ns) / kNsPerUs;
    row.data_movement_us = static_cast<double>(d.data_movement_ns) / kNsPerUs;
    row.overlap_us = static_cast<double>(d.overlap_ns) / kNsPerUs;
    row.overlap_share = d.overlap_share;
    report->overlap.push_back(std::move(row));
  }
  report->host_sync.calls = idle.sync_calls;
  report->host_sync.total_us = static_cast<double>(idle.sync_ns) / kNsPerUs;
  report->host_sync.device_idle_us =
      static_cast<double>(idle.sync_device_idle_ns) / kNsPerUs;
}

// The level that ran: the compiled graph when there is one, else the
// framework graph.
void AddMemory(const Session::Impl& run, SummaryReport* report) {
  GraphId root = run.compiled.valid() ? run.compiled : run.framework;
  if (!root.valid()) return;
  const Trace* trace = run.trace.task_count() > 0 ? &run.trace : nullptr;
  analysis::MemoryReport memory = analysis::AnalyzeMemory(
      run.model, trace, &run.links, root, analysis::MemoryOptions{});
  report->has_memory = true;
  MemorySummary& m = report->memory;
  m.level = run.compiled.valid() ? "compiled" : "framework";
  m.order = memory.order;
  m.peak_activation_bytes = memory.peak_activation_bytes;
  m.weight_bytes = memory.weight_bytes;
  if (memory.has_allocator) {
    m.reported_peak_bytes = memory.allocator.reported_peak_bytes;
  }
}

}  // namespace

void AddWholeTraceAnalyses(const Session& session, const Session::Impl& run,
                           const SummaryOptions& options,
                           SummaryReport* report) {
  report->has_analyses = true;
  AddMemory(run, report);
  if (run.trace.task_count() > 0) {
    analysis::TimingScope scope;
    scope.run = options.run;
    scope.clock = TraceClock::kCalibrated;
    AddCriticalPath(run, scope, report);
    AddIdleOverlap(run, scope, report);
  }
  // Default thresholds always validate; findings cover the whole trace.
  StatusOr<FindingsResult> findings = session.Findings(DiagnoseOptions{});
  if (findings.ok()) report->findings = std::move(findings->findings);
}

}  // namespace mi
