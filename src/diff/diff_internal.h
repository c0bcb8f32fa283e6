#pragma once

// The parts of the diff (include/model_inspector/diff.h), each in its own
// file: the digest of a run's graph levels (digest_levels.cc) and of its
// trace (digest_timing.cc), the structural diff (structure_diff.cc), the
// timing and concurrency diffs (timing_diff.cc), the `--fail-on` rules
// (rules.cc). They read the data model and digests only.

#include "analysis/analysis_descriptor.h"
#include "model_inspector/diff.h"

namespace mi::diff {

// Fills digest->levels from the run's framework and compiled levels.
void DigestLevels(const analysis::AnalysisContext& run, RunDigest* digest);
// Fills the timing fields (runs_from, run_count, total, op_types, streams,
// unlinked_tasks, stream_pairs) and each digested node's run_ns /
// overlapped_ns / streams; called after DigestLevels.
void DigestTiming(const analysis::AnalysisContext& run, RunDigest* digest);

// Appends one LevelDiff per level present in both digests.
void DiffStructure(const RunDigest& base, const RunDigest& next,
                   const DiffOptions& options, DiffReport* report);
// framework -> compiled of one digest.
void DiffLevels(const RunDigest& run, const DiffOptions& options,
                DiffReport* report);
// Timing (total, op types, streams, matched nodes using the structural
// matches in report->structure, unlinked tasks) and concurrency; leaves
// has_timing false when either run has no trace.
void DiffTiming(const RunDigest& base, const RunDigest& next,
                const DiffOptions& options, DiffReport* report);

}  // namespace mi::diff
