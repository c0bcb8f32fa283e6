// Validation reports of the graph levels as the public ValidationResult
// (docs/reference/schemas/check.schema.json): names resolved.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/validation/validation.h"
#include "base/ids.h"
#include "model/model.h"

namespace mi::analysis {

ValidationResult ToValidationResult(
    const Model& model, const std::vector<LevelValidation>& levels) {
  ValidationResult out;
  for (const LevelValidation& l : levels) {
    const ValidationReport& r = l.report;
    out.errors += r.errors;
    out.warnings += r.warnings;
    LevelValidationInfo level;
    level.level = l.level;
    level.graph = std::string(model.str(model.graph(r.root).name));
    level.file = std::string(model.str(model.graph(r.root).source_file));
    level.graphs = r.graphs;
    level.nodes = r.nodes;
    level.errors = r.errors;
    level.warnings = r.warnings;
    for (const ValidationFinding& f : r.findings) {
      ValidationFindingInfo info;
      info.rule = f.rule;
      info.severity = std::string(ValidationSeverityName(f.severity));
      info.graph = std::string(model.str(model.graph(f.graph).name));
      if (f.node.valid()) {
        info.node = ValidationFindingInfo::NodeRef{
            f.node.value(), std::string(model.str(model.node_name(f.node))),
            std::string(model.str(model.node_op_type(f.node)))};
      }
      for (ValueId v : f.values) {
        info.values.push_back({std::string(model.str(model.value_name(v))),
                               model.FormatValueType(v)});
      }
      info.message = f.message;
      level.findings.push_back(std::move(info));
    }
    out.levels.push_back(std::move(level));
  }
  return out;
}

ValidationResult ValidateLevels(const Model& model, GraphId framework,
                                GraphId compiled) {
  std::vector<LevelValidation> levels;
  if (framework.valid()) {
    levels.push_back({"framework", ValidateGraph(model, framework)});
  }
  if (compiled.valid()) {
    levels.push_back({"compiled", ValidateGraph(model, compiled)});
  }
  return ToValidationResult(model, levels);
}

const AnalysisDescriptor& ValidationAnalysis() {
  static const AnalysisDescriptor d{
      .id = "validation",
      .title = "Graph validation",
      .summary =
          "structural and per-op checks of every graph level: dangling "
          "inputs, cycles, unused outputs, shape / dtype incompatibilities "
          "and declared shapes that contradict inference (`check`)",
      .needs = kNeedsGraph,
      .parameters = {},
      .in_export = false,
      .fields = {},
      .reference = "docs/reference/schemas/check.schema.json",
      .run = [](const AnalysisContext& ctx, const ParsedParams&)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        return std::unique_ptr<AnalysisResult>(
            std::make_unique<ValidationResult>(
                ValidateLevels(*ctx.model, ctx.framework, ctx.compiled)));
      }};
  return d;
}

}  // namespace mi::analysis
