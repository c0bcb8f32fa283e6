// The training diagnosis for a terminal (`model-inspector diagnose
// SNAPSHOT`): score, anomaly, problem layers, causes, chain.

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "base/strings.h"
#include "encoders/table_printer.h"
#include "report/training_report.h"

namespace mi::report {
namespace {

std::string Num(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.4g}", v);
}
std::string ScoreText(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.0f}", v);
}
// Names and prose from the snapshot, safe for a terminal.
std::string Safe(const std::string& s) { return EscapeForTerminal(s); }

// Each line of `text` indented by `pad`.
std::string Indent(const std::string& text, const std::string& pad) {
  std::string out;
  for (std::string_view line : Split(text, '\n')) {
    out += pad + Safe(std::string(line)) + "\n";
  }
  return out;
}

}  // namespace

std::string RenderTrainingText(const TrainingDiagnosisResult& r) {
  std::unordered_map<int32_t, const TrainingLayerHealth*> layers;
  for (const TrainingLayerHealth& l : r.layers) layers[l.layer] = &l;
  auto name = [&](int32_t id, const std::string& given) -> std::string {
    if (!given.empty()) return given;
    auto it = layers.find(id);
    if (it != layers.end()) {
      return it->second->name.empty() ? "(model)" : it->second->name;
    }
    return id < 0 ? "the whole model" : fmt::format("layer {}", id);
  };
  std::string out = fmt::format("Training diagnosis{}{}\n",
                                r.model.empty() ? "" : ": ", Safe(r.model));
  if (!r.path.empty()) out += "snapshot: " + Safe(r.path) + "\n";
  out +=
      fmt::format("steps {} to {} ({} recorded), {} layers\n\n", r.first_step,
                  r.last_step, r.steps.size(), r.layers.size());
  out += fmt::format("Health score: {}/100 ({}) {}\n", ScoreText(r.score),
                     ScoreBand(r.score),
                     r.anomaly_step >= 0
                         ? fmt::format("at the anomaly step {}", r.anomaly_step)
                         : std::string("at the last step"));
  if (r.anomaly_step < 0) {
    out += "Anomaly: none, no trigger fired.\n";
  } else {
    out += fmt::format("Anomaly: step {}\n", r.anomaly_step);
    for (const TrainingTriggerInfo& t : r.triggers) {
      std::string line =
          fmt::format("  trigger {} at step {}", Safe(t.trigger), t.step);
      if (t.layer >= 0) line += " in " + Safe(name(t.layer, t.layer_name));
      if (!std::isnan(t.value) || !std::isnan(t.threshold)) {
        line += fmt::format(": value {}, threshold {}", Num(t.value),
                            Num(t.threshold));
      }
      if (!t.detail.empty()) line += " (" + Safe(t.detail) + ")";
      out += line + "\n";
    }
  }
  if (!r.captured_steps.empty()) {
    out +=
        fmt::format("Captured steps: {} to {} ({})\n", r.captured_steps.front(),
                    r.captured_steps.back(), r.captured_steps.size());
  }

  if (!r.problem_layers.empty()) {
    encoders::Table t{
        "Problem layers (worst first)",
        {"layer", "type", "score", "worst", "at step", "problems"},
        {}};
    t.numeric = {false, false, true, true, true, false};
    t.full_last_column = true;
    for (int32_t id : r.problem_layers) {
      auto it = layers.find(id);
      if (it == layers.end()) continue;
      const TrainingLayerHealth& l = *it->second;
      t.rows.push_back({Safe(name(id, "")), Safe(l.type), ScoreText(l.score),
                        ScoreText(l.worst_score),
                        l.worst_step >= 0 ? std::to_string(l.worst_step) : "-",
                        Safe(Join(l.flags, ", "))});
    }
    out += "\n" + encoders::RenderText(t);
  }

  if (!r.causes.empty()) {
    out += "\nCauses, most likely first\n";
    for (size_t i = 0; i < r.causes.size(); ++i) {
      const TrainingCause& c = r.causes[i];
      out += fmt::format("\n{}. {} [{}] in {}{} (confidence {:.0f}%)\n", i + 1,
                         Safe(c.title.empty() ? c.cause : c.title),
                         Safe(c.cause), Safe(name(c.layer, c.layer_name)),
                         c.step >= 0 ? fmt::format(" at step {}", c.step) : "",
                         std::clamp(c.confidence, 0.0, 1.0) * 100);
      for (const TrainingEvidence& e : c.evidence) {
        std::string line = "   evidence: " + Safe(e.text);
        if (!std::isnan(e.value)) {
          line += fmt::format(" ({} = {}", Safe(e.metric), Num(e.value));
          if (!std::isnan(e.expected)) {
            line += fmt::format(", healthy about {}", Num(e.expected));
          }
          line += ")";
        }
        out += line + "\n";
      }
      if (!c.fix.summary.empty())
        out += "   fix: " + Safe(c.fix.summary) + "\n";
      if (!c.fix.snippet.empty()) {
        out += "   snippet:\n" + Indent(c.fix.snippet, "     ");
      }
      if (!c.fix.validation.empty()) {
        out += "   check: " + Safe(c.fix.validation) + "\n";
      }
    }
  } else if (r.anomaly_step >= 0) {
    out += "\nNo cause could be ranked from what the snapshot holds.\n";
  }

  if (!r.chain.empty()) {
    out += fmt::format("\nPropagation chain ({})\n",
                       r.chain.front().direction == "backward"
                           ? "backward, with the gradients"
                           : "forward, with the activations");
    for (size_t i = 0; i < r.chain.size(); ++i) {
      const TrainingChainLink& c = r.chain[i];
      out += fmt::format("  {}. {} [{}]{}{}\n", i + 1,
                         Safe(name(c.layer, c.layer_name)), Safe(c.role),
                         c.step >= 0 ? fmt::format(" at step {}", c.step) : "",
                         c.evidence.empty() ? "" : ": " + Safe(c.evidence));
    }
  }
  return out;
}

}  // namespace mi::report
