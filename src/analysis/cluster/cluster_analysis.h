#pragma once

// The cluster analyses over merged rank summaries (model_inspector/
// cluster.h): collectives matched across ranks, arrival skew, wait and
// transfer time, bus bandwidth against the link peaks, slow ranks and
// why, per-step load imbalance, comm/compute overlap, the communication
// matrix, the critical path through collectives and the findings.
// docs/design/clusters.md describes each figure.

#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/cluster.h"
#include "model_inspector/status.h"

namespace mi::analysis {

ClusterReport AnalyzeClusterSummary(const ClusterSummary& summary,
                                    const ClusterAnalysisOptions& options);

// Adds `from` to `into`; InvalidArgument naming the rank both hold.
Status MergeRankSummaries(ClusterSummary& into, ClusterSummary&& from);

// nccl-tests' bus bandwidth factor for a collective type over n ranks
// (doc/PERFORMANCE.md): allreduce 2(n-1)/n; reducescatter, allgather,
// alltoall (n-1)/n; broadcast, reduce, send, receive 1; -1 unknown.
double BusBandwidthFactor(std::string_view type, int n);

// msprof-analyze's slow-rank test on one collective's per-rank durations
// (recipes/slow_rank/slow_rank.py): the indices flagged (the fastest
// rank: it arrived last, the others waited).
std::vector<size_t> DurationOutliers(const std::vector<int64_t>& durations);

// The link-peaks table: {"link_peaks": [{"link_type", "chip", "peak_gbps",
// "origin"}]}. `what` names the file in messages.
StatusOr<std::vector<LinkPeak>> ParseLinkPeaks(std::string_view json,
                                               std::string_view what);
// The compiled-in table (src/analysis/cluster/link_peaks.json).
std::string_view BuiltinLinkPeaksJson();

}  // namespace mi::analysis
