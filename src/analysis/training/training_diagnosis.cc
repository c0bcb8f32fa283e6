#include "analysis/training/training_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/training/training_rules.h"

namespace mi::analysis {
namespace {

using training::TrainingRecord;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Penalties of the score (docs/design/training-diagnosis.md "Score").
double ExplodingPenalty(double g, double ceiling) {
  return std::min(60.0, 30 + 15 * std::log10(g / ceiling));
}
double DeadPenalty(double d, double alert) {
  if (alert >= 1) return 20;
  return std::min(60.0, 20 + 40 * (d - alert) / (1 - alert));
}
double UpdateRatioPenalty(double u, double alert) {
  return std::min(50.0, 20 + 15 * std::log10(u / alert));
}
double RangePenalty(double a, double limit) {
  return std::min(50.0, 30 + 10 * std::log10(a / limit));
}

std::string FlagName(uint32_t bit) {
  switch (bit) {
    case kFlagVanishing:
      return "vanishing";
    case kFlagExploding:
      return "exploding";
    case kFlagDead:
      return "dead";
    case kFlagNonfinite:
      return "nonfinite";
    case kFlagUpdateRatio:
      return "update_ratio";
    case kFlagActivationRange:
      return "activation_range";
    case kFlagFp16Range:
      return "fp16_range";
    default:
      return "";
  }
}

std::vector<std::string> FlagNames(uint32_t flags) {
  std::vector<std::string> out;
  for (uint32_t bit = 1; bit <= kFlagFp16Range; bit <<= 1) {
    if (flags & bit) out.push_back(FlagName(bit));
  }
  return out;
}

std::string MetaOr(const TrainingRecord& r, const std::string& key) {
  auto it = r.meta.find(key);
  return it == r.meta.end() ? std::string() : it->second;
}

// meta "command": a JSON array of strings; anything else is kept as one
// string.
std::vector<std::string> CommandOf(const TrainingRecord& r) {
  std::string text = MetaOr(r, "command");
  std::vector<std::string> out;
  if (text.empty()) return out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_array()) {
    for (const auto& item : j) {
      out.push_back(item.is_string() ? item.get<std::string>() : item.dump());
    }
    return out;
  }
  out.push_back(text);
  return out;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? kNaN : sum / static_cast<double>(v.size());
}

}  // namespace

TrainingHealthOptions HealthOptionsOf(const TrainingRecord& r) {
  TrainingHealthOptions o;
  o.vanishing = r.thresholds.vanishing;
  o.exploding = r.thresholds.exploding;
  o.dead = r.thresholds.dead;
  o.act_range = r.thresholds.act_range;
  return o;
}

CellHealth ScoreCell(const TrainingRecord& r, size_t si, size_t layer,
                     const TrainingHealthOptions& o) {
  size_t i = r.at(si, layer);
  CellHealth h;
  if (!Measured(r, i)) {
    h.score = kNaN;
    return h;
  }
  const training::LayerStepColumns& m = r.metrics;
  if (Nonfinite(r, i)) {
    h.score = 0;
    h.flags |= kFlagNonfinite;
  }
  double penalty = 0;
  double g = Col(m.grad_norm, i);
  bool has_params = r.layers[layer].param_count > 0;
  if (std::isfinite(g) && g > o.exploding) {
    h.flags |= kFlagExploding;
    penalty += ExplodingPenalty(g, o.exploding);
  }
  if (has_params && std::isfinite(g) && g < o.vanishing) {
    h.flags |= kFlagVanishing;
    penalty += 30;
  }
  double d = Col(m.dead_fraction, i);
  if (std::isfinite(d) && d >= o.dead) {
    h.flags |= kFlagDead;
    penalty += DeadPenalty(d, o.dead);
  }
  double u = Col(m.update_ratio, i);
  if (std::isfinite(u) && u >= o.update_ratio) {
    h.flags |= kFlagUpdateRatio;
    penalty += UpdateRatioPenalty(u, o.update_ratio);
  } else if (std::isfinite(u) && u > o.update_ratio / 10) {
    // A little high (between 10x and 100x the ~1e-3 of a healthy step):
    // up to 10 points, no flag.
    penalty += 10 * std::log10(u / (o.update_ratio / 10));
  }
  double a = Col(m.act_abs_max, i);
  if (std::isfinite(a) && a > o.act_range) {
    h.flags |= kFlagActivationRange;
    penalty += RangePenalty(a, o.act_range);
  }
  if (IsHalf(r, i) && std::isfinite(a) && a >= kFp16Max / 2) {
    h.flags |= kFlagFp16Range;
    penalty += 40;
  }
  if (h.flags & kFlagNonfinite) return h;
  h.score = std::max(0.0, 100 - penalty);
  return h;
}

TrainingDiagnosisResult DiagnoseTraining(const TrainingRecord& r,
                                         const TrainingHealthOptions& o) {
  TrainingDiagnosisResult out;
  out.path = r.path;
  out.created = MetaOr(r, "created");
  out.host = MetaOr(r, "host");
  out.torch = MetaOr(r, "torch");
  out.command = CommandOf(r);
  out.model = r.model;
  out.optimizer = r.optimizer;
  out.status = r.status;
  out.anomaly_step = r.anomaly_step;
  out.capture_window = r.capture_window;
  out.vanishing = o.vanishing;
  out.exploding = o.exploding;
  out.dead = o.dead;
  if (!r.steps.empty()) {
    out.first_step = r.steps.front().step;
    out.last_step = r.steps.back().step;
  }
  for (const training::TrainingStep& s : r.steps) {
    if (s.captured) out.captured_steps.push_back(s.step);
  }
  for (const training::TriggerHit& h : r.hits) {
    TrainingTriggerInfo t;
    t.step = h.step;
    t.trigger = h.trigger;
    t.layer = h.layer;
    if (h.layer >= 0 && static_cast<size_t>(h.layer) < r.layers.size()) {
      t.layer_name = r.layers[h.layer].name;
    }
    t.value = h.value;
    t.threshold = h.threshold;
    t.detail = h.detail;
    out.triggers.push_back(std::move(t));
  }

  RecordView view(r);
  const std::vector<int32_t>& layers = view.considered();
  const size_t steps = r.step_count();

  // Every cell's health; the model's score per step.
  std::vector<std::vector<CellHealth>> cells(layers.size());
  for (size_t li = 0; li < layers.size(); ++li) {
    cells[li].resize(steps);
    for (size_t si = 0; si < steps; ++si) {
      cells[li][si] = ScoreCell(r, si, layers[li], o);
    }
  }
  std::vector<double> model_scores(steps, 100);
  for (size_t si = 0; si < steps; ++si) {
    std::vector<double> scores;
    for (size_t li = 0; li < layers.size(); ++li) {
      if (std::isfinite(cells[li][si].score)) {
        scores.push_back(cells[li][si].score);
      }
    }
    double score = 100;
    if (!scores.empty()) {
      score = 0.5 * *std::min_element(scores.begin(), scores.end()) +
              0.5 * Mean(scores);
    }
    if (r.steps[si].loss_nonfinite) score = 0;
    model_scores[si] = score;
  }

  // The step the scores are given at: the anomaly, else the last.
  size_t focus = steps == 0 ? 0 : steps - 1;
  if (r.anomaly_step >= 0) {
    std::optional<size_t> a = view.IndexOfStep(r.anomaly_step);
    if (a) focus = *a;
  }
  out.score = steps == 0 ? 100 : model_scores[focus];

  for (size_t si = 0; si < steps; ++si) {
    const training::TrainingStep& s = r.steps[si];
    TrainingStepHealth sh;
    sh.step = s.step;
    sh.loss = s.loss;
    sh.grad_norm = s.grad_norm;
    sh.lr = s.lr;
    sh.score = model_scores[si];
    sh.captured = s.captured;
    std::set<std::string> seen;
    for (const training::TriggerHit& h : r.hits) {
      if (h.step == s.step && seen.insert(h.trigger).second) {
        sh.events.push_back(h.trigger);
      }
    }
    out.steps.push_back(std::move(sh));
  }

  std::vector<std::pair<double, size_t>> worst;  // (worst score, li)
  for (size_t li = 0; li < layers.size(); ++li) {
    const training::TrainingLayer& L = r.layers[layers[li]];
    TrainingLayerHealth lh;
    lh.layer = layers[li];
    lh.name = L.name;
    lh.type = L.type;
    lh.node = L.node;
    lh.forward_order = L.forward_order;
    uint32_t flags = 0;
    std::vector<double> row(steps, kNaN);
    for (size_t si = 0; si < steps; ++si) {
      const CellHealth& c = cells[li][si];
      row[si] = c.score;
      flags |= c.flags;
      if (std::isfinite(c.score) && c.score < lh.worst_score) {
        lh.worst_score = c.score;
        lh.worst_step = r.steps[si].step;
      }
    }
    if (steps > 0 && std::isfinite(cells[li][focus].score)) {
      lh.score = cells[li][focus].score;
    }
    if (lh.worst_step < 0 && steps > 0) lh.worst_step = r.steps.back().step;
    lh.flags = FlagNames(flags);
    if (flags != 0 || lh.worst_score < kProblemScore) {
      worst.emplace_back(lh.worst_score, li);
    }
    out.layers.push_back(std::move(lh));
    out.heatmap.push_back(std::move(row));
  }
  std::stable_sort(
      worst.begin(), worst.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [score, li] : worst) {
    out.problem_layers.push_back(layers[li]);
  }

  // Root cause: only when something went wrong (a trigger fired, or the
  // model's score fell below kProblemScore at some step).
  double lowest = 100;
  size_t lowest_at = 0;
  for (size_t si = 0; si < steps; ++si) {
    if (model_scores[si] < lowest) {
      lowest = model_scores[si];
      lowest_at = si;
    }
  }
  std::optional<size_t> anomaly;
  if (r.anomaly_step >= 0) {
    anomaly = view.IndexOfStep(r.anomaly_step);
    // The anomaly step is not in the steps table: the last one before it.
    if (!anomaly) {
      for (size_t si = 0; si < steps; ++si) {
        if (r.steps[si].step <= r.anomaly_step) anomaly = si;
      }
    }
  } else if (steps > 0 && lowest < kProblemScore) {
    anomaly = lowest_at;
  }
  if (anomaly) {
    RootCause rc = FindRootCause(view, o, cells, *anomaly);
    out.causes = std::move(rc.causes);
    out.chain = std::move(rc.chain);
  }
  return out;
}

const AnalysisDescriptor& TrainingDiagnosisAnalysis() {
  static const AnalysisDescriptor d = [] {
    ParameterSpec vanishing{
        "vanishing", ParameterType::kDouble, "1e-5",
        "a layer's gradient norm below this is vanishing; not given: the "
        "snapshot's threshold"};
    vanishing.min = 0;
    ParameterSpec exploding{
        "exploding", ParameterType::kDouble, "50",
        "a layer's gradient norm above this is exploding; not given: the "
        "snapshot's threshold"};
    exploding.min = 0;
    ParameterSpec dead{"dead", ParameterType::kDouble, "0.3",
                       "a layer whose dead_fraction (share of output units "
                       "with an all-zero gradient) is at least this has dead "
                       "units; not given: the snapshot's threshold"};
    dead.min = 0;
    dead.max = 1;
    ParameterSpec update_ratio{
        "update_ratio", ParameterType::kDouble, "0.1",
        "update_norm / weight_norm of a step at or above this is flagged "
        "(healthy is about 1e-3)"};
    update_ratio.min = 0;
    return AnalysisDescriptor{
        .id = "training_diagnosis",
        .title = "Training diagnosis",
        .summary =
            "of a training snapshot (model_inspector.train): gradient health "
            "per layer and step (vanishing, exploding, dead units, update "
            "ratio, non-finite values) as a 0-100 score and a heat map, the "
            "anomaly timeline, and the root cause of the first anomaly: the "
            "layer that produced it, the layers it propagated through, and "
            "the causes ranked with evidence, confidence and a fix "
            "(docs/design/training-diagnosis.md)",
        .needs = kNeedsTraining,
        .parameters = {vanishing, exploding, dead, update_ratio},
        .in_export = false,
        .fields = {},
        .reference = "docs/reference/schemas/training-diagnosis.schema.json",
        .run = [](const AnalysisContext& ctx, const ParsedParams& params)
            -> StatusOr<std::unique_ptr<AnalysisResult>> {
          const TrainingRecord& r = *ctx.training;
          TrainingHealthOptions o = HealthOptionsOf(r);
          if (params.Given("vanishing"))
            o.vanishing = params.Double("vanishing");
          if (params.Given("exploding"))
            o.exploding = params.Double("exploding");
          if (params.Given("dead")) o.dead = params.Double("dead");
          o.update_ratio = params.Double("update_ratio");
          return std::unique_ptr<AnalysisResult>(
              std::make_unique<TrainingDiagnosisResult>(
                  DiagnoseTraining(r, o)));
        }};
  }();
  return d;
}

}  // namespace mi::analysis
