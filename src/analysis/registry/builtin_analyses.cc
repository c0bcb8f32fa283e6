// The analyses, one line each, in the order of analyses.json, `analyze
// --list` and docs/reference/analyses.md. Adding one: its include and its
// line here, nothing else (docs/contributing/adding-an-analysis.md). Each
// folder under src/analysis/ without a CMakeLists.txt of its own is built
// and linked into the registry by src/analysis/CMakeLists.txt.

#include "analysis/blocks/block_time.h"
#include "analysis/load_balance/load_balance.h"
#include "analysis/memory/memory.h"
#include "analysis/profile_tables/profile_tables.h"
#include "analysis/registry/findings_analysis.h"
#include "analysis/registry/registry.h"
#include "analysis/sequences/sequences.h"
#include "analysis/steps/step_breakdown.h"
#include "analysis/timing/timing_results.h"
#include "analysis/training/training_diagnosis.h"
#include "analysis/validation/validation.h"

namespace mi::analysis {

const std::vector<const AnalysisDescriptor*>& BuiltinAnalyses() {
  static const std::vector<const AnalysisDescriptor*> list = {
      &CalibrationAnalysis(),    &CriticalPathAnalysis(),
      &IdleOverlapAnalysis(),    &FindingsAnalysis(),
      &SequencesAnalysis(),      &BlocksAnalysis(),
      &MemoryAnalysis(),         &ValidationAnalysis(),
      &LoadBalanceAnalysis(),    &StepBreakdownAnalysis(),
      &ApiStatisticsAnalysis(),  &CacheRatesAnalysis(),
      &ProfiledMemoryAnalysis(), &TrainingDiagnosisAnalysis(),
  };
  return list;
}

}  // namespace mi::analysis
