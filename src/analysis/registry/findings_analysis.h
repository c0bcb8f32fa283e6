#pragma once

// The diagnosis findings: the rules of analysis/diagnosis and the timing
// rules of analysis/timing, run together and merged here (analyses never
// include each other; the registry sits above them).

#include <vector>

#include "analysis/analysis_descriptor.h"
#include "analysis/finding.h"
#include "model_inspector/diagnosis.h"
#include "model_inspector/results/diagnosis.h"
#include "model_inspector/status.h"

namespace mi::analysis {

// Every rule: the diagnosis rules, then the timing rules.
const std::vector<RuleSpec>& AllRuleSpecs();

// Findings of every enabled rule, sorted by severity, then time at stake.
// InvalidArgument for an unknown rule id or a threshold out of range.
StatusOr<FindingsResult> RunFindings(const AnalysisContext& ctx,
                                     const DiagnoseOptions& options);

const AnalysisDescriptor& FindingsAnalysis();

}  // namespace mi::analysis
