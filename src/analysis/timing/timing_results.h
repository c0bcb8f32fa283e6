#pragma once

// The timing reports as public results (include/model_inspector/results/):
// ids become integers, tracks and tasks get their names, the clock and run
// their words. Write() of those types (src/results/) is their JSON
// (docs/reference/http-api.md "Timing analyses",
// docs/reference/schemas/analyses.schema.json).

#include "analysis/analysis_descriptor.h"
#include "analysis/timing/calibration.h"
#include "analysis/timing/critical_path.h"
#include "analysis/timing/idle_overlap.h"
#include "model/model.h"
#include "model_inspector/results/calibration.h"
#include "model_inspector/results/critical_path.h"
#include "model_inspector/results/idle_overlap.h"
#include "model_inspector/results/node_paths.h"
#include "model_inspector/status.h"
#include "trace/trace.h"

namespace mi::analysis {

CalibrationResult ToCalibrationResult(const CalibrationReport& report);
CriticalPathResult ToCriticalPathResult(const Model& model, const Trace& trace,
                                        const CriticalPathReport& report);
IdleOverlapResult ToIdleOverlapResult(const Trace& trace,
                                      const IdleOverlapReport& report);
NodePathsResult ToNodePathsResult(const NodePathsReport& report);

// Run by the registry and the session's typed methods: `run` is a run /
// iteration index of the trace (-1: the whole trace); InvalidArgument for
// one the trace does not have.
StatusOr<CriticalPathResult> RunCriticalPath(const AnalysisContext& ctx,
                                             int run, Clock clock);
StatusOr<IdleOverlapResult> RunIdleOverlap(const AnalysisContext& ctx,
                                           const IdleOptions& options);

// Registry entries (registry/builtin_analyses.cc).
const AnalysisDescriptor& CalibrationAnalysis();
const AnalysisDescriptor& CriticalPathAnalysis();
const AnalysisDescriptor& IdleOverlapAnalysis();

}  // namespace mi::analysis
