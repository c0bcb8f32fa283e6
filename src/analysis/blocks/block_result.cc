// Repeated blocks timed, as the public result, and their registry entry.
// The families themselves come from the context (the session builds them
// from the layout's groups, which analyses may not use).

#include <memory>
#include <string>

#include "analysis/blocks/block_time.h"

namespace mi::analysis {

BlocksResult RunBlocks(const AnalysisContext& ctx) {
  // The framework graph (the structure users recognise; compiled task time
  // reaches it through fused_from), else the compiled graph.
  GraphId root = ctx.framework.valid() ? ctx.framework : ctx.compiled;
  std::string level = ctx.framework.valid() ? "framework" : "compiled";
  BlocksResult out;
  if (!root.valid() || !ctx.block_families) return out;
  std::vector<int64_t> node_time =
      AttributedNodeTime(*ctx.model, *ctx.trace, *ctx.links);
  for (const BlockFamilyTime& f :
       TimeBlockFamilies(node_time, ctx.block_families(root))) {
    BlockFamilyInfo info;
    info.level = level;
    info.label = f.label;
    info.nodes_per_instance = f.nodes_per_instance;
    for (const BlockInstanceTime& i : f.instances) {
      info.instances.push_back({i.path, i.group, i.node_count, i.total_ns});
    }
    info.total_ns = f.total_ns;
    info.mean_ns = f.mean_ns;
    info.median_ns = f.median_ns;
    info.slowest = f.slowest;
    info.slowest_over_median = f.slowest_over_median;
    out.families.push_back(std::move(info));
  }
  return out;
}

const AnalysisDescriptor& BlocksAnalysis() {
  static const AnalysisDescriptor d{
      .id = "blocks",
      .title = "Repeated blocks",
      .summary =
          "families of repeated blocks (transformer layers, residual blocks, "
          "found by structure as the UI folds them) with the time of each "
          "instance, the median and the slowest instance",
      .needs = kNeedsNothing,
      .parameters = {},
      .in_export = true,
      .fields = {},
      .reference = "docs/reference/schemas/findings.schema.json",
      .run = [](const AnalysisContext& ctx, const ParsedParams&)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        return std::unique_ptr<AnalysisResult>(
            std::make_unique<BlocksResult>(RunBlocks(ctx)));
      }};
  return d;
}

}  // namespace mi::analysis
