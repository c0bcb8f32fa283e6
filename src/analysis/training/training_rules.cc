#include "analysis/training/training_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace mi::analysis {

using training::TrainingRecord;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The update ratio of a healthy step (Karpathy, "A Recipe for Training
// Neural Networks" / CS231n: updates about 1e-3 of the weights).
constexpr double kHealthyUpdateRatio = 1e-3;
// A value this many times its own recent median has jumped.
constexpr double kJump = 10;

bool IsFinite(double v) { return std::isfinite(v); }

std::string G(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : "inf";
  return fmt::format("{:.3g}", v);
}

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}
bool IsNorm(const std::string& type) { return Contains(type, "Norm"); }
bool IsRelu(const std::string& type) {
  return type == "ReLU" || type == "ReLU6" || type == "Hardtanh";
}
// Layers whose weight's scale follows fan-in (Linear, Conv*, ...); norms
// (weight 1) and embeddings (N(0, 1)) do not.
bool FanInScaled(const std::string& type) {
  return !IsNorm(type) && !Contains(type, "Embedding");
}

double Attribute(const training::TrainingLayer& L, const std::string& key) {
  auto it = L.attributes.find(key);
  if (it == L.attributes.end()) return kNaN;
  const char* begin = it->second.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  return end == begin ? kNaN : v;
}

double Median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Candidate {
  TrainingCause cause;
  size_t si = 0;
  std::string direction;  // "forward" | "backward"
};

class Rules {
 public:
  Rules(const RecordView& view, const TrainingHealthOptions& o,
        const std::vector<std::vector<CellHealth>>& cells, size_t anomaly)
      : v_(view), r_(view.record()), o_(o), cells_(cells), anomaly_(anomaly) {}

  std::vector<Candidate> Run() {
    for (int32_t layer : v_.considered()) {
      Fp16(layer);
      LearningRate(layer);
      BadInit(layer);
      InputRange(layer);
      DeadRelu(layer);
      Vanishing(layer);
    }
    Clipping();
    LossScale();
    return std::move(out_);
  }

 private:
  const training::TrainingLayer& L(int32_t layer) const {
    return r_.layers[layer];
  }
  int64_t StepOf(size_t si) const { return r_.steps[si].step; }
  double V(const std::vector<double>& c, size_t si, int32_t layer) const {
    return v_.Value(c, si, layer);
  }
  TrainingEvidence Ev(std::string metric, int32_t layer, size_t si,
                      double value, double expected, std::string text) const {
    TrainingEvidence e;
    e.metric = std::move(metric);
    e.layer = layer;
    e.step = StepOf(si);
    e.value = value;
    e.expected = expected;
    e.text = std::move(text);
    return e;
  }
  Candidate& Add(std::string cause, std::string title, int32_t layer, size_t si,
                 double confidence, std::string direction) {
    Candidate c;
    c.cause.cause = std::move(cause);
    c.cause.title = std::move(title);
    c.cause.layer = layer;
    if (layer >= 0) c.cause.layer_name = L(layer).name;
    c.cause.step = StepOf(si);
    c.cause.confidence = std::clamp(confidence, 0.0, 1.0);
    c.si = si;
    c.direction = std::move(direction);
    out_.push_back(std::move(c));
    return out_.back();
  }
  std::string Name(int32_t layer) const {
    const std::string& n = L(layer).name;
    return n.empty() ? std::string("(root)") : n;
  }

  // fp16_overflow: a float16 activation turned non-finite while the
  // layer's input was finite (or came within 2x of 65504).
  void Fp16(int32_t layer) {
    const auto& m = r_.metrics;
    for (size_t si = 0; si <= anomaly_; ++si) {
      size_t i = r_.at(si, layer);
      if (!IsHalf(r_, i)) continue;
      bool nonfinite = Col(m.act_inf, i) > 0 || Col(m.act_nan, i) > 0;
      double abs_max = Col(m.act_abs_max, i);
      bool near = IsFinite(abs_max) && abs_max >= kFp16Max / 2;
      if (!nonfinite && !near) continue;
      bool input_finite = Col(m.in_inf, i) == 0 && Col(m.in_nan, i) == 0;
      if (nonfinite && !input_finite) continue;  // a propagator
      Candidate& c = Add("fp16_overflow", "float16 overflow", layer, si,
                         nonfinite ? 0.95 : 0.6, "forward");
      if (nonfinite) {
        c.cause.evidence.push_back(
            Ev("act_inf", layer, si, static_cast<double>(Col(m.act_inf, i)), 0,
               fmt::format("{} stores its output in float16 and it held {} inf "
                           "and {} NaN values at step {} while its input was "
                           "finite: float16 ends at 65504.",
                           Name(layer), Col(m.act_inf, i), Col(m.act_nan, i),
                           StepOf(si))));
      } else {
        c.cause.evidence.push_back(Ev(
            "act_abs_max", layer, si, abs_max, kFp16Max,
            fmt::format("{}'s float16 output reached |x| = {} at step {}, "
                        "within a factor 2 of float16's largest value 65504.",
                        Name(layer), G(abs_max), StepOf(si))));
      }
      // The largest finite value before: how it approached the limit.
      for (size_t back = si; back-- > 0;) {
        double prev = V(m.act_abs_max, back, layer);
        if (!IsFinite(prev)) continue;
        c.cause.evidence.push_back(
            Ev("act_abs_max", layer, back, prev, kFp16Max,
               fmt::format("At step {} its largest |x| was {} ({}% of "
                           "65504).",
                           StepOf(back), G(prev), G(100 * prev / kFp16Max))));
        break;
      }
      c.cause.fix = {
          fmt::format("Keep {} in float32 (exclude it from autocast / do not "
                      "call .half() on it), or bound its values before the "
                      "cast (a normalisation or a clamp); bfloat16 has "
                      "float32's range.",
                      Name(layer)),
          fmt::format(
              "layer = model.get_submodule(\"{}\")\n"
              "layer.float()  # compute and store this layer in float32\n"
              "# under torch.autocast: run it with autocast disabled\n"
              "with torch.autocast(device_type=\"cuda\", enabled=False):\n"
              "    y = layer(x.float())",
              L(layer).name),
          fmt::format("act_inf and act_nan of {} stay 0 and its act_abs_max "
                      "stays below 32752 (half of 65504); no nan/inf trigger.",
                      Name(layer))};
      return;
    }
  }

  // learning_rate_too_high: a step moved the layer's weights far more than
  // the ~1e-3 of a healthy step, because of the step size (the update per
  // unit of gradient jumped, or the lr did) rather than the gradient.
  void LearningRate(int32_t layer) {
    if (L(layer).param_count <= 0) return;
    const auto& m = r_.metrics;
    for (size_t si = 0; si <= anomaly_; ++si) {
      double u = V(m.update_ratio, si, layer);
      if (!IsFinite(u) || u < o_.update_ratio) continue;
      double un = V(m.update_norm, si, layer);
      double gn = V(m.grad_norm, si, layer);
      double eff = un / gn;  // the update per unit of gradient
      std::vector<double> hist;
      for (size_t b = si >= 10 ? si - 10 : 0; b < si; ++b) {
        double e = V(m.update_norm, b, layer) / V(m.grad_norm, b, layer);
        if (IsFinite(e) && e > 0) hist.push_back(e);
      }
      double eff_hist = Median(hist);
      double eff_jump = eff / eff_hist;
      double lr = r_.steps[si].lr;
      double lr_prev = si > 0 ? r_.steps[si - 1].lr : kNaN;
      bool lr_jump = IsFinite(lr) && IsFinite(lr_prev) && lr_prev > 0 &&
                     lr / lr_prev >= kJump;
      // The lr of the layer's optimizer group against the others'.
      double group_lr = kNaN;
      std::vector<double> others;
      for (const training::OptimizerGroup& g : r_.optimizer_groups) {
        bool holds = std::find(g.layers.begin(), g.layers.end(), layer) !=
                     g.layers.end();
        if (holds) {
          group_lr = g.lr;
        } else if (IsFinite(g.lr)) {
          others.push_back(g.lr);
        }
      }
      double group_factor = group_lr / Median(others);

      double conf = 0.45;
      if (IsFinite(eff_jump) && eff_jump >= kJump) conf += 0.35;
      if (lr_jump) conf += 0.1;
      if (IsFinite(group_factor) && group_factor >= kJump) conf += 0.05;
      Candidate& c = Add("learning_rate_too_high", "Learning rate too high",
                         layer, si, std::min(conf, 0.97), "forward");
      c.cause.evidence.push_back(
          Ev("update_ratio", layer, si, u, kHealthyUpdateRatio,
             fmt::format("At step {} the update of {} was {} of its weights' "
                         "norm; a healthy step moves about 1e-3 of it.",
                         StepOf(si), Name(layer), G(u))));
      if (IsFinite(eff_jump) && eff_jump >= kJump) {
        c.cause.evidence.push_back(
            Ev("update_over_grad", layer, si, eff, eff_hist,
               fmt::format("Its update per unit of gradient (update_norm / "
                           "grad_norm, the effective step size) jumped {}x, "
                           "from {} to {}: the step size changed, not the "
                           "gradient.",
                           G(eff_jump), G(eff_hist), G(eff))));
      }
      if (lr_jump) {
        c.cause.evidence.push_back(
            Ev("lr", -1, si, lr, lr_prev,
               fmt::format("The largest learning rate went from {} to {} at "
                           "step {}.",
                           G(lr_prev), G(lr), StepOf(si))));
      }
      if (IsFinite(group_factor) && group_factor >= kJump) {
        c.cause.evidence.push_back(
            Ev("group_lr", layer, si, group_lr, Median(others),
               fmt::format("The optimizer group holding {} has lr {}, {}x the "
                           "other groups' {}.",
                           Name(layer), G(group_lr), G(group_factor),
                           G(Median(others)))));
      }
      double factor = std::max(10.0, u / kHealthyUpdateRatio);
      c.cause.fix = {
          fmt::format("Lower the learning rate of the parameter group that "
                      "holds {} by about {}x (to bring its update ratio to "
                      "~1e-3), or warm the lr up instead of jumping it.",
                      Name(layer), G(factor)),
          fmt::format("held = {{id(p) for p in "
                      "model.get_submodule(\"{}\").parameters()}}\n"
                      "for group in optimizer.param_groups:\n"
                      "    if any(id(p) in held for p in group[\"params\"]):\n"
                      "        group[\"lr\"] /= {}",
                      L(layer).name, G(factor)),
          fmt::format("update_ratio of {} stays around 1e-3 (below {}) at "
                      "every step and the loss shows no spike after step {}.",
                      Name(layer), G(o_.update_ratio), StepOf(si))};
      return;
    }
  }

  // bad_initialization: at the first step the layer's weight std (when the
  // monitor attached) is 10x off 1/sqrt(fan_in), and its output's rms
  // grows (or shrinks) 10x over its input's.
  void BadInit(int32_t layer) {
    const training::TrainingLayer& l = L(layer);
    if (l.param_count <= 0 || !FanInScaled(l.type) || r_.steps.empty()) {
      return;
    }
    const auto& m = r_.metrics;
    const size_t si = 0;
    double fan_in = Attribute(l, "fan_in");
    double init_std = Attribute(l, "init_std");
    double expected = fan_in > 0 ? 1 / std::sqrt(fan_in) : kNaN;
    double ratio = init_std / expected;
    double gain = V(m.act_rms, si, layer) / V(m.in_rms, si, layer);
    bool std_off =
        IsFinite(ratio) && ratio > 0 && (ratio >= kJump || ratio <= 1 / kJump);
    bool gain_off =
        IsFinite(gain) && gain > 0 && (gain >= kJump || gain <= 1 / kJump);
    double conf = 0;
    if (std_off) {
      double off = std::max(ratio, 1 / ratio);
      conf = 0.6 + std::min(0.2, 0.2 * std::log10(off / kJump));
      if (gain_off && (gain > 1) == (ratio > 1)) conf += 0.15;
    } else if (!IsFinite(ratio) && IsFinite(gain) && gain >= 3 * kJump) {
      conf = 0.45;  // no init_std recorded: the activation growth alone
    } else {
      return;
    }
    Candidate& c = Add("bad_initialization", "Bad weight initialisation", layer,
                       si, std::min(conf, 0.95), "forward");
    if (std_off) {
      c.cause.evidence.push_back(
          Ev("init_std", layer, si, init_std, expected,
             fmt::format("{}'s weight std when training started was {}, {}x "
                         "the 1/sqrt(fan_in) = {} of fan-in-scaled "
                         "initialisations (PyTorch's default 1/sqrt(3 fan_in), "
                         "Kaiming sqrt(2/fan_in), fan_in = {}).",
                         Name(layer), G(init_std), G(ratio), G(expected),
                         G(fan_in))));
    }
    if (IsFinite(gain)) {
      c.cause.evidence.push_back(
          Ev("act_gain", layer, si, gain, 1,
             fmt::format("At step {} its output's rms was {}x its input's "
                         "({} over {}); a well-initialised layer keeps it "
                         "within about 0.1-10x.",
                         StepOf(si), G(gain), G(V(m.act_rms, si, layer)),
                         G(V(m.in_rms, si, layer)))));
    }
    double kaiming = IsFinite(fan_in) ? std::sqrt(2 / fan_in) : kNaN;
    c.cause.fix = {
        fmt::format("Re-initialise {}'s weight with a fan-in-scaled "
                    "initialisation (Kaiming for ReLU layers, Xavier for "
                    "tanh / linear) instead of its current scale.",
                    Name(layer)),
        fmt::format("layer = model.get_submodule(\"{}\")\n"
                    "torch.nn.init.kaiming_normal_(layer.weight, "
                    "nonlinearity=\"relu\")\n"
                    "if layer.bias is not None:\n"
                    "    torch.nn.init.zeros_(layer.bias)",
                    l.name),
        fmt::format("init_std of {} is about {} (sqrt(2/fan_in)) and at "
                    "step 0 its act_rms is within 0.1-10x its in_rms; no "
                    "grad_norm trigger in the first steps.",
                    Name(layer), G(kaiming))};
  }

  // input_out_of_range: the layer's input jumped far beyond its recent
  // range (and beyond O(1)) while whatever feeds it was healthy: the data.
  // Stronger when the layer takes the model's input and when a norm layer
  // (which expects O(1) values) follows it.
  void InputRange(int32_t layer) {
    const training::TrainingLayer& l = L(layer);
    const auto& m = r_.metrics;
    bool entry = v_.Producers(layer).empty();
    bool next_norm = false;
    for (int32_t c : v_.Consumers(layer)) next_norm |= IsNorm(L(c).type);
    bool embedding = Contains(l.type, "Embedding");
    for (size_t si = 0; si <= anomaly_; ++si) {
      double in_rms = V(m.in_rms, si, layer);
      double in_max = V(m.in_abs_max, si, layer);
      double act_rms = V(m.act_rms, si, layer);
      double act_max = V(m.act_abs_max, si, layer);
      double in_hist = v_.HistoryMedian(m.in_rms, si, layer);
      double act_hist = v_.HistoryMedian(m.act_rms, si, layer);
      double in_jump = in_rms / in_hist;
      double act_jump = act_rms / act_hist;
      bool producers_healthy = true;
      for (int32_t p : v_.Producers(layer)) {
        double pj = V(m.act_rms, si, p) / v_.HistoryMedian(m.act_rms, si, p);
        if (IsFinite(pj) && pj >= 3) producers_healthy = false;
        if (cells_[v_.IndexOf(p)][si].flags & kFlagNonfinite) {
          producers_healthy = false;
        }
      }
      bool input_bad =
          !embedding && producers_healthy &&
          ((IsFinite(in_jump) && in_jump >= kJump && in_rms >= kJump) ||
           (si == 0 && entry && IsFinite(in_max) && in_max > o_.act_range));
      bool act_bad = IsFinite(act_jump) && act_jump >= kJump &&
                     act_rms >= kJump && next_norm && producers_healthy;
      if (!input_bad && !act_bad) continue;
      double conf = input_bad ? 0.55 : 0.5;
      if (input_bad && entry) conf += 0.15;
      if (act_bad) conf += 0.1;
      if (IsFinite(act_max) && act_max > o_.act_range) conf += 0.1;
      Candidate& c = Add("input_out_of_range", "Input out of range", layer, si,
                         std::min(conf, 0.9), "forward");
      if (input_bad) {
        c.cause.evidence.push_back(
            Ev("in_rms", layer, si, in_rms, in_hist,
               IsFinite(in_jump)
                   ? fmt::format("At step {} the input of {} had rms {}, {}x "
                                 "its median {} over the steps before{}.",
                                 StepOf(si), Name(layer), G(in_rms), G(in_jump),
                                 G(in_hist),
                                 entry ? " (it takes the model's input: the "
                                         "data changed)"
                                       : "")
                   : fmt::format("At step {} the input of {} reached |x| = {}.",
                                 StepOf(si), Name(layer), G(in_max))));
      }
      if (IsFinite(act_rms)) {
        c.cause.evidence.push_back(
            Ev("act_rms", layer, si, act_rms, act_hist,
               fmt::format("Its output's rms was {} (|x| up to {}){}{}.",
                           G(act_rms), G(act_max),
                           IsFinite(act_hist)
                               ? fmt::format(" against {} before", G(act_hist))
                               : std::string(),
                           next_norm ? "; the norm layer after it expects O(1) "
                                       "values"
                                     : "")));
      }
      c.cause.fix = {
          fmt::format("Normalise the data that reaches {}: standardise the "
                      "features with the training set's mean and std (or "
                      "put a LayerNorm in front of it); check the input "
                      "pipeline for a change at step {}.",
                      Name(layer), StepOf(si)),
          "mean = train_x.mean(0)\n"
          "std = train_x.std(0) + 1e-6\n"
          "# every batch, before model(x):\n"
          "x = (x - mean) / std",
          fmt::format("in_rms of {} stays O(1) (about 0.1-10) at every step "
                      "and its act_abs_max below {}; no act_range trigger.",
                      Name(layer), G(o_.act_range))};
      return;
    }
  }

  // dead_relu: the layer's gradient rows went all-zero (dead_fraction at
  // or above the alert) because the ReLU after it outputs zeros: its
  // consumer ReLU is >= 90% zeros, or its own output is mostly negative.
  void DeadRelu(int32_t layer) {
    if (L(layer).param_count <= 0) return;
    const auto& m = r_.metrics;
    for (size_t si = 0; si <= anomaly_; ++si) {
      double d = V(m.dead_fraction, si, layer);
      if (!IsFinite(d) || d < o_.dead) continue;
      double in_rms = V(m.in_rms, si, layer);
      if (IsFinite(in_rms) && in_rms <= 1e-12) continue;  // its input died
      double relu_zero = kNaN;
      std::string relu_name;
      int32_t relu_layer = -1;
      for (int32_t c : v_.Consumers(layer)) {
        if (!IsRelu(L(c).type)) continue;
        double z = V(m.act_zero_fraction, si, c);
        if (IsFinite(z) && (!IsFinite(relu_zero) || z > relu_zero)) {
          relu_zero = z;
          relu_name = Name(c);
          relu_layer = c;
        }
      }
      double mean = V(m.act_mean, si, layer);
      double std = V(m.act_std, si, layer);
      double own_zero = V(m.act_zero_fraction, si, layer);
      bool negative = IsFinite(mean) && IsFinite(std) && mean < -std;
      bool relu_dead = IsFinite(relu_zero) && relu_zero >= 0.9;
      bool own_dead = IsFinite(own_zero) && own_zero >= 0.9;
      if (!relu_dead && !negative && !own_dead) continue;
      double before = v_.HistoryMedian(m.dead_fraction, si, layer);
      bool jump = IsFinite(before) && before < o_.dead / 2;
      double conf = 0.55 + (jump ? 0.2 : 0) + 0.15;
      Candidate& c = Add("dead_relu", "Dead ReLUs", layer, si,
                         std::min(conf, 0.95), "backward");
      c.cause.evidence.push_back(
          Ev("dead_fraction", layer, si, d, o_.dead,
             fmt::format("At step {} {} of {}'s output units had an all-zero "
                         "gradient{}.",
                         StepOf(si), G(d), Name(layer),
                         jump ? fmt::format(" (median {} before)", G(before))
                              : std::string())));
      if (relu_dead) {
        c.cause.evidence.push_back(
            Ev("act_zero_fraction", relu_layer, si, relu_zero, 0.5,
               fmt::format("The {} after it output {} zeros (about half is "
                           "normal).",
                           relu_name, G(relu_zero))));
      }
      if (negative) {
        c.cause.evidence.push_back(
            Ev("act_mean", layer, si, mean, 0,
               fmt::format("Its output's mean was {} with std {}: nearly every "
                           "pre-activation is negative (a very negative bias).",
                           G(mean), G(std))));
      }
      c.cause.fix = {
          fmt::format("Reset {}'s bias to 0 (or a small positive value), "
                      "lower its learning rate, or use LeakyReLU / GELU so "
                      "negative pre-activations still pass a gradient.",
                      Name(layer)),
          fmt::format("layer = model.get_submodule(\"{}\")\n"
                      "with torch.no_grad():\n"
                      "    layer.bias.zero_()\n"
                      "# or in the model: torch.nn.LeakyReLU(0.01) instead "
                      "of torch.nn.ReLU()",
                      L(layer).name),
          fmt::format("dead_fraction of {} falls back below {} and the ReLU "
                      "after it outputs about half zeros (act_zero_fraction "
                      "~0.5).",
                      Name(layer), G(o_.dead))};
      return;
    }
  }

  // vanishing_gradients: the layer's gradient norm stayed below the floor
  // for 3 steps in a row.
  void Vanishing(int32_t layer) {
    if (L(layer).param_count <= 0) return;
    const auto& m = r_.metrics;
    size_t run = 0;
    for (size_t si = 0; si <= anomaly_; ++si) {
      double g = V(m.grad_norm, si, layer);
      run = IsFinite(g) && g < o_.vanishing ? run + 1 : 0;
      if (run < 3) continue;
      Candidate& c = Add("vanishing_gradients", "Vanishing gradients", layer,
                         si - 2, 0.4, "backward");
      c.cause.evidence.push_back(
          Ev("grad_norm", layer, si, g, o_.vanishing,
             fmt::format("{}'s gradient norm stayed below {} from step {} to "
                         "{} ({} at the last).",
                         Name(layer), G(o_.vanishing), StepOf(si - 2),
                         StepOf(si), G(g))));
      c.cause.fix = {
          "Shorten the gradient's path: residual connections, a "
          "normalisation layer, ReLU/GELU instead of saturating "
          "activations, and a fan-in-scaled initialisation.",
          fmt::format("layer = model.get_submodule(\"{}\")\n"
                      "torch.nn.init.kaiming_normal_(layer.weight, "
                      "nonlinearity=\"relu\")",
                      L(layer).name),
          fmt::format("grad_norm of {} stays above {} at every step.",
                      Name(layer), G(o_.vanishing))};
      return;
    }
  }

  // missing_gradient_clipping: the global gradient norm passed the
  // threshold (or turned non-finite) and nothing clipped it.
  void Clipping() {
    const auto& m = r_.metrics;
    for (size_t si = 0; si <= anomaly_; ++si) {
      const training::TrainingStep& s = r_.steps[si];
      bool big = IsFinite(s.grad_norm) && s.grad_norm > r_.thresholds.grad_norm;
      if ((!big && s.grad_nonfinite == 0) || s.clipped == 1) continue;
      int32_t top = -1;
      double top_norm = -1;
      for (int32_t layer : v_.considered()) {
        double g = V(m.grad_norm, si, layer);
        if (IsFinite(g) && g > top_norm) {
          top_norm = g;
          top = layer;
        }
      }
      Candidate& c = Add("missing_gradient_clipping", "No gradient clipping",
                         top, si, s.clipped == 0 ? 0.5 : 0.35, "backward");
      c.cause.evidence.push_back(Ev(
          "grad_norm", -1, si, s.grad_norm, r_.thresholds.grad_norm,
          fmt::format(
              "At step {} the global gradient norm was {} (threshold "
              "{}) and {}.",
              StepOf(si),
              big ? G(s.grad_norm)
                  : fmt::format("non-finite ({} elements)", s.grad_nonfinite),
              G(r_.thresholds.grad_norm),
              s.clipped == 0 ? "clip_grad_norm_ was not called"
                             : "no clipping was observed")));
      if (top >= 0) {
        c.cause.evidence.push_back(
            Ev("grad_norm", top, si, top_norm, o_.exploding,
               fmt::format("The largest share came from {} (norm {}).",
                           Name(top), G(top_norm))));
      }
      c.cause.fix = {
          "Clip the global gradient norm after backward() and before the "
          "optimizer step (this bounds the damage of a bad batch; the "
          "cause that made the gradient large still needs its own fix).",
          "loss.backward()\n"
          "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
          "optimizer.step()",
          "steps.clipped is 1 at every step and the loss no longer jumps "
          "after a large grad_norm."};
      return;
    }
  }

  // loss_scale: with a loss scaler, gradients overflowed while the
  // forward pass stayed finite: the scale is too high.
  void LossScale() {
    for (size_t si = 0; si <= anomaly_; ++si) {
      const training::TrainingStep& s = r_.steps[si];
      if (!IsFinite(s.loss_scale) || s.grad_nonfinite == 0) continue;
      bool forward_finite = true;
      for (int32_t layer : v_.considered()) {
        size_t i = r_.at(si, layer);
        if (Col(r_.metrics.act_inf, i) > 0 || Col(r_.metrics.act_nan, i) > 0) {
          forward_finite = false;
        }
      }
      if (!forward_finite || s.loss_nonfinite) continue;
      Candidate& c =
          Add("loss_scale", "Loss scale too high", -1, si, 0.8, "backward");
      c.cause.evidence.push_back(Ev(
          "grad_nonfinite", -1, si, static_cast<double>(s.grad_nonfinite), 0,
          fmt::format("At step {} {} gradient elements were non-finite under "
                      "loss scale {} while the forward pass was finite.",
                      StepOf(si), s.grad_nonfinite, G(s.loss_scale))));
      c.cause.fix = {
          "Start the gradient scaler lower and let it grow (it halves the "
          "scale and skips the step on inf gradients: keep every step going "
          "through scaler.step / scaler.update).",
          "scaler = torch.cuda.amp.GradScaler(init_scale=2.0**10, "
          "growth_interval=2000)\n"
          "scaler.scale(loss).backward()\n"
          "scaler.step(optimizer)\n"
          "scaler.update()",
          "grad_nonfinite is 0 except in the few steps the scaler skips, "
          "and loss_scale settles instead of falling every step."};
      return;
    }
  }

  const RecordView& v_;
  const TrainingRecord& r_;
  const TrainingHealthOptions& o_;
  const std::vector<std::vector<CellHealth>>& cells_;
  size_t anomaly_;
  std::vector<Candidate> out_;
};

// Whether the layer shows the anomaly at step index si, and in what terms.
std::string AnomalyText(const RecordView& v,
                        const std::vector<std::vector<CellHealth>>& cells,
                        int32_t layer, size_t si, bool forward) {
  const TrainingRecord& r = v.record();
  const auto& m = r.metrics;
  uint32_t flags = cells[v.IndexOf(layer)][si].flags;
  std::vector<std::string> parts;
  if (flags & kFlagNonfinite) parts.push_back("non-finite values");
  if (forward) {
    double rms = v.Value(m.act_rms, si, layer);
    double hist = v.HistoryMedian(m.act_rms, si, layer);
    if (IsFinite(rms / hist) && rms / hist >= 3) {
      parts.push_back(fmt::format("act_rms {} ({}x its median {})", G(rms),
                                  G(rms / hist), G(hist)));
    }
    if (flags & kFlagActivationRange)
      parts.push_back("activation out of range");
    if (flags & kFlagFp16Range) parts.push_back("float16 near overflow");
  } else {
    double g = v.Value(m.grad_norm, si, layer);
    double hist = v.HistoryMedian(m.grad_norm, si, layer);
    if (IsFinite(g / hist) && (g / hist >= 3 || g / hist <= 1.0 / 3)) {
      parts.push_back(fmt::format("grad_norm {} ({}x its median {})", G(g),
                                  G(g / hist), G(hist)));
    }
    double go = v.Value(m.gout_norm, si, layer);
    double go_hist = v.HistoryMedian(m.gout_norm, si, layer);
    if (IsFinite(go / go_hist) &&
        (go / go_hist >= 3 || go / go_hist <= 1.0 / 3)) {
      parts.push_back(
          fmt::format("gradient at its output {} ({}x its median {})", G(go),
                      G(go / go_hist), G(go_hist)));
    }
    if (flags & kFlagExploding) parts.push_back("exploding gradient");
    if (flags & kFlagVanishing) parts.push_back("vanishing gradient");
    if (flags & kFlagDead) {
      parts.push_back(fmt::format("dead_fraction {}",
                                  G(v.Value(m.dead_fraction, si, layer))));
    }
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

double Col(const std::vector<double>& c, size_t i) {
  return i < c.size() ? c[i] : kNaN;
}
int64_t Col(const std::vector<int64_t>& c, size_t i) {
  return i < c.size() ? c[i] : 0;
}
std::string Col(const std::vector<std::string>& c, size_t i) {
  return i < c.size() ? c[i] : std::string();
}

bool Measured(const TrainingRecord& r, size_t i) {
  const auto& m = r.metrics;
  return IsFinite(Col(m.grad_norm, i)) || IsFinite(Col(m.act_rms, i)) ||
         IsFinite(Col(m.act_abs_max, i)) || IsFinite(Col(m.weight_norm, i)) ||
         IsFinite(Col(m.update_ratio, i)) || Nonfinite(r, i);
}

bool Nonfinite(const TrainingRecord& r, size_t i) {
  const auto& m = r.metrics;
  return Col(m.grad_nan, i) > 0 || Col(m.grad_inf, i) > 0 ||
         Col(m.act_nan, i) > 0 || Col(m.act_inf, i) > 0;
}

bool IsHalf(const TrainingRecord& r, size_t i) {
  std::string dtype = Col(r.metrics.act_dtype, i);
  return dtype == "float16" || dtype == "torch.float16" || dtype == "half";
}

RecordView::RecordView(const TrainingRecord& r) : r_(r) {
  const size_t n = r.layers.size();
  std::vector<bool> has_child(n, false);
  for (const training::TrainingLayer& l : r.layers) {
    if (l.parent >= 0 && static_cast<size_t>(l.parent) < n) {
      has_child[l.parent] = true;
    }
  }
  std::vector<bool> kept(n, false);
  for (size_t i = 0; i < n; ++i) {
    const training::TrainingLayer& l = r.layers[i];
    kept[i] = l.param_count > 0 || (l.forward_order >= 0 && !has_child[i]);
    if (kept[i]) considered_.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(considered_.begin(), considered_.end(),
                   [&](int32_t a, int32_t b) {
                     int64_t fa = r.layers[a].forward_order;
                     int64_t fb = r.layers[b].forward_order;
                     if ((fa < 0) != (fb < 0)) return fb < 0;
                     return fa < fb;
                   });
  index_.assign(n, -1);
  for (size_t k = 0; k < considered_.size(); ++k) {
    index_[considered_[k]] = static_cast<int32_t>(k);
  }
  // Data flow between kept layers, through the left-out ones.
  std::vector<std::vector<int32_t>> out(n);
  for (const auto& [src, dst] : r.edges) {
    if (src < 0 || dst < 0 || static_cast<size_t>(src) >= n ||
        static_cast<size_t>(dst) >= n || src == dst) {
      continue;
    }
    out[src].push_back(dst);
  }
  consumers_.assign(n, {});
  producers_.assign(n, {});
  for (int32_t s : considered_) {
    std::vector<bool> seen(n, false);
    std::deque<int32_t> queue(out[s].begin(), out[s].end());
    while (!queue.empty()) {
      int32_t d = queue.front();
      queue.pop_front();
      if (seen[d]) continue;
      seen[d] = true;
      if (kept[d]) {
        consumers_[s].push_back(d);
        producers_[d].push_back(s);
      } else {
        queue.insert(queue.end(), out[d].begin(), out[d].end());
      }
    }
  }
}

int32_t RecordView::IndexOf(int32_t layer) const {
  return layer >= 0 && static_cast<size_t>(layer) < index_.size()
             ? index_[layer]
             : -1;
}

std::optional<size_t> RecordView::IndexOfStep(int64_t step) const {
  auto it = std::lower_bound(
      r_.steps.begin(), r_.steps.end(), step,
      [](const training::TrainingStep& s, int64_t v) { return s.step < v; });
  if (it == r_.steps.end() || it->step != step) return std::nullopt;
  return static_cast<size_t>(it - r_.steps.begin());
}

double RecordView::HistoryMedian(const std::vector<double>& column, size_t si,
                                 int32_t layer, size_t window) const {
  std::vector<double> values;
  for (size_t b = si >= window ? si - window : 0; b < si; ++b) {
    double v = Col(column, r_.at(b, layer));
    if (IsFinite(v)) values.push_back(v);
  }
  return Median(std::move(values));
}

RootCause FindRootCause(const RecordView& view, const TrainingHealthOptions& o,
                        const std::vector<std::vector<CellHealth>>& cells,
                        size_t anomaly) {
  RootCause out;
  const TrainingRecord& r = view.record();
  if (r.steps.empty() || anomaly >= r.steps.size()) return out;
  std::vector<Candidate> candidates = Rules(view, o, cells, anomaly).Run();
  auto order = [&](int32_t layer) {
    return layer >= 0 ? r.layers[layer].forward_order : -1;
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Candidate& a, const Candidate& b) {
                     if (a.cause.confidence != b.cause.confidence) {
                       return a.cause.confidence > b.cause.confidence;
                     }
                     if (a.si != b.si) return a.si < b.si;
                     return order(a.cause.layer) < order(b.cause.layer);
                   });
  for (const Candidate& c : candidates) out.causes.push_back(c.cause);
  if (candidates.empty()) return out;

  // The chain of the first cause: its layer produced the anomaly; the
  // layers after it along the data flow (forward for activations,
  // backward for gradients) that show it too, by the anomaly step (or the
  // step after the cause, for a cause that acts through the update), are
  // its propagators, in the order the anomaly reached them.
  const Candidate& top = candidates.front();
  if (top.cause.layer < 0) return out;
  bool forward = top.direction == "forward";
  auto link = [&](int32_t layer, size_t si, std::string role,
                  std::string evidence) {
    TrainingChainLink l;
    l.layer = layer;
    l.layer_name = r.layers[layer].name;
    l.node = r.layers[layer].node;
    l.step = r.steps[si].step;
    l.role = std::move(role);
    l.direction = forward ? "forward" : "backward";
    l.evidence = std::move(evidence);
    return l;
  };
  out.chain.push_back(link(top.cause.layer, top.si, "producer",
                           top.cause.evidence.empty()
                               ? top.cause.title
                               : top.cause.evidence.front().text));
  size_t last = std::min(r.steps.size() - 1, std::max(anomaly, top.si + 1));
  std::set<int32_t> seen = {top.cause.layer};
  std::deque<int32_t> queue = {top.cause.layer};
  while (!queue.empty()) {
    int32_t at = queue.front();
    queue.pop_front();
    const std::vector<int32_t>& next =
        forward ? view.Consumers(at) : view.Producers(at);
    for (int32_t n : next) {
      if (!seen.insert(n).second) continue;
      for (size_t si = top.si; si <= last; ++si) {
        std::string text = AnomalyText(view, cells, n, si, forward);
        if (text.empty()) continue;
        out.chain.push_back(link(n, si, "propagator", text));
        queue.push_back(n);
        break;
      }
    }
  }
  return out;
}

}  // namespace mi::analysis
