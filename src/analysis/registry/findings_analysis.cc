#include "analysis/registry/findings_analysis.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/rules.h"
#include "analysis/timing/timing_rules.h"
#include "base/strings.h"

namespace mi::analysis {
const std::vector<RuleSpec>& AllRuleSpecs() {
  static const std::vector<RuleSpec> rules = [] {
    std::vector<RuleSpec> all;
    for (const auto& r : DiagnosisRuleSpecs()) all.push_back(r);
    for (const auto& r : TimingRuleSpecs()) all.push_back(r);
    return all;
  }();
  return rules;
}

StatusOr<FindingsResult> RunFindings(const AnalysisContext& ctx,
                                     const DiagnoseOptions& options) {
  DiagnosisOptions o;
  for (const auto& [id, value] : options.thresholds) o.thresholds[id] = value;
  o.disabled = options.disabled;
  MI_RETURN_IF_ERROR(ValidateDiagnosisOptions(o, AllRuleSpecs()));
  std::vector<Finding> findings =
      Diagnose(*ctx.model, *ctx.trace, *ctx.links, o);
  std::vector<Finding> timing = EvaluateTimingRules(
      *ctx.model, *ctx.trace, *ctx.links, o, ctx.dependency_graphs);
  for (auto& f : timing) {
    if (o.Enabled(f.rule_id)) findings.push_back(std::move(f));
  }
  SortFindings(findings);
  FindingsResult out;
  for (const Finding& f : findings) {
    FindingInfo info;
    info.rule_id = f.rule_id;
    const RuleSpec* spec = FindRuleSpec(AllRuleSpecs(), f.rule_id);
    if (spec != nullptr) {
      info.title = std::string(spec->title);
      info.threshold = o.Threshold(*spec);
    }
    info.severity = std::string(FindingSeverityName(f.severity));
    info.message = f.message;
    info.suggestion = f.suggestion;
    for (NodeId n : f.nodes) info.nodes.push_back(n.value());
    for (TaskId t : f.tasks) info.tasks.push_back(t.value());
    info.time_ns = f.time_ns;
    info.share = f.share;
    out.findings.push_back(std::move(info));
  }
  return out;
}

const AnalysisDescriptor& FindingsAnalysis() {
  static const AnalysisDescriptor d{
      .id = "findings",
      .title = "Diagnosis findings",
      .summary =
          "every diagnosis rule (layout conversions, data movement, unfused "
          "patterns, redundant transposes, dynamic shapes, eager launches) "
          "and timing rule that fired, with evidence and a suggested fix "
          "(docs/reference/diagnosis-rules.md)",
      .needs = kNeedsNothing,
      .parameters = {{"disable", ParameterType::kString, "",
                      "rule ids to skip, comma-separated"},
                     {"thresholds", ParameterType::kString, "",
                      "threshold overrides, RULE=VALUE comma-separated"}},
      .in_export = true,
      .fields = {},
      .reference = "docs/reference/schemas/findings.schema.json",
      .run = [](const AnalysisContext& ctx, const ParsedParams& params)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        DiagnoseOptions options;
        for (std::string_view id :
             SplitNonEmpty(params.String("disable"), ',')) {
          options.disabled.emplace_back(id);
        }
        for (std::string_view item :
             SplitNonEmpty(params.String("thresholds"), ',')) {
          size_t eq = item.find('=');
          std::optional<double> v = eq == std::string_view::npos
                                        ? std::nullopt
                                        : ParseDouble(item.substr(eq + 1));
          if (eq == 0 || !v) {
            return InvalidArgumentError(fmt::format(
                "analysis 'findings': parameter 'thresholds': expected "
                "RULE=VALUE (e.g. layout_conversion_share=0.1), found '{}'",
                item));
          }
          options.thresholds[std::string(item.substr(0, eq))] = *v;
        }
        StatusOr<FindingsResult> r = RunFindings(ctx, options);
        if (!r.ok()) return r.status();
        return std::unique_ptr<AnalysisResult>(
            std::make_unique<FindingsResult>(std::move(r).value()));
      }};
  return d;
}

}  // namespace mi::analysis
