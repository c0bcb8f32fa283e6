#pragma once

// The training diagnosis of a snapshot (results/training.h, analysis
// "training_diagnosis") for people: `model-inspector diagnose SNAPSHOT`
// prints it as text, and `--report FILE.html` writes it as one
// self-contained HTML page (no script, no request, inline SVG; readable at
// 1280 px and printed on A4): the model's health score, the anomaly
// timeline (loss and gradient norm per step, trigger marks, the captured
// window shaded), the health heat map layer x step, the problem layers,
// the root-cause chain drawn on the layers graph and the ranked causes
// with evidence, confidence, fix, snippet and validation plan.
// docs/guides/training-report.md.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model_inspector/results/training.h"

namespace mi::report {

// The layers graph the chain is drawn on: forward data flow between
// snapshot layer ids (TrainingLayerHealth::layer); edges naming a layer
// the result does not list are left out.
struct TrainingGraph {
  std::vector<std::pair<int32_t, int32_t>> edges;
};

struct TrainingReportOptions {
  // Graphs with more layers are drawn as the chain, the problem layers and
  // their neighbours only (the page says so).
  size_t max_drawn_layers = 300;
  // The heat map and the timeline draw at most this many step columns;
  // longer runs are binned (each column the worst score of its steps).
  size_t max_step_columns = 240;
};

// The colour bands of a 0-100 health score, shared by the score badge and
// the heat map cells (docs/guides/training-report.md lists them):
// >= 90 "#2da44e", >= 70 "#9be9a8", >= 50 "#f2cc60", >= 25 "#fb8f44",
// below 25 "#cf222e", not measured (NaN) "#eaeef2".
std::string ScoreColour(double score);
// "healthy" (>= 90), "watch" (>= 70), "degraded" (>= 50), "poor" (>= 25),
// "critical", "not measured".
std::string ScoreBand(double score);

// The page.
std::string RenderTrainingHtml(const TrainingDiagnosisResult& result,
                               const TrainingGraph& graph,
                               const TrainingReportOptions& options = {});

// For a terminal: the score, the anomaly (step, triggers), the problem
// layers as a table, the causes ranked with evidence, fix and validation,
// and the chain. Names from the snapshot are made safe for a terminal.
std::string RenderTrainingText(const TrainingDiagnosisResult& result);

}  // namespace mi::report
