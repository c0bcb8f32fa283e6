#pragma once

// The training diagnosis (analysis "training_diagnosis";
// docs/design/training-diagnosis.md): gradient health of every layer at
// every step of a training snapshot's record, a 0-100 score per layer and
// step and for the model, the anomaly timeline, and the root cause of the
// first anomaly: the layer that produced it (its inputs healthy, its
// outputs not), the layers it propagated through, and the causes ranked
// with evidence, a confidence and a fix. Reads only the record
// (src/training/record.h); never the snapshot file.

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "model_inspector/results/training.h"
#include "training/record.h"

namespace mi::analysis {

// What the health is measured against. The first three default to the
// snapshot's thresholds (the monitor's triggers used the same).
struct TrainingHealthOptions {
  double vanishing = 1e-5;  // a layer's gradient norm below this: vanishing
  double exploding = 50;    // ... above this: exploding
  double dead = 0.3;        // dead_fraction at or above this: dead units
  // update_norm / weight_norm at or above this: the step moved the weights
  // too far (healthy ~1e-3, Karpathy's rule of thumb; 100x that is
  // flagged).
  double update_ratio = 0.1;
  double act_range = 1e4;  // |activation| above this: out of range
};

// The options of a record: its thresholds, the update-ratio default.
TrainingHealthOptions HealthOptionsOf(const training::TrainingRecord& r);

// Health flags of one layer at one step (bit set), as named in
// TrainingLayerHealth::flags.
enum TrainingFlag : uint32_t {
  kFlagVanishing = 1u << 0,
  kFlagExploding = 1u << 1,
  kFlagDead = 1u << 2,
  kFlagNonfinite = 1u << 3,
  kFlagUpdateRatio = 1u << 4,
  kFlagActivationRange = 1u << 5,
  kFlagFp16Range = 1u << 6,
};

struct CellHealth {
  double score = 100;  // NaN when nothing was measured
  uint32_t flags = 0;
};

// The score of layer `layer` at step index `step_index`
// (docs/design/training-diagnosis.md "Score").
CellHealth ScoreCell(const training::TrainingRecord& r, size_t step_index,
                     size_t layer, const TrainingHealthOptions& o);

// The whole diagnosis.
TrainingDiagnosisResult DiagnoseTraining(const training::TrainingRecord& r,
                                         const TrainingHealthOptions& o);

const AnalysisDescriptor& TrainingDiagnosisAnalysis();

}  // namespace mi::analysis
