#pragma once

// One diagnosis finding and the shape of a rule, shared by every module
// that contributes rules (diagnosis/ for graph and share rules, timing/ for
// rules that need stream idle and overlap figures). Rules are data: a table
// of RuleSpec rows with an id, a default threshold and the message; options
// override thresholds by rule id.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"

namespace mi::analysis {

enum class FindingSeverity : uint8_t { kInfo, kWarning, kError };
std::string_view FindingSeverityName(FindingSeverity severity);

// A rule as documented in docs/reference/diagnosis-rules.md.
struct RuleSpec {
  std::string_view id;     // "layout_conversion_share"
  std::string_view title;  // one line for tables
  FindingSeverity severity = FindingSeverity::kWarning;
  // The threshold the rule fires above (its unit in `threshold_unit`:
  // "share" 0..1, "us", "count"); options may override it by id.
  double default_threshold = 0;
  std::string_view threshold_unit;
  std::string_view why;         // what the finding means
  std::string_view suggestion;  // the usual fix
};

struct Finding {
  std::string rule_id;
  FindingSeverity severity = FindingSeverity::kWarning;
  // A sentence with the figures: "TransData takes 23.4% of device time
  // (412 us in 37 tasks), above the 10% threshold".
  std::string message;
  std::string suggestion;
  // Evidence, for the UI to select: nodes (model NodeIds, any level) and
  // tasks (TaskIds), most important first.
  std::vector<NodeId> nodes;
  std::vector<TaskId> tasks;
  int64_t time_ns = 0;  // time at stake (0 when not a time finding)
  double share = 0;     // of the basis total, 0..1 (0 when not a share)
};

struct DiagnosisOptions {
  // Threshold overrides by rule id; rules not named use their default.
  std::map<std::string, double, std::less<>> thresholds;
  // Rules to skip, by id.
  std::vector<std::string> disabled;

  double Threshold(const RuleSpec& rule) const {
    auto it = thresholds.find(rule.id);
    return it == thresholds.end() ? rule.default_threshold : it->second;
  }
  bool Enabled(std::string_view id) const {
    for (const auto& d : disabled) {
      if (d == id) return false;
    }
    return true;
  }
};

}  // namespace mi::analysis
