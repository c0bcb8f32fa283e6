#pragma once

// JSON of the run history (include/model_inspector/history.h), shared by
// `model-inspector history ... --format json` and the server's
// /api/history routes, so both print the same documents
// (docs/reference/schemas/history.schema.json). Absent figures (-1: no
// level, no trace) are null.

#include <string>
#include <vector>

#include "model_inspector/history.h"

namespace mi::encoders {

// {"schema": "model-inspector/history-runs/1", "history": PATH,
//  "runs": [run...]}, newest first as given.
std::string HistoryRunsJson(const std::string& history_path,
                            const std::vector<HistoryRun>& runs,
                            bool pretty = false);
// {"schema": "model-inspector/history-run/1", "history": PATH, "run": run,
//  "baselines": [names pointing at it]}
std::string HistoryRunJson(const std::string& history_path,
                           const HistoryRun& run,
                           const std::vector<std::string>& baselines,
                           bool pretty = false);
// {"schema": "model-inspector/history-trend/1", "history": PATH,
//  "model": M, "points": [{run_id, created_utc, git_commit, label,
//  total_median_ns, total_spread_ns}...]}, oldest first.
std::string HistoryTrendJson(const std::string& history_path,
                             const std::string& model,
                             const std::vector<HistoryTrendPoint>& points,
                             bool pretty = false);
// {"schema": "model-inspector/history-baselines/1", "history": PATH,
//  "baselines": [{name, run_id, set_utc}...]}
std::string HistoryBaselinesJson(const std::string& history_path,
                                 const std::vector<HistoryBaseline>& baselines,
                                 bool pretty = false);

}  // namespace mi::encoders
