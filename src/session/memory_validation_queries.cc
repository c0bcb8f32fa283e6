// Session methods for the memory analysis and validation: thin
// wrappers that pick the level's root graph and return the analyses'
// results.

#include <string>
#include <string_view>

#include "analysis/memory/memory.h"
#include "analysis/validation/validation.h"
#include "model_inspector/session.h"
#include "session/node_queries.h"
#include "session/session_impl.h"

namespace mi {

StatusOr<MemoryResult> Session::Memory(std::string_view level) const {
  StatusOr<GraphId> root = LevelRoot(*impl_, level);
  if (!root.ok()) return root.status();
  const Trace* trace = impl_->trace.task_count() > 0 ? &impl_->trace : nullptr;
  analysis::MemoryReport report = analysis::AnalyzeMemory(
      impl_->model, trace, &impl_->links, *root, analysis::MemoryOptions{});
  return analysis::ToMemoryResult(impl_->model, report, level);
}

ValidationResult Session::Validation() const {
  return analysis::ValidateLevels(impl_->model, impl_->framework,
                                  impl_->compiled);
}

}  // namespace mi
