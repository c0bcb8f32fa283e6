#pragma once

// Per-step breakdown: for each step (iteration) of each source, its wall
// time and where that time went (compute, collective communication, copies,
// host work while the devices were idle, idle), as TensorBoard's profiler
// overview shows it; and the steady-state window, the steps the timeline
// opens on.
//
// Steps are the trace's runs (trace/trace.h RunInfo): Kineto ProfilerStep#N,
// ONNX Runtime model_run, torch_npu's ProfilerStep#N in trace_view.json;
// "whole trace" when the trace marks none. A step covers
// [its start, the next step's start of the same source); the last step of a
// source ends at its marker's end or at the end of the last execution task
// that started in it, whichever is later, so the device work a step
// launched stays with it.
//
// Each nanosecond of a step goes to one category, the first that applies:
//   compute        some compute task that is not a collective runs;
//   communication  some collective runs (NCCL / HCCL kernels, hcom_ ops,
//                  tasks the importer filed as communication);
//   memcpy         some copy or memset runs (data movement);
//   host           some host op or runtime call runs (the devices wait for
//                  the host: data loading, launch overhead);
//   idle           none of these (device-side event waits count as idle).
// So compute + communication + memcpy + host + idle = wall. Times are raw
// (the clock the steps are marked in).
//
// Steady state: every step except the work before the first marked step
// ("before ProfilerStep#1": model loading, session setup, profiler start).
// The steady window runs from the first steady step's start to the last
// steady step's end, over all sources; a trace without step markers has one
// step, "whole trace", which is steady.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "model_inspector/analysis_result.h"

namespace mi::analysis {

struct StepTimes {
  int64_t wall_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t memcpy_ns = 0;
  int64_t host_ns = 0;
  int64_t idle_ns = 0;
};

struct StepRow {
  uint32_t run = 0;  // index in trace.json runs[]
  uint32_t source = 0;
  std::string name;  // "ProfilerStep#3"; "rank 1 · ProfilerStep#3"
  bool steady = true;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t tasks = 0;  // tasks that started in the step
  StepTimes times;
};

struct StepBreakdownResult : AnalysisResult {
  std::vector<StepRow> steps;  // by source, then start
  // The sum over the steady steps.
  StepTimes steady_total;
  uint64_t steady_steps = 0;
  // The steady window; both 0 when the trace has no steps.
  int64_t steady_start_ns = 0;
  int64_t steady_end_ns = 0;
  // The setup left out of the steady window (0: none).
  int64_t setup_ns = 0;

  std::string_view analysis_id() const override { return "step_breakdown"; }
  void Write(ResultWriter& w) const override;
};

StepBreakdownResult ComputeStepBreakdown(const Trace& trace);

// Registry entry (registry/builtin_analyses.cc).
const AnalysisDescriptor& StepBreakdownAnalysis();

}  // namespace mi::analysis
