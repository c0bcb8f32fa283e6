#pragma once

// Public types of the diagnosis, frequent-sequence and repeated-block
// analyses, used by Session (session.h) and the front ends.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model_inspector/status.h"

namespace mi {

struct DiagnoseOptions {
  // Threshold overrides by rule id (units as in the rule table).
  std::map<std::string, double> thresholds;
  // Rule ids to skip.
  std::vector<std::string> disabled;
};

// A row of the rule table (docs/reference/diagnosis-rules.md).
struct RuleInfo {
  std::string id;
  std::string title;
  std::string severity;  // "info" | "warning" | "error"
  double default_threshold = 0;
  std::string threshold_unit;  // "share" | "count" | "us"
  std::string why;
  std::string suggestion;
};

struct FindingInfo {
  std::string rule_id;
  std::string title;     // the rule's title
  std::string severity;  // "info" | "warning" | "error"
  std::string message;   // with the figures
  std::string suggestion;
  double threshold = 0;  // the threshold applied
  // Evidence: model node ids (any level) and task ids, most important
  // first, at most 1000 each.
  std::vector<uint32_t> nodes;
  std::vector<uint32_t> tasks;
  int64_t time_ns = 0;  // time at stake (0 for non-time findings)
  double share = 0;     // of the execution time basis (0 when none)
};

struct SequenceOptions {
  // "op_type" (the op each task ran) or "name" (kernel / task name).
  std::string by = "op_type";
  size_t min_length = 2;
  size_t max_length = 6;
  size_t top = 20;
};

// A consecutive sequence of tasks on a stream that occurs repeatedly.
struct SequenceInfo {
  std::vector<std::string> symbols;  // op types or names, in order
  uint64_t count = 0;                // non-overlapping occurrences, all streams
  int64_t total_ns = 0;              // summed duration of the tasks of those
  double share = 0;                  // of all sequenced task time
  std::vector<uint32_t> tracks;      // where it occurs
  std::vector<uint32_t> first_tasks;  // tasks of its first occurrence
};

// A repeated block (transformer layer, residual block) in one place of the
// graph, and its time.
struct BlockInstanceInfo {
  std::string path;    // group path, e.g. "layers.3"
  int32_t group = -1;  // group index in the level's default layout view
  uint64_t node_count = 0;
  int64_t total_ns = 0;
};

// Blocks of equal structure (found as for folding in the UI) with the
// time of each instance, to report per-block time and spot the slow one.
struct BlockFamilyInfo {
  std::string level;  // "framework" | "compiled"
  std::string label;  // the first instance's path
  uint64_t nodes_per_instance = 0;
  std::vector<BlockInstanceInfo> instances;
  int64_t total_ns = 0;
  int64_t mean_ns = 0;
  int64_t median_ns = 0;
  int32_t slowest = -1;  // index into instances; -1 when nothing ran
  double slowest_over_median = 0;
};

// The rule table: diagnosis rules then timing rules.
std::vector<RuleInfo> DiagnosisRules();
// docs/reference/diagnosis-rules.md, generated from the table.
std::string DiagnosisRulesMarkdown();

}  // namespace mi
