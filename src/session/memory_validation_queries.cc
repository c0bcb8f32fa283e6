// Session methods for the memory analysis (E8) and validation (S5): thin
// wrappers that pick the level's root graph and encode the analyses'
// reports.

#include <string>
#include <string_view>
#include <vector>

#include "analysis/memory/memory.h"
#include "analysis/validation/validation.h"
#include "model_inspector/session.h"
#include "session/node_queries.h"
#include "session/session_impl.h"

namespace mi {

StatusOr<std::string> Session::MemoryJson(std::string_view level) const {
  StatusOr<GraphId> root = LevelRoot(*impl_, level);
  if (!root.ok()) return root.status();
  const Trace* trace = impl_->trace.task_count() > 0 ? &impl_->trace : nullptr;
  analysis::MemoryReport report = analysis::AnalyzeMemory(
      impl_->model, trace, &impl_->links, *root, analysis::MemoryOptions{});
  return analysis::MemoryReportJson(impl_->model, report, level);
}

std::string Session::ValidationJson(uint64_t* errors) const {
  std::vector<analysis::LevelValidation> levels;
  for (const auto& [name, root] :
       {std::pair<std::string, GraphId>{"framework", impl_->framework},
        std::pair<std::string, GraphId>{"compiled", impl_->compiled}}) {
    if (!root.valid()) continue;
    levels.push_back({name, analysis::ValidateGraph(impl_->model, root)});
  }
  if (errors != nullptr) {
    *errors = 0;
    for (const auto& l : levels) *errors += l.report.errors;
  }
  return analysis::ValidationJson(impl_->model, levels);
}

}  // namespace mi
