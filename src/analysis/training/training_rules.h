#pragma once

// The pieces of the training diagnosis below the result: reading the
// record's columns, the layers it scores, the propagation graph between
// them, and the root-cause rules (docs/design/training-diagnosis.md
// "Root cause"). Internal to src/analysis/training.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/training/training_diagnosis.h"
#include "model_inspector/results/training.h"
#include "training/record.h"

namespace mi::analysis {

// The largest finite float16 value.
inline constexpr double kFp16Max = 65504;
// A layer (or the model) scoring below this at some step is a problem.
inline constexpr double kProblemScore = 70;

// A column's value, NaN / 0 / "" when the column is short (not filled).
double Col(const std::vector<double>& c, size_t i);
int64_t Col(const std::vector<int64_t>& c, size_t i);
std::string Col(const std::vector<std::string>& c, size_t i);

// Cell i (record.at(step, layer)): anything measured; a NaN or Inf counted
// in its activation, its input's... gradients; its activation in float16.
bool Measured(const training::TrainingRecord& r, size_t i);
bool Nonfinite(const training::TrainingRecord& r, size_t i);
bool IsHalf(const training::TrainingRecord& r, size_t i);

// The record with what the rules ask of it often.
class RecordView {
 public:
  explicit RecordView(const training::TrainingRecord& r);

  const training::TrainingRecord& record() const { return r_; }
  // The layers scored, in forward order (never-called ones last): leaves
  // and layers with parameters of their own; containers without
  // parameters of their own are left out.
  const std::vector<int32_t>& considered() const { return considered_; }
  // Index of a layer in considered(), or -1.
  int32_t IndexOf(int32_t layer) const;
  std::optional<size_t> IndexOfStep(int64_t step) const;
  // The considered layers fed by / feeding `layer` (forward data flow),
  // through left-out containers.
  const std::vector<int32_t>& Consumers(int32_t layer) const {
    return consumers_[layer];
  }
  const std::vector<int32_t>& Producers(int32_t layer) const {
    return producers_[layer];
  }
  // The median of a column's finite values of `layer` over the `window`
  // steps before step index `si`; NaN when there are none.
  double HistoryMedian(const std::vector<double>& column, size_t si,
                       int32_t layer, size_t window = 10) const;
  double Value(const std::vector<double>& column, size_t si,
               int32_t layer) const {
    return Col(column, r_.at(si, layer));
  }

 private:
  const training::TrainingRecord& r_;
  std::vector<int32_t> considered_;
  std::vector<int32_t> index_;
  std::vector<std::vector<int32_t>> consumers_, producers_;
};

struct RootCause {
  std::vector<TrainingCause> causes;  // most likely first
  std::vector<TrainingChainLink> chain;
};

// The causes of the anomaly at step index `anomaly` (candidates from steps
// up to it), ranked, and the propagation chain of the first.
// cells[li][si]: the health of considered()[li] at step index si.
RootCause FindRootCause(const RecordView& view, const TrainingHealthOptions& o,
                        const std::vector<std::vector<CellHealth>>& cells,
                        size_t anomaly);

}  // namespace mi::analysis
