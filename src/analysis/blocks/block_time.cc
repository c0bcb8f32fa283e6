#include "analysis/blocks/block_time.h"

#include <algorithm>
#include <span>

namespace mi::analysis {

std::vector<int64_t> AttributedNodeTime(const Model& model, const Trace& trace,
                                        const Links& links) {
  std::vector<int64_t> time(model.node_count(), 0);
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    TaskKind kind = trace.task_kind(t);
    if (kind != TaskKind::kCompute && kind != TaskKind::kDataMovement) continue;
    NodeId node = trace.task_node(t);
    if (!node.valid() || node.value() >= time.size()) continue;
    int64_t d = trace.task_duration_ns(t);
    auto from = model.node_level(node) == LayerLevel::kCompiled
                    ? links.fused_from.Get(node)
                    : std::span<const NodeId>();
    if (from.empty()) {
      time[node.value()] += d;
      continue;
    }
    int64_t share = d / static_cast<int64_t>(from.size());
    int64_t rest = d - share * static_cast<int64_t>(from.size());
    for (size_t k = 0; k < from.size(); ++k) {
      if (from[k].value() < time.size()) {
        time[from[k].value()] += share + (k == 0 ? rest : 0);
      }
    }
  }
  return time;
}

std::vector<BlockFamilyTime> TimeBlockFamilies(
    const std::vector<int64_t>& node_time,
    const std::vector<BlockFamily>& families) {
  std::vector<BlockFamilyTime> out;
  for (const BlockFamily& family : families) {
    if (family.instances.size() < 2) continue;
    BlockFamilyTime f;
    f.label = family.instances.front().path;
    f.nodes_per_instance = family.instances.front().nodes.size();
    std::vector<int64_t> times;
    for (const BlockInstance& inst : family.instances) {
      BlockInstanceTime it;
      it.path = inst.path;
      it.group = inst.group;
      it.node_count = inst.nodes.size();
      for (NodeId n : inst.nodes) {
        if (n.value() < node_time.size()) it.total_ns += node_time[n.value()];
      }
      f.total_ns += it.total_ns;
      times.push_back(it.total_ns);
      f.instances.push_back(std::move(it));
    }
    const int64_t count = static_cast<int64_t>(times.size());
    f.mean_ns = f.total_ns / count;
    std::vector<int64_t> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    // Lower median for an even count: the slow instance stands out against
    // the typical one, not against an average it pulls up.
    f.median_ns = sorted[(count - 1) / 2];
    auto slowest = std::max_element(times.begin(), times.end());
    if (*slowest > 0) {
      f.slowest = static_cast<int32_t>(slowest - times.begin());
      f.slowest_over_median =
          f.median_ns > 0 ? static_cast<double>(*slowest) / f.median_ns : 0;
    }
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const BlockFamilyTime& a, const BlockFamilyTime& b) {
                     return a.total_ns > b.total_ns;
                   });
  return out;
}

}  // namespace mi::analysis
