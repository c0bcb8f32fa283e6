// The analysis registry through the Session (src/analysis/registry): the
// context a run offers the analyses, the list of analyses with whether each
// applies, running one by id, and the whole-run document of analyses.json.

#include <memory>
#include <string_view>
#include <vector>

#include "analysis/registry/registry.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {

analysis::AnalysisContext ContextOf(const Session::Impl& run) {
  analysis::AnalysisContext ctx;
  ctx.model = &run.model;
  ctx.trace = &run.trace;
  ctx.links = &run.links;
  ctx.framework = run.framework;
  ctx.compiled = run.compiled;
  ctx.calibration = &run.calibration;
  ctx.dependency_graphs = &run.dependency_graphs;
  ctx.training = run.training.path.empty() ? nullptr : &run.training;
  const Session::Impl* impl = &run;
  ctx.block_families = [impl](GraphId root) {
    return BlockFamiliesOf(*impl, root);
  };
  return ctx;
}

std::vector<AnalysisInfo> Session::Analyses() const {
  analysis::AnalysisContext ctx = ContextOf(*impl_);
  std::vector<AnalysisInfo> out;
  for (const analysis::AnalysisDescriptor* a : analysis::BuiltinAnalyses()) {
    out.push_back(analysis::InfoOf(*a, &ctx));
  }
  return out;
}

StatusOr<std::unique_ptr<AnalysisResult>> Session::RunAnalysis(
    std::string_view id, const AnalysisParams& params) const {
  return analysis::RunAnalysis(ContextOf(*impl_), id, params);
}

AnalysesDocument Session::ExportedAnalyses() const {
  return analysis::ExportAnalyses(ContextOf(*impl_));
}

std::vector<AnalysisInfo> RegisteredAnalyses() {
  std::vector<AnalysisInfo> out;
  for (const analysis::AnalysisDescriptor* a : analysis::BuiltinAnalyses()) {
    out.push_back(analysis::InfoOf(*a, nullptr));
  }
  return out;
}

std::string AnalysesReferenceMarkdown() {
  return analysis::AnalysesReferenceMarkdown();
}

}  // namespace mi
