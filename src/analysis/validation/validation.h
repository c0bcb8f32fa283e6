#pragma once

// Validation: structural and shape/dtype validation of one graph level (a root
// graph and the subgraph bodies nested in it). Reads the data model only:
// shapes are those the Model holds (declared in the file, or filled in by
// ONNX shape inference at import), and the per-op rules below are our own,
// so a contradiction between a declared output shape and the inputs is
// found whoever wrote the shape. Rules (id, severity):
//   dangling_input         error    input produced by nothing, not a graph
//                                   input or initializer
//   dangling_output        error    graph output produced by nothing
//   cycle                  error    nodes that depend on themselves
//   unused_output          warning  node output nobody reads, not a graph
//                                   output
//   broadcast              error    Add/Sub/Mul/Div/... shapes that do not
//                                   broadcast (numpy rules)
//   matmul_inner_dim       error    MatMul K of A differs from K of B
//   gemm_inner_dim         error    Gemm K differs (transA/transB applied)
//                                   or an operand is not rank 2
//   concat_shape           error    Concat ranks differ, axis out of range,
//                                   or a non-axis dim differs
//   conv_channels          error    Conv input channels != weight channels x
//                                   group, or M not divisible by group
//   reshape_element_count  error    static input and output element counts
//                                   differ
//   dtype_mismatch         error    inputs an op requires to share a type
//                                   have different element types
//   output_shape_mismatch  error    declared output shape contradicts the
//                                   shape inferred from the inputs
// Only default-domain ops (ai.onnx) are checked by the per-op rules; a dim
// that is symbolic or unknown never produces a finding.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "base/ids.h"
#include "model/model.h"
#include "model_inspector/results/validation.h"

namespace mi::analysis {

enum class ValidationSeverity : uint8_t { kWarning, kError };
std::string_view ValidationSeverityName(ValidationSeverity severity);

struct RuleInfo {
  std::string_view id;
  ValidationSeverity severity;
  std::string_view summary;
};
// Every rule, in the order above (docs and tests enumerate them).
std::span<const RuleInfo> ValidationRules();

struct ValidationFinding {
  std::string_view rule;  // a RuleInfo::id
  ValidationSeverity severity = ValidationSeverity::kError;
  GraphId graph;
  NodeId node;                  // invalid for graph-level findings
  std::vector<ValueId> values;  // the tensors involved, shown with shapes
  std::string message;
};

struct ValidationReport {
  GraphId root;
  uint32_t graphs = 0;  // root plus nested bodies
  uint32_t nodes = 0;
  uint32_t errors = 0;
  uint32_t warnings = 0;
  std::vector<ValidationFinding> findings;  // errors first, then by node
};

ValidationReport ValidateGraph(const Model& model, GraphId root);

// Inferred output shape of the per-op rules, for tests: empty optional-like
// result (has_shape = false) when no rule applies or an input is unknown.
struct InferredShape {
  bool has_shape = false;
  std::vector<int64_t> dims;  // -1 for a dim the rule cannot tell
};
InferredShape InferOutputShape(const Model& model, NodeId node, size_t output);

// The reports of the levels as the public result; its Write() is
// docs/reference/schemas/check.schema.json: {"ok", "errors", "warnings",
// "levels": [{"level", "graph", "graphs", "nodes", "errors", "warnings",
// "findings": [...]}]}.
struct LevelValidation {
  std::string level;
  ValidationReport report;
};
ValidationResult ToValidationResult(const Model& model,
                                    const std::vector<LevelValidation>& levels);

// Validates the framework and the compiled graph (those present).
ValidationResult ValidateLevels(const Model& model, GraphId framework,
                                GraphId compiled);

// Registry entry (registry/builtin_analyses.cc).
const AnalysisDescriptor& ValidationAnalysis();

}  // namespace mi::analysis
