#pragma once

// Validation findings of every graph level (src/analysis/validation;
// docs/reference/schemas/check.schema.json, `check`).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"

namespace mi {

struct ValidationFindingInfo {
  std::string rule;
  std::string severity;  // "error" | "warning"
  std::string graph;
  struct NodeRef {
    uint32_t id = 0;
    std::string name;
    std::string op_type;
  };
  std::optional<NodeRef> node;
  struct ValueRef {
    std::string name;
    std::string type;
  };
  std::vector<ValueRef> values;
  std::string message;
};

struct LevelValidationInfo {
  std::string level;  // "framework" | "compiled"
  std::string graph;
  std::string file;
  int64_t graphs = 0;
  int64_t nodes = 0;
  int64_t errors = 0;
  int64_t warnings = 0;
  std::vector<ValidationFindingInfo> findings;
};

struct ValidationResult : AnalysisResult {
  uint64_t errors = 0;
  uint64_t warnings = 0;
  std::vector<LevelValidationInfo> levels;

  std::string_view analysis_id() const override { return "validation"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
