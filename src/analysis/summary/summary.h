#pragma once

// The summary: per-op-type, per-stream and per-node time tables of one run.

#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/summary.h"
#include "trace/trace.h"

namespace mi::analysis {

SummaryReport Summarize(const Model& model, const Trace& trace,
                        const Links& links, const SummaryOptions& options);

// Exclusive ("self") time of each task: its duration minus the time covered
// by tasks nested inside it on the same track. Used for host-op traces,
// where ops nest (aten::conv2d > aten::convolution > ...), so that totals
// never count the same microsecond twice.
std::vector<int64_t> ComputeSelfTimes(const Trace& trace,
                                      const std::vector<TaskId>& tasks);

// Union length of the [start, end) intervals of `tasks` (same track).
int64_t UnionDuration(const Trace& trace, std::vector<TaskId> tasks);

}  // namespace mi::analysis
