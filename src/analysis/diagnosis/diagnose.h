#pragma once

// Diagnosis. Runs every enabled rule of this module's rule table
// (rules.h) — graph rules (unfused patterns, redundant Transpose/Reshape
// pairs, dynamic inputs), share rules (layout conversions, data movement)
// and the eager-launch rule — and returns the findings sorted by severity
// (errors first), then by time at stake. The timing rules
// (analysis/timing/timing_rules.h) are evaluated beside these by the
// session, which merges both lists with SortFindings: analyses never
// include each other (tools/check_layering.py).

#include <span>
#include <vector>

#include "analysis/finding.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/status.h"
#include "trace/trace.h"

namespace mi::analysis {

// Evidence lists are capped (the message gives the full counts) so that a
// finding on a million-task trace stays small.
inline constexpr size_t kMaxEvidence = 1000;

// Rule ids not in `known_rules` (in thresholds or disabled), negative or
// non-finite thresholds and shares above 1 are InvalidArgument, naming the
// id and the known ids.
Status ValidateDiagnosisOptions(const DiagnosisOptions& options,
                                std::span<const RuleSpec> known_rules);

// Needs Model::BuildIndexes (value consumers). Options are assumed valid
// (see ValidateDiagnosisOptions); unknown ids are ignored.
std::vector<Finding> Diagnose(const Model& model, const Trace& trace,
                              const Links& links,
                              const DiagnosisOptions& options);

// Severity first (errors first), then time at stake (largest first), then
// rule id and message: a total, deterministic order.
void SortFindings(std::vector<Finding>& findings);

}  // namespace mi::analysis
