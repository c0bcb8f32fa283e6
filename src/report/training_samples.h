#pragma once

// Training diagnoses filled in by hand, for the training report's tests
// (training_report_test.cc): the figures are written out in
// training_samples.cc with what they mean, so the tests state what the
// page must show without running the diagnosis.

#include "model_inspector/results/training.h"
#include "report/training_report.h"

namespace mi::report::samples {

// A small transformer-like model of 5 layers in forward order
// embed -> encoder.norm -> encoder.fc1 -> encoder.fc2 -> head, data edges
// along that line (TrainingSampleGraph). 10 steps (0..9); the loss spikes
// at step 6 (a loss_spike trigger), steps 3..9 captured (window 3). The
// embedding's output is out of range: the chain runs forward from embed
// (producer) through encoder.norm and encoder.fc1 (propagators). Scores:
// every layer 95 at every step, except embed 5 at steps 6..9, encoder.norm
// 40 at step 6, encoder.fc1 65 at step 6, and head not measured at step 0.
// Two causes: input_out_of_range (0.8) with a snippet, then
// bad_initialization (0.15). The model's name holds markup.
TrainingDiagnosisResult TrainingSample();
TrainingGraph TrainingSampleGraph();
// No trigger fired: 4 steps, 2 layers, every score 98, no chain, no cause.
TrainingDiagnosisResult HealthyTrainingSample();

}  // namespace mi::report::samples
