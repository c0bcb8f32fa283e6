#pragma once

// Per-block time: for each family of repeated blocks
// (transformer layers, residual blocks), the time of every instance, so
// summaries can report per-block time and spot the slow instance.
//
// The blocks themselves are found by structure in src/layout
// (group_detection.h, MarkRepeats) for folding; analyses may not depend on
// layout, so the session passes the families in as node sets and this
// module only does the timing.
//
// Each execution task (compute, data movement) counts once: to its node,
// or — for a task of a compiled node that replaced several framework nodes
// — split equally among those framework nodes (remainder to the first),
// so that blocks on the framework level get the time of the fused kernels
// they contributed to, and a fused kernel spanning two blocks (e.g. a
// residual Add fused with the next layer's LayerNorm) is not counted twice.

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "base/ids.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/results/diagnosis.h"
#include "trace/trace.h"

namespace mi::analysis {

// Per node id: the time of the tasks attributed to it (see above).
std::vector<int64_t> AttributedNodeTime(const Model& model, const Trace& trace,
                                        const Links& links);

struct BlockInstance {
  std::string path;    // where it sits, e.g. "layers.3"
  int32_t group = -1;  // the caller's group index (layout group)
  std::vector<NodeId> nodes;
};

struct BlockFamily {
  std::vector<BlockInstance> instances;  // in graph order
};

struct BlockInstanceTime {
  std::string path;
  int32_t group = -1;
  uint64_t node_count = 0;
  int64_t total_ns = 0;
};

struct BlockFamilyTime {
  std::string label;  // the first instance's path
  uint64_t nodes_per_instance = 0;
  std::vector<BlockInstanceTime> instances;
  int64_t total_ns = 0;
  int64_t mean_ns = 0;
  int64_t median_ns = 0;
  // The slowest instance (index into `instances`) and its time over the
  // median (1 when all are equal; 0 when nothing ran).
  int32_t slowest = -1;
  double slowest_over_median = 0;
};

// Families with at least two instances, by total time (largest first,
// then in the given order).
std::vector<BlockFamilyTime> TimeBlockFamilies(
    const std::vector<int64_t>& node_time,
    const std::vector<BlockFamily>& families);

// The repeated blocks of the framework level (else the compiled level),
// families from ctx.block_families, as the public result; empty without a
// graph.
BlocksResult RunBlocks(const AnalysisContext& ctx);

// Registry entry (registry/builtin_analyses.cc).
const AnalysisDescriptor& BlocksAnalysis();

}  // namespace mi::analysis
