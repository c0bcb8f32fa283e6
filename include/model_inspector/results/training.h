#pragma once

// The training diagnosis of a snapshot (analysis "training_diagnosis",
// docs/design/training-diagnosis.md, docs/reference/schemas/
// training-diagnosis.schema.json): gradient health per layer and step with
// a 0-100 score, the anomaly timeline, the propagation chain of the first
// anomaly and its causes ranked with evidence and fixes. Written as one
// JSON object {"schema": "model-inspector/training-diagnosis/1", ...}.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"

namespace mi {

struct TrainingLayerHealth {
  int32_t layer = 0;  // snapshot layer id
  std::string name;   // module path
  std::string type;   // "Linear", ...
  int64_t node = -1;  // framework node id in the run, -1 when none
  int32_t forward_order = -1;
  double score = 100;        // 0-100 at the anomaly step (or the last step)
  double worst_score = 100;  // lowest over all steps
  int64_t worst_step = -1;
  // "vanishing" | "exploding" | "dead" | "nonfinite" | "update_ratio" |
  // "activation_range" | "fp16_range", each at least once over the steps.
  std::vector<std::string> flags;
};

struct TrainingStepHealth {
  int64_t step = 0;
  double loss = std::numeric_limits<double>::quiet_NaN();
  double grad_norm = std::numeric_limits<double>::quiet_NaN();
  double lr = std::numeric_limits<double>::quiet_NaN();
  double score = 100;  // the model's score at this step
  bool captured = false;
  std::vector<std::string> events;  // trigger names that fired at this step
};

struct TrainingEvidence {
  std::string metric;  // "update_ratio", "act_rms", "init_std", ...
  int32_t layer = -1;
  int64_t step = -1;
  double value = std::numeric_limits<double>::quiet_NaN();
  double expected =
      std::numeric_limits<double>::quiet_NaN();  // what a healthy value is
  std::string text;                              // one sentence a person reads
};

struct TrainingFix {
  std::string summary;  // what to change
  std::string
      snippet;  // code (Python) when the change is mechanical; may be empty
  std::string validation;  // what to watch to see that it worked
};

struct TrainingCause {
  // "learning_rate_too_high" | "bad_initialization" | "input_out_of_range" |
  // "missing_gradient_clipping" | "fp16_overflow" | "loss_scale" |
  // "dead_relu" | "vanishing_gradients"
  std::string cause;
  std::string title;  // short, for people
  int32_t layer = -1;
  std::string layer_name;
  int64_t step = -1;
  double confidence = 0;  // 0-1
  std::vector<TrainingEvidence> evidence;
  TrainingFix fix;
};

struct TrainingChainLink {
  int32_t layer = 0;
  std::string layer_name;
  int64_t node = -1;
  int64_t step = -1;
  std::string role;       // "producer" | "propagator"
  std::string direction;  // "forward" (activations) | "backward" (gradients)
  std::string evidence;
};

struct TrainingTriggerInfo {
  int64_t step = 0;
  std::string trigger;
  int32_t layer = -1;
  std::string layer_name;
  double value = std::numeric_limits<double>::quiet_NaN();
  double threshold = std::numeric_limits<double>::quiet_NaN();
  std::string detail;
};

struct TrainingDiagnosisResult : AnalysisResult {
  // The snapshot
  std::string path, created, host, torch, model, optimizer, status;
  std::vector<std::string> command;
  int64_t first_step = 0, last_step = -1;
  int64_t anomaly_step = -1;  // -1: no trigger fired
  int64_t capture_window = 0;
  std::vector<int64_t> captured_steps;
  std::vector<TrainingTriggerInfo> triggers;
  // Thresholds the health used (the snapshot's, unless overridden).
  double vanishing = 1e-5, exploding = 50, dead = 0.3;

  double score = 100;  // the model's score at the anomaly step (or last)
  std::vector<TrainingLayerHealth>
      layers;  // layers with parameters or activations, forward order
  std::vector<TrainingStepHealth> steps;  // every step, ascending
  // Heat map layer x step: heatmap[i][j] = score of layers[i] at steps[j]
  // (NaN when the layer was not measured at that step).
  std::vector<std::vector<double>> heatmap;
  std::vector<int32_t> problem_layers;  // layer ids, worst first
  std::vector<TrainingChainLink>
      chain;  // producer first, then propagators in order
  std::vector<TrainingCause> causes;  // most likely first

  std::string_view analysis_id() const override { return "training_diagnosis"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
