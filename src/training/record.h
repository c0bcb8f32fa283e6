#pragma once

// The training data model: what a training snapshot holds, as the
// analyses read it (docs/reference/training-snapshot.md). Filled by the
// training_snapshot importer, read by src/analysis/training; analyses never
// see SQLite. Per-layer, per-step metrics are columns of one flat array
// each, indexed [step_index * layer_count + layer]; NaN = not measured.
// Tensors of the captured steps (activations, weights, attention, ...) are
// not held here: the session reads them from the snapshot on demand.

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace mi::training {

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct TrainingLayer {
  std::string name;     // module path ("encoder.layers.0.linear1"; "" = root)
  std::string type;     // "Linear", "LayerNorm", ...
  int32_t parent = -1;  // enclosing layer (-1: none)
  int32_t forward_order = -1;  // rank of its first forward call (-1: never)
  int64_t param_count = 0;     // its own parameters' elements
  // The snapshot's `attributes` JSON as name -> text value (numbers as
  // written): in_features, out_features, normalized_shape, eps, num_heads,
  // fan_in, fan_out, init_std, ...
  std::map<std::string, std::string> attributes;
  // The framework node the importer made for it (model NodeId value), or -1.
  int64_t node = -1;
};

struct TrainingStep {
  int64_t step = 0;
  double loss = kNotMeasured;  // NaN when not finite or not measured
  bool loss_nonfinite = false;
  double grad_norm = kNotMeasured;
  int64_t grad_nonfinite = 0;
  double lr = kNotMeasured;
  double loss_scale = kNotMeasured;
  int8_t clipped = -1;  // 1 / 0 / -1 unknown
  int64_t elapsed_ns = 0;
  bool captured = false;
};

struct TriggerHit {
  int64_t step = 0;
  std::string trigger;
  int32_t layer = -1;  // -1: the whole model
  double value = kNotMeasured;
  double threshold = kNotMeasured;
  std::string detail;
};

struct OptimizerGroup {
  double lr = kNotMeasured;
  double momentum = kNotMeasured;
  double weight_decay = kNotMeasured;
  std::vector<int32_t> layers;
};

// One column per layer_steps column of the snapshot.
struct LayerStepColumns {
  std::vector<double> weight_norm, grad_norm, update_norm, update_ratio,
      grad_zero_fraction, dead_fraction;
  std::vector<int64_t> grad_nan, grad_inf;
  std::vector<double> act_abs_max, act_rms, act_mean, act_std,
      act_zero_fraction;
  std::vector<int64_t> act_nan, act_inf;
  std::vector<std::string> act_dtype;
  std::vector<double> in_abs_max, in_rms;
  std::vector<int64_t> in_nan, in_inf;
  std::vector<double> gout_norm, gout_abs_max;
  std::vector<int64_t> gout_nan, gout_inf;
};

struct TrainingThresholds {
  double vanishing = 1e-5;
  double exploding = 50;
  double dead = 0.3;
  double grad_norm = 100;
  double loss_spike_factor = 3;
  int64_t loss_spike_window = 10;
  double act_range = 1e4;
};

struct TrainingRecord {
  std::string path;  // the snapshot file
  int64_t version = 1;
  std::map<std::string, std::string> meta;  // every meta key as written
  std::string model, optimizer;
  std::vector<OptimizerGroup> optimizer_groups;
  std::vector<std::string> triggers_armed;
  TrainingThresholds thresholds;
  int64_t capture_window = 0;
  int64_t anomaly_step = -1;  // -1: no trigger fired
  int64_t window_first = -1, window_last = -1;
  std::string status;

  std::vector<TrainingLayer> layers;
  std::vector<std::pair<int32_t, int32_t>> edges;  // forward data flow
  std::vector<TrainingStep> steps;                 // ascending step
  LayerStepColumns metrics;  // [step_index * layers.size() + layer]
  std::vector<TriggerHit> hits;

  size_t layer_count() const { return layers.size(); }
  size_t step_count() const { return steps.size(); }
  size_t at(size_t step_index, size_t layer) const {
    return step_index * layers.size() + layer;
  }
  bool empty() const { return steps.empty(); }
};

}  // namespace mi::training
