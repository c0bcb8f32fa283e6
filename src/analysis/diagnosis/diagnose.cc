#include "analysis/diagnosis/diagnose.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "analysis/diagnosis/rule_context.h"
#include "analysis/diagnosis/rules.h"

namespace mi::analysis {
namespace {

using diagnosis_internal::RuleContext;
using diagnosis_internal::RuleFunction;

struct RuleEntry {
  std::string_view id;
  RuleFunction evaluate;
};

// The evaluator of each row of this module's table.
constexpr RuleEntry kEvaluators[] = {
    {kRuleLayoutConversionShare, diagnosis_internal::LayoutConversionShare},
    {kRuleDataMovementShare, diagnosis_internal::DataMovementShare},
    {kRuleUnfusedConvBnActivation, diagnosis_internal::UnfusedConvBnActivation},
    {kRuleUnfusedMatMulAdd, diagnosis_internal::UnfusedMatMulAdd},
    {kRuleUnfusedLayerNorm, diagnosis_internal::UnfusedLayerNorm},
    {kRuleUnfusedGelu, diagnosis_internal::UnfusedGelu},
    {kRuleRedundantTransposeReshape,
     diagnosis_internal::RedundantTransposeReshape},
    {kRuleDynamicInputShape, diagnosis_internal::DynamicInputShape},
    {kRuleEagerLaunches, diagnosis_internal::EagerLaunches},
};

std::string KnownIds(std::span<const RuleSpec> rules) {
  std::string ids;
  for (const RuleSpec& rule : rules) {
    ids += (ids.empty() ? "" : ", ") + std::string(rule.id);
  }
  return ids;
}

}  // namespace

Status ValidateDiagnosisOptions(const DiagnosisOptions& options,
                                std::span<const RuleSpec> known_rules) {
  for (const auto& [id, value] : options.thresholds) {
    const RuleSpec* rule = FindRuleSpec(known_rules, id);
    if (rule == nullptr) {
      return InvalidArgumentError(fmt::format(
          "--threshold: no rule '{}'; rules: {}", id, KnownIds(known_rules)));
    }
    if (!std::isfinite(value) || value < 0) {
      return InvalidArgumentError(fmt::format(
          "--threshold {}: expected a non-negative number ({}), found {}", id,
          rule->threshold_unit, value));
    }
    if (rule->threshold_unit == "share" && value > 1) {
      return InvalidArgumentError(
          fmt::format("--threshold {}: expected a share between 0 and 1 "
                      "(0.1 = 10%), found {}",
                      id, value));
    }
  }
  for (const std::string& id : options.disabled) {
    if (FindRuleSpec(known_rules, id) == nullptr) {
      return InvalidArgumentError(fmt::format(
          "--disable: no rule '{}'; rules: {}", id, KnownIds(known_rules)));
    }
  }
  return Status::Ok();
}

void SortFindings(std::vector<Finding>& findings) {
  std::stable_sort(
      findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        return std::make_tuple(-static_cast<int>(a.severity), -a.time_ns,
                               std::cref(a.rule_id), std::cref(a.message)) <
               std::make_tuple(-static_cast<int>(b.severity), -b.time_ns,
                               std::cref(b.rule_id), std::cref(b.message));
      });
}

std::vector<Finding> Diagnose(const Model& model, const Trace& trace,
                              const Links& links,
                              const DiagnosisOptions& options) {
  RuleContext ctx =
      diagnosis_internal::MakeRuleContext(model, trace, links, options);
  std::vector<Finding> findings;
  for (const RuleSpec& rule : DiagnosisRuleSpecs()) {
    if (!options.Enabled(rule.id)) continue;
    for (const RuleEntry& entry : kEvaluators) {
      if (entry.id == rule.id) entry.evaluate(ctx, rule, &findings);
    }
  }
  SortFindings(findings);
  return findings;
}

}  // namespace mi::analysis
