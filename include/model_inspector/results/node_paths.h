#pragma once

// A node's ancestors and descendants in its graph and the tasks that ran
// them (GET .../nodes/{node}/paths, `path --node`). Sorted ids.

#include <cstdint>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"

namespace mi {

struct NodePathsResult : AnalysisResult {
  uint32_t node = 0;
  std::vector<uint32_t> ancestors;
  std::vector<uint32_t> descendants;
  std::vector<uint32_t> node_tasks;
  std::vector<uint32_t> ancestor_tasks;
  std::vector<uint32_t> descendant_tasks;

  std::string_view analysis_id() const override { return "node_paths"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
