#pragma once

// Typed analysis results and the registry's public face.
//
// Every analysis returns a plain struct deriving from AnalysisResult
// (include/model_inspector/results/*.h for the ones the Session also
// returns by type). Write() is the one description of its fields, shared by
// every front end: the JSON of dumps and HTTP, the CLI's tables
// (src/encoders/). Results hold no internal ids: tasks, nodes, tracks and
// sources are their integer ids, names are strings.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_inspector/result_writer.h"

namespace mi {

class AnalysisResult {
 public:
  AnalysisResult() = default;
  AnalysisResult(const AnalysisResult&) = default;
  AnalysisResult(AnalysisResult&&) = default;
  AnalysisResult& operator=(const AnalysisResult&) = default;
  AnalysisResult& operator=(AnalysisResult&&) = default;
  virtual ~AnalysisResult() = default;

  // The registry id of the analysis ("critical_path"): the key of the
  // result in analyses.json, its HTTP route and its `analyze` name.
  virtual std::string_view analysis_id() const = 0;
  // Writes the result as one value (usually an object).
  virtual void Write(ResultWriter& w) const = 0;
};

// A parameter of a registered analysis (`analyze ID --param name=value`,
// `GET /api/runs/{run}/analyses/{id}?name=value`).
struct AnalysisParameterInfo {
  std::string name;
  std::string type;           // "int" | "double" | "string" | "bool"
  std::string default_value;  // as text, as a front end would pass it
  std::string help;
  std::vector<std::string> choices;  // allowed values of a string; empty = any
};

// A registered analysis (src/analysis/registry, docs/reference/analyses.md).
struct AnalysisInfo {
  std::string id;
  std::string title;
  std::string summary;
  bool needs_trace = false;  // runs only when the run has a trace
  bool needs_graph = false;  // runs only when the run has a model
  // Runs only on a training snapshot (model_inspector.train).
  bool needs_training = false;
  std::vector<AnalysisParameterInfo> parameters;
  // Its whole-run result (default parameters) is part of analyses.json and
  // GET /api/runs/{run}/analyses.
  bool in_export = false;
  // Whether it applies to this run (what it needs is loaded).
  bool applies = false;
};

// The registered analyses (`analyze --list --format json`,
// GET /api/runs/{run}/analysis-list): {"analyses": [{"id", "title",
// "summary", "needs": ["trace", "graph", "training"], "in_export", "applies",
// "parameters": [{"name", "type", "default", "help", "choices"}]}]}.
struct AnalysisListResult : AnalysisResult {
  std::vector<AnalysisInfo> analyses;

  std::string_view analysis_id() const override { return "analysis_list"; }
  void Write(ResultWriter& w) const override;
};

// Parameter values by name, as text (parsed and checked by the registry).
using AnalysisParams = std::map<std::string, std::string>;

// The whole-run analyses of analyses.json / GET /api/runs/{run}/analyses:
// {"schema": "model-inspector/analyses/1", <id>: <result>, ...} with every
// in_export analysis that applies, in registry order.
struct AnalysesDocument : AnalysisResult {
  std::vector<std::unique_ptr<AnalysisResult>> sections;

  std::string_view analysis_id() const override { return "analyses"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
