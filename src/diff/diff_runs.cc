#include "diff/diff_internal.h"

namespace mi {
namespace {

DiffRunInfo InfoOf(const RunDigest& digest) {
  DiffRunInfo info;
  info.meta = digest.meta;
  info.runs_from = digest.runs_from;
  info.run_count = digest.run_count;
  for (const DigestLevel& level : digest.levels) {
    info.fingerprints.emplace_back(level.level, level.fingerprint);
  }
  return info;
}

}  // namespace

StatusOr<DiffReport> DiffRuns(const RunDigest& base, const RunDigest& next,
                              const DiffOptions& options) {
  if (base.levels.empty() && !base.has_trace()) {
    return InvalidArgumentError("the base run has neither a graph nor a trace");
  }
  if (next.levels.empty() && !next.has_trace()) {
    return InvalidArgumentError("the new run has neither a graph nor a trace");
  }
  DiffReport report;
  report.base = InfoOf(base);
  report.next = InfoOf(next);
  diff::DiffStructure(base, next, options, &report);
  if (options.levels_within_run) diff::DiffLevels(next, options, &report);
  diff::DiffTiming(base, next, options, &report);
  return report;
}

StatusOr<DiffReport> DiffLevelsWithinRun(const RunDigest& run,
                                         const DiffOptions& options) {
  bool framework = false;
  bool compiled = false;
  for (const DigestLevel& level : run.levels) {
    framework |= level.level == "framework";
    compiled |= level.level == "compiled";
  }
  if (!framework || !compiled) {
    return InvalidArgumentError(
        "a diff of one run's levels needs both a framework and a compiled "
        "graph");
  }
  DiffReport report;
  report.base = InfoOf(run);
  report.next = report.base;
  diff::DiffLevels(run, options, &report);
  return report;
}

}  // namespace mi
