// The timing analyses' registry entries: calibration, critical path and
// idle/overlap (docs/reference/analyses.md).

#include <limits>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "analysis/timing/timing_results.h"

namespace mi::analysis {
namespace {

constexpr std::string_view kSchema =
    "docs/reference/schemas/analyses.schema.json";

StatusOr<TimingScope> ScopeOf(const Trace& trace, int run, Clock clock) {
  TimingScope scope;
  scope.clock = clock;
  if (run >= 0) {
    size_t runs = trace.runs().size();
    if (static_cast<size_t>(run) >= runs) {
      return InvalidArgumentError(
          runs == 0
              ? fmt::format("run {}: this input has no trace", run)
              : fmt::format("run {}: the trace has runs 0..{}", run, runs - 1));
    }
  }
  scope.run = run;
  return scope;
}

Clock ClockParam(const ParsedParams& params) {
  return params.String("clock") == "raw" ? Clock::kRaw : Clock::kCalibrated;
}

ParameterSpec IterationParam() {
  ParameterSpec p{"iteration", ParameterType::kInt, "-1",
                  "a run / iteration of the trace (index into the summary's "
                  "runs); -1: the whole trace"};
  p.min = -1;
  p.max = std::numeric_limits<int32_t>::max();
  return p;
}

ParameterSpec ClockParamSpec() {
  return ParameterSpec{"clock",
                       ParameterType::kString,
                       "calibrated",
                       "task times: raw, or raw + the track's clock offset",
                       {"raw", "calibrated"}};
}

template <typename T>
StatusOr<std::unique_ptr<AnalysisResult>> Boxed(StatusOr<T> result) {
  if (!result.ok()) return result.status();
  return std::unique_ptr<AnalysisResult>(
      std::make_unique<T>(std::move(result).value()));
}

}  // namespace

StatusOr<CriticalPathResult> RunCriticalPath(const AnalysisContext& ctx,
                                             int run, Clock clock) {
  TimingScope scope;
  MI_ASSIGN_OR_RETURN(scope, ScopeOf(*ctx.trace, run, clock));
  return ToCriticalPathResult(
      *ctx.model, *ctx.trace,
      ComputeCriticalPath(*ctx.model, *ctx.trace, *ctx.links, scope,
                          ctx.dependency_graphs));
}

StatusOr<IdleOverlapResult> RunIdleOverlap(const AnalysisContext& ctx,
                                           const IdleOptions& options) {
  IdleOptions o = options;
  MI_ASSIGN_OR_RETURN(
      o.scope, ScopeOf(*ctx.trace, options.scope.run, options.scope.clock));
  return ToIdleOverlapResult(
      *ctx.trace, ComputeIdleOverlap(*ctx.model, *ctx.trace, *ctx.links, o,
                                     ctx.dependency_graphs));
}

const AnalysisDescriptor& CalibrationAnalysis() {
  static const AnalysisDescriptor d{
      .id = "calibration",
      .title = "Clock calibration",
      .summary =
          "the clock offset estimated per clock domain (a source's host "
          "threads, each device) from launch / event / copy / synchronize "
          "anchors when the run was opened, with its interval, error bound "
          "and binding anchors, and the ordering violations before and after",
      .needs = kNeedsTrace,
      .parameters = {},
      .in_export = true,
      .fields = {},
      .reference = kSchema,
      .run = [](const AnalysisContext& ctx, const ParsedParams&)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        return std::unique_ptr<AnalysisResult>(
            std::make_unique<CalibrationResult>(
                ToCalibrationResult(*ctx.calibration)));
      }};
  return d;
}

const AnalysisDescriptor& CriticalPathAnalysis() {
  static const AnalysisDescriptor d{
      .id = "critical_path",
      .title = "Critical path",
      .summary =
          "the longest dependency chain by time (track order, launches, "
          "events, data, host waits): its tasks, time per track and op type, "
          "and what it waited on",
      .needs = kNeedsTrace,
      .parameters = {IterationParam(), ClockParamSpec()},
      .in_export = true,
      .fields = {},
      .reference = kSchema,
      .run = [](const AnalysisContext& ctx, const ParsedParams& params) {
        return Boxed(RunCriticalPath(ctx,
                                     static_cast<int>(params.Int("iteration")),
                                     ClockParam(params)));
      }};
  return d;
}

const AnalysisDescriptor& IdleOverlapAnalysis() {
  static const AnalysisDescriptor d = [] {
    ParameterSpec threshold{"gap_threshold_ns", ParameterType::kInt, "100000",
                            "idle gaps at least this long are listed"};
    threshold.min = 0;
    ParameterSpec max_gaps{"max_gaps", ParameterType::kInt, "100",
                           "gaps listed, longest first"};
    max_gaps.min = 0;
    max_gaps.max = 100000;
    return AnalysisDescriptor{
        .id = "idle_overlap",
        .title = "Idle time and overlap",
        .summary =
            "per stream busy / idle time with the idle broken down by what "
            "the stream waited for (host launch, another stream, other), the "
            "long gaps, copy / compute overlap per device and host "
            "synchronize waits",
        .needs = kNeedsTrace,
        .parameters = {IterationParam(), ClockParamSpec(), threshold, max_gaps},
        .in_export = true,
        .fields = {},
        .reference = kSchema,
        .run = [](const AnalysisContext& ctx, const ParsedParams& params) {
          IdleOptions options;
          options.scope.run = static_cast<int>(params.Int("iteration"));
          options.scope.clock = ClockParam(params);
          options.gap_threshold_ns = params.Int("gap_threshold_ns");
          options.max_gaps = static_cast<size_t>(params.Int("max_gaps"));
          return Boxed(RunIdleOverlap(ctx, options));
        }};
  }();
  return d;
}

}  // namespace mi::analysis
