#pragma once

// What an analysis registers (docs/contributing/adding-an-analysis.md):
// its id, title, one-line summary, what it needs, its parameters, its field
// documentation and its Run function. The registry
// (registry/builtin_analyses.cc) lists every descriptor explicitly; the
// session, the HTTP server, the CLI (`analyze`), analyses.json and
// docs/reference/analyses.md are driven by that list, so a new analysis
// needs no code of its own in any of them.
//
// An analysis sees only AnalysisContext: model, trace, links, the level
// roots and the calibration report (analysis-layer types; never the
// session or an importer).

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/analysis_result.h"
#include "model_inspector/status.h"
#include "trace/trace.h"
#include "training/record.h"

namespace mi::analysis {

struct CalibrationReport;    // timing/calibration.h
struct BlockFamily;          // blocks/block_time.h
class DependencyGraphCache;  // timing/dependency_graph.h

// What a run offers an analysis.
struct AnalysisContext {
  const Model* model = nullptr;
  const Trace* trace = nullptr;
  const Links* links = nullptr;
  // A training snapshot's record (src/training/record.h) when the run is
  // one; null otherwise.
  const training::TrainingRecord* training = nullptr;
  // The level roots (Invalid when the run lacks the level).
  GraphId framework;
  GraphId compiled;
  // The clock calibration applied when the run was opened (computed =
  // false when it was off).
  const CalibrationReport* calibration = nullptr;
  // The run's dependency graphs, built once and shared by the timing
  // analyses (null: each builds its own).
  DependencyGraphCache* dependency_graphs = nullptr;
  // Families of repeated blocks of a level root, as the UI folds them
  // (layout groups: built by the session, the only layer that may use
  // layout); null when not offered.
  std::function<std::vector<BlockFamily>(GraphId root)> block_families;

  bool has_trace() const { return trace != nullptr && trace->task_count() > 0; }
  bool has_graph() const { return framework.valid() || compiled.valid(); }
  bool has_training() const {
    return training != nullptr && !training->empty();
  }
};

enum class ParameterType : uint8_t { kInt, kDouble, kString, kBool };
std::string_view ParameterTypeName(ParameterType type);

struct ParameterSpec {
  std::string_view name;
  ParameterType type = ParameterType::kInt;
  std::string_view default_value;  // as text; parsed like a given value
  std::string_view help;
  std::vector<std::string_view> choices;  // strings: the allowed values
  // Numbers: the allowed range (inclusive).
  double min = std::numeric_limits<double>::lowest();
  double max = std::numeric_limits<double>::max();
};

// A parameter value, parsed and checked against its spec.
struct ParameterValue {
  ParameterType type = ParameterType::kInt;
  int64_t int_value = 0;
  double double_value = 0;
  std::string string_value;
  bool bool_value = false;
};

// The parameters of one run of an analysis: every declared parameter, given
// or defaulted. Reading an undeclared name is a bug (MI_CHECK).
class ParsedParams {
 public:
  int64_t Int(std::string_view name) const;
  double Double(std::string_view name) const;
  const std::string& String(std::string_view name) const;
  bool Bool(std::string_view name) const;
  // Whether the caller gave it (else it holds the default).
  bool Given(std::string_view name) const;

  void Set(std::string_view name, ParameterValue value, bool given);

 private:
  const ParameterValue& Get(std::string_view name, ParameterType type) const;
  std::map<std::string, std::pair<ParameterValue, bool>, std::less<>> values_;
};

// One documented field of a result, for docs/reference/analyses.md: its
// path in the result ("sources[].busy_ns") and what it means.
struct FieldDoc {
  std::string_view path;
  std::string_view help;
};

enum AnalysisNeeds : uint8_t {
  kNeedsNothing = 0,
  kNeedsTrace = 1,     // tasks
  kNeedsGraph = 2,     // a framework or compiled graph
  kNeedsTraining = 4,  // a training snapshot's record (steps)
};

struct AnalysisDescriptor {
  std::string_view id;  // lower_snake_case: key, route and CLI name
  std::string_view title;
  std::string_view summary;  // one or two sentences for people
  uint8_t needs = kNeedsNothing;
  std::vector<ParameterSpec> parameters;
  // The whole-run result with default parameters goes into analyses.json
  // and GET /api/runs/{run}/analyses under `id`.
  bool in_export = false;
  // The result's fields (docs); the registry test checks them against what
  // the result writes. Analyses whose JSON has a schema name it in
  // `reference` instead.
  std::vector<FieldDoc> fields;
  std::string_view reference;
  // Runs the analysis; InvalidArgument for parameter values the checks of
  // ParameterSpec cannot express (name the parameter).
  std::function<StatusOr<std::unique_ptr<AnalysisResult>>(
      const AnalysisContext&, const ParsedParams&)>
      run;
};

}  // namespace mi::analysis
