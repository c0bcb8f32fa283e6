// The training diagnosis as one self-contained HTML page
// (`model-inspector diagnose SNAPSHOT --report FILE.html`): the health
// score, the anomaly timeline, the heat map layer x step, the problem
// layers, the root-cause chain on the layers graph and the ranked causes.
// Everything is drawn as inline SVG; no script, no request (html_page.h).

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "report/escape.h"
#include "report/html_page.h"
#include "report/svg.h"
#include "report/training_report.h"

namespace mi::report {
namespace {

constexpr char kProducerStroke[] = "#cf222e";
constexpr char kProducerFill[] = "#ffebe9";
constexpr char kPropagatorStroke[] = "#bc4c00";
constexpr char kPropagatorFill[] = "#fff1e5";
constexpr char kChainArrow[] = "#cf222e";
constexpr char kLossColour[] = "#0969da";
constexpr char kGradColour[] = "#8250df";
constexpr char kCapturedFill[] = "#ddf4ff";
constexpr char kTriggerColour[] = "#cf222e";

// Extra rules of this page (html_page.h has the shared ones).
constexpr char kCss[] = R"(
main { max-width: 1200px; }
.sub { color: #57606a; margin: 0 0 14px; }
.overview { display: flex; gap: 16px; align-items: stretch; flex-wrap: wrap; margin: 8px 0 4px; }
.score { display: flex; align-items: center; gap: 14px; border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 18px; min-width: 230px; }
.score .swatch { width: 18px; height: 64px; border-radius: 4px; }
.score .value { font-size: 52px; font-weight: bold; line-height: 1; font-variant-numeric: tabular-nums; }
.score .of { font-size: 16px; color: #57606a; }
.score .band { font-size: 15px; font-weight: bold; }
.anomaly { flex: 1; min-width: 320px; border-radius: 8px; padding: 10px 16px; }
.anomaly.found { background: #ffebe9; border: 1px solid #ff8182; color: #82071e; }
.anomaly.none { background: #dafbe1; border: 1px solid #4ac26b; color: #116329; }
.anomaly .head { font-size: 18px; font-weight: bold; margin-bottom: 4px; }
.anomaly ul { margin: 4px 0 0; padding-left: 20px; }
.chart { max-width: 100%; height: auto; display: block; margin: 6px 0; }
.legend { margin: 4px 0 10px; }
.legend i.fill { border: 1px solid #8c959f; }
span.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #8c959f; vertical-align: -2px; margin-right: 6px; }
.cause { border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 16px; margin: 12px 0; break-inside: avoid; }
.cause h3 { margin: 2px 0 6px; }
.cause .meta { color: #57606a; margin-bottom: 6px; }
.meter { display: inline-block; width: 120px; height: 10px; background: #eaeef2; border-radius: 5px; vertical-align: 0; margin: 0 6px; overflow: hidden; }
.meter b { display: block; height: 100%; background: #0969da; }
.cause ul { margin: 4px 0 8px; padding-left: 20px; }
.cause .label { font-weight: bold; }
pre.snippet { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 10px; overflow: auto; font-size: 12.5px; white-space: pre-wrap; }
tr.producer td { background: #fff5f5; }
@media print {
  body { margin: 0; font-size: 12px; }
  main { max-width: none; }
  .drawing svg { max-width: 100%; height: auto; }
  .overview, .cause, svg, table { break-inside: avoid; }
  pre.snippet { overflow: visible; }
}
@page { size: A4; margin: 14mm 12mm; }
)";

bool Finite(double v) { return std::isfinite(v); }

// Numbers as the page prints them: 4 significant digits, "-" for none.
std::string Num(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.4g}", v);
}
std::string ScoreText(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.0f}", v);
}

// Cuts to `max_chars` code points, marking the cut with "..." (kept the
// tail: a module path's last segments say the most).
std::string FitTail(const std::string& s, size_t max_chars) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (starts.size() <= max_chars) return s;
  return "..." + s.substr(starts[starts.size() - (max_chars - 3)]);
}

std::string LayerLabel(const std::string& name) {
  return name.empty() ? std::string("(model)") : name;
}

// A darker shade of each band's colour for text on white.
std::string ScoreTextColour(double score) {
  if (std::isnan(score)) return "#57606a";
  if (score >= 90) return "#1a7f37";
  if (score >= 70) return "#2f7d3b";
  if (score >= 50) return "#9a6700";
  if (score >= 25) return "#bc4c00";
  return "#cf222e";
}

struct Lookup {
  std::unordered_map<int32_t, size_t> index;  // layer id -> result.layers
  const TrainingDiagnosisResult& r;
  explicit Lookup(const TrainingDiagnosisResult& result) : r(result) {
    for (size_t i = 0; i < r.layers.size(); ++i) index[r.layers[i].layer] = i;
  }
  const TrainingLayerHealth* Layer(int32_t id) const {
    auto it = index.find(id);
    return it == index.end() ? nullptr : &r.layers[it->second];
  }
  std::string Name(int32_t id, const std::string& fallback = "") const {
    if (!fallback.empty()) return fallback;
    const TrainingLayerHealth* l = Layer(id);
    if (l != nullptr) return LayerLabel(l->name);
    return id < 0 ? std::string("the whole model")
                  : fmt::format("layer {}", id);
  }
};

std::string TriggerLine(const TrainingTriggerInfo& t, const Lookup& lookup) {
  std::string out = fmt::format("step {}: {}", t.step, t.trigger);
  if (t.layer >= 0) out += " in " + lookup.Name(t.layer, t.layer_name);
  if (!std::isnan(t.value) || !std::isnan(t.threshold)) {
    out += fmt::format(" (value {}, threshold {})", Num(t.value),
                       Num(t.threshold));
  }
  if (!t.detail.empty()) out += ": " + t.detail;
  return out;
}

// Consecutive runs of captured steps, as [first, last] step numbers.
std::vector<std::pair<int64_t, int64_t>> CapturedRuns(
    const TrainingDiagnosisResult& r) {
  std::set<int64_t> captured(r.captured_steps.begin(), r.captured_steps.end());
  for (const TrainingStepHealth& s : r.steps) {
    if (s.captured) captured.insert(s.step);
  }
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t s : captured) {
    if (!runs.empty() && runs.back().second + 1 == s) {
      runs.back().second = s;
    } else {
      runs.push_back({s, s});
    }
  }
  return runs;
}

// ---- the overview ---------------------------------------------------------

std::string Overview(const TrainingDiagnosisResult& r, const Lookup& lookup) {
  std::string out = "<div class=\"overview\">\n";
  out += fmt::format(
      "<div class=\"score\" id=\"score\"><div class=\"swatch\" "
      "style=\"background:{}\"></div><div><div class=\"value\" "
      "style=\"color:{}\">{}<span class=\"of\"> / 100</span></div><div "
      "class=\"band\" style=\"color:{}\">{}</div><div class=\"note\">model "
      "health {}</div></div></div>\n",
      ScoreColour(r.score), ScoreTextColour(r.score), ScoreText(r.score),
      ScoreTextColour(r.score), XmlEscape(ScoreBand(r.score)),
      r.anomaly_step >= 0
          ? fmt::format("at the anomaly step {}", r.anomaly_step)
          : std::string("at the last step"));
  if (r.anomaly_step >= 0) {
    out += fmt::format(
        "<div class=\"anomaly found\" id=\"anomaly\"><div class=\"head\">"
        "Anomaly at step {}</div>",
        r.anomaly_step);
    if (!r.causes.empty()) {
      const TrainingCause& c = r.causes.front();
      out += fmt::format(
          "<div>Most likely cause: <b>{}</b> in <b>{}</b> (confidence "
          "{:.0f}%)</div>",
          XmlEscape(c.title), XmlEscape(lookup.Name(c.layer, c.layer_name)),
          c.confidence * 100);
    }
    if (!r.triggers.empty()) {
      out += "<ul>";
      size_t shown = 0;
      for (const TrainingTriggerInfo& t : r.triggers) {
        if (++shown > 8) break;
        out += "<li>" + XmlEscape(TriggerLine(t, lookup)) + "</li>";
      }
      if (r.triggers.size() > 8) {
        out += fmt::format("<li>... {} more</li>", r.triggers.size() - 8);
      }
      out += "</ul>";
    }
    out += "</div>\n";
  } else {
    out += fmt::format(
        "<div class=\"anomaly none\" id=\"anomaly\"><div class=\"head\">No "
        "trigger fired</div><div>Steps {} to {} were watched; nothing crossed "
        "a trigger.</div></div>\n",
        r.first_step, r.last_step);
  }
  out += "</div>\n";
  return out;
}

// ---- the anomaly timeline -------------------------------------------------

struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  double operator()(double v) const {
    double a = log ? std::log10(v) : v;
    double b0 = log ? std::log10(lo) : lo, b1 = log ? std::log10(hi) : hi;
    return b1 > b0 ? (a - b0) / (b1 - b0) : 0.5;
  }
};

// A scale over the finite values (positive ones for a log scale): log
// when they span more than two decades.
Scale MakeScale(const std::vector<double>& values, bool allow_log) {
  Scale s;
  bool any = false;
  double lo = 0, hi = 0, pos_lo = 0;
  bool any_pos = false;
  for (double v : values) {
    if (!Finite(v)) continue;
    if (!any) lo = hi = v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    any = true;
    if (v > 0) {
      pos_lo = any_pos ? std::min(pos_lo, v) : v;
      any_pos = true;
    }
  }
  if (!any) return s;
  if (allow_log && any_pos && lo > 0 && hi / pos_lo > 100) {
    s.log = true;
    s.lo = pos_lo;
    s.hi = hi;
    return s;
  }
  if (hi == lo) {
    double pad = hi == 0 ? 1 : std::abs(hi) * 0.1;
    lo -= pad;
    hi += pad;
  }
  s.lo = lo >= 0 ? 0 : lo;  // from 0 when every value is positive
  s.hi = hi;
  return s;
}

std::string TimelineSvg(const TrainingDiagnosisResult& r) {
  const double width = 1150, left = 78, right = 16, top = 30;
  const double panel_h = 140, gap = 34, bottom = 34;
  const double plot_w = width - left - right;
  const double height = top + 2 * panel_h + gap + bottom;
  int64_t first = r.steps.front().step, last = r.steps.back().step;
  double span = static_cast<double>(std::max<int64_t>(1, last - first));
  double step_w = plot_w / (span + 1);
  auto x = [&](int64_t step) {
    return left + step_w / 2 + static_cast<double>(step - first) * step_w;
  };
  std::vector<double> loss, grad;
  for (const TrainingStepHealth& s : r.steps) {
    loss.push_back(s.loss);
    grad.push_back(s.grad_norm);
  }
  Scale ls = MakeScale(loss, false), gs = MakeScale(grad, true);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart timeline\" "
      "role=\"img\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 "
      "{0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>Loss and gradient norm per step</title>\n",
      width, height);
  // The captured window(s), shaded across both panels.
  for (auto [a, b] : CapturedRuns(r)) {
    if (b < first || a > last) continue;
    a = std::max(a, first);
    b = std::min(b, last);
    out += fmt::format(
        "<rect class=\"captured\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
        "height=\"{:.1f}\" fill=\"{}\"><title>captured steps {} to {}"
        "</title></rect>\n",
        x(a) - step_w / 2, top, x(b) - x(a) + step_w, 2 * panel_h + gap,
        kCapturedFill, a, b);
  }
  struct Panel {
    const char* name;
    const char* css;
    const char* colour;
    const std::vector<double>* values;
    Scale scale;
    double y0;
  };
  Panel panels[2] = {{"loss", "loss", kLossColour, &loss, ls, top},
                     {"gradient norm", "grad-norm", kGradColour, &grad, gs,
                      top + panel_h + gap}};
  for (const Panel& p : panels) {
    auto y = [&](double v) { return p.y0 + panel_h * (1 - p.scale(v)); };
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"none\" stroke=\"#d0d7de\"/>\n",
        left, p.y0, plot_w, panel_h);
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\" fill=\"{}\">{}"
        "{}</text>\n",
        left + 4, p.y0 - 6, p.colour, p.name,
        p.scale.log ? " (log scale)" : "");
    // Ticks: low, middle, high.
    for (int k = 0; k <= 2; ++k) {
      double f = k / 2.0;
      double v = p.scale.log ? std::pow(10.0, std::log10(p.scale.lo) +
                                                  f * (std::log10(p.scale.hi) -
                                                       std::log10(p.scale.lo)))
                             : p.scale.lo + f * (p.scale.hi - p.scale.lo);
      double ty = p.y0 + panel_h * (1 - f);
      out += fmt::format(
          "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
          "stroke=\"#eaeef2\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
          "text-anchor=\"end\" fill=\"#57606a\">{}</text>\n",
          left, left + plot_w, ty, ty, left - 6, ty + 4, Num(v));
    }
    // The series: a polyline per run of finite values; a step without one
    // is a gap, marked at the top of the panel when it should have had one.
    std::string points;
    auto flush = [&]() {
      if (points.empty()) return;
      out += fmt::format(
          "<polyline class=\"series {}\" points=\"{}\" fill=\"none\" "
          "stroke=\"{}\" stroke-width=\"1.8\" stroke-linejoin=\"round\"/>\n",
          p.css, points, p.colour);
      points.clear();
    };
    for (size_t i = 0; i < r.steps.size(); ++i) {
      double v = (*p.values)[i];
      bool usable = Finite(v) && (!p.scale.log || v > 0);
      if (!usable) {
        flush();
        continue;
      }
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ",
                            x(r.steps[i].step), y(v));
    }
    flush();
    // Single points (a run of one) and every point when few steps.
    if (r.steps.size() <= 60) {
      for (size_t i = 0; i < r.steps.size(); ++i) {
        double v = (*p.values)[i];
        if (!Finite(v) || (p.scale.log && v <= 0)) continue;
        out += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.2\" fill=\"{}\"/>",
            x(r.steps[i].step), y(v), p.colour);
      }
      out += "\n";
    }
  }
  // The trigger marks: one line per step where a trigger fired.
  std::map<int64_t, std::vector<std::string>> fired;
  for (const TrainingTriggerInfo& t : r.triggers)
    fired[t.step].push_back(t.trigger);
  for (const TrainingStepHealth& s : r.steps) {
    for (const std::string& e : s.events) fired[s.step].push_back(e);
  }
  if (r.anomaly_step >= 0) fired[r.anomaly_step];
  double label_x_end = -1e9;
  for (auto& [step, names] : fired) {
    if (step < first || step > last) continue;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    bool anomaly = step == r.anomaly_step;
    double tx = x(step);
    std::string label = fmt::format(
        "step {}{}{}", step, names.empty() ? "" : ": ", Join(names, ", "));
    out += fmt::format(
        "<g class=\"trigger{}\" data-step=\"{}\"><title>{}</title><line "
        "x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"{}\" stroke-width=\"{}\"{}/>",
        anomaly ? " anomaly" : "", step, XmlEscape(label), tx, tx, top - 4,
        top + 2 * panel_h + gap, kTriggerColour, anomaly ? 2 : 1.2,
        anomaly ? "" : " stroke-dasharray=\"4 3\"");
    // Labels where there is room (the first, and then when apart).
    if (tx > label_x_end + 8) {
      bool flip = tx > left + plot_w - 220;
      std::string text = FitTail(label, 40);
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" text-anchor=\"{}\" "
          "font-weight=\"{}\">{}</text>",
          flip ? tx - 4 : tx + 4, top + panel_h + gap - 10, kTriggerColour,
          flip ? "end" : "start", anomaly ? "bold" : "normal", XmlEscape(text));
      label_x_end = flip ? tx : tx + 6.6 * static_cast<double>(text.size());
    }
    out += "</g>\n";
  }
  // The step axis.
  double axis_y = top + 2 * panel_h + gap;
  int64_t ticks = std::min<int64_t>(10, last - first + 1);
  std::set<int64_t> tick_steps;
  for (int64_t k = 0; k < ticks; ++k) {
    tick_steps.insert(first +
                      (last - first) * k / std::max<int64_t>(1, ticks - 1));
  }
  for (int64_t s : tick_steps) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#8c959f\"/><text x=\"{0:.1f}\" y=\"{3:.1f}\" "
        "text-anchor=\"middle\" fill=\"#57606a\">{4}</text>\n",
        x(s), axis_y, axis_y + 4, axis_y + 16, s);
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
      "fill=\"#57606a\">step</text>\n",
      left + plot_w / 2, axis_y + 30);
  // Tooltips per step (few steps only: each is an element).
  if (r.steps.size() <= 400) {
    for (const TrainingStepHealth& s : r.steps) {
      out += fmt::format(
          "<rect class=\"step-hit\" x=\"{:.1f}\" y=\"{:.1f}\" "
          "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"transparent\"><title>"
          "step {}: loss {}, gradient norm {}, lr {}, score {}{}</title>"
          "</rect>",
          x(s.step) - step_w / 2, top, step_w, 2 * panel_h + gap, s.step,
          Num(s.loss), Num(s.grad_norm), Num(s.lr), ScoreText(s.score),
          s.captured ? " (captured)" : "");
    }
    out += "\n";
  }
  out += "</svg>\n";
  return out;
}

// ---- the heat map -----------------------------------------------------------

std::string HeatmapSvg(const TrainingDiagnosisResult& r,
                       const TrainingReportOptions& options) {
  const size_t steps = r.steps.size();
  const size_t cols =
      std::min(steps, std::max<size_t>(1, options.max_step_columns));
  // Column c covers steps [begin[c], begin[c + 1]).
  std::vector<size_t> begin(cols + 1);
  for (size_t c = 0; c <= cols; ++c) begin[c] = c * steps / cols;
  const double label_w = 250, top = 34, right = 10;
  const double cell_w = std::clamp(std::floor(880.0 / cols), 3.0, 56.0);
  const double cell_h = r.layers.size() > 60   ? 10
                        : r.layers.size() > 20 ? 16
                                               : 20;
  const double width = label_w + cell_w * cols + right;
  const double height = top + cell_h * r.layers.size() + 30;
  std::set<int32_t> problems(r.problem_layers.begin(), r.problem_layers.end());
  std::set<int64_t> captured;
  for (auto [a, b] : CapturedRuns(r)) {
    for (int64_t s = a; s <= b; ++s) captured.insert(s);
  }
  const bool titles = r.layers.size() * cols <= 6000;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart heatmap\" "
      "role=\"img\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 "
      "{0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<title>Health score per layer and step</title>\n",
      width, height);
  // Captured columns: a blue bar above the map; the anomaly column: a
  // triangle and an outline.
  for (size_t c = 0; c < cols; ++c) {
    bool cap = false, anomaly = false;
    for (size_t i = begin[c]; i < begin[c + 1]; ++i) {
      cap = cap || captured.count(r.steps[i].step) > 0;
      anomaly = anomaly || r.steps[i].step == r.anomaly_step;
    }
    double cx = label_w + cell_w * c;
    if (cap) {
      out += fmt::format(
          "<rect class=\"captured-mark\" x=\"{:.1f}\" y=\"{:.1f}\" "
          "width=\"{:.1f}\" height=\"5\" fill=\"#54aeff\"/>",
          cx, top - 8, cell_w);
    }
    if (anomaly) {
      out += fmt::format(
          "<path class=\"anomaly-mark\" d=\"M{:.1f},{:.1f} l5,-8 l-10,0 z\" "
          "fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" "
          "text-anchor=\"{}\" font-weight=\"bold\">step {}</text>",
          cx + cell_w / 2, top - 10, kTriggerColour, cx + cell_w / 2, top - 22,
          kTriggerColour, c * 2 < cols ? "start" : "end", r.anomaly_step);
    }
  }
  out += "\n";
  for (size_t li = 0; li < r.layers.size(); ++li) {
    const TrainingLayerHealth& l = r.layers[li];
    double y = top + cell_h * li;
    bool problem = problems.count(l.layer) > 0;
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\"{}"
        "{}><title>{} ({})</title>{}</text>\n",
        label_w - 6, y + cell_h - (cell_h > 12 ? 4 : 1.5),
        problem ? "#cf222e" : "#1f2328", problem ? " font-weight=\"bold\"" : "",
        cell_h > 12 ? "" : " font-size=\"9\"", XmlEscape(LayerLabel(l.name)),
        XmlEscape(l.type), XmlEscape(FitTail(LayerLabel(l.name), 36)));
    const std::vector<double>* row =
        li < r.heatmap.size() ? &r.heatmap[li] : nullptr;
    for (size_t c = 0; c < cols; ++c) {
      double worst = std::numeric_limits<double>::quiet_NaN();
      for (size_t i = begin[c]; i < begin[c + 1]; ++i) {
        double v = row != nullptr && i < row->size()
                       ? (*row)[i]
                       : std::numeric_limits<double>::quiet_NaN();
        if (!std::isnan(v) && (std::isnan(worst) || v < worst)) worst = v;
      }
      int64_t s0 = r.steps[begin[c]].step, s1 = r.steps[begin[c + 1] - 1].step;
      out += fmt::format(
          "<rect class=\"cell\" data-layer=\"{}\" data-step=\"{}\" "
          "x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"",
          l.layer, s0, label_w + cell_w * c, y, cell_w, cell_h,
          ScoreColour(worst));
      if (titles) {
        out += fmt::format("><title>{} at step{}: score {}</title></rect>",
                           XmlEscape(LayerLabel(l.name)),
                           s0 == s1 ? fmt::format(" {}", s0)
                                    : fmt::format("s {} to {} (worst)", s0, s1),
                           ScoreText(worst));
      } else {
        out += "/>";
      }
    }
    out += "\n";
  }
  // Thin white grid lines between rows when the cells are large.
  if (r.anomaly_step >= 0) {
    for (size_t c = 0; c < cols; ++c) {
      bool anomaly = false;
      for (size_t i = begin[c]; i < begin[c + 1]; ++i) {
        anomaly = anomaly || r.steps[i].step == r.anomaly_step;
      }
      if (!anomaly) continue;
      out += fmt::format(
          "<rect class=\"anomaly-column\" x=\"{:.1f}\" y=\"{:.1f}\" "
          "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#1f2328\" "
          "stroke-width=\"1.5\"/>\n",
          label_w + cell_w * c - 0.75, top - 0.75, cell_w + 1.5,
          cell_h * r.layers.size() + 1.5);
    }
  }
  // Step labels under the map.
  double axis_y = top + cell_h * r.layers.size();
  size_t every =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(48.0 / cell_w)));
  for (size_t c = 0; c < cols; c += every) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
        "fill=\"#57606a\" font-size=\"10\">{}</text>",
        label_w + cell_w * c + cell_w / 2, axis_y + 14, r.steps[begin[c]].step);
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#57606a\" "
      "font-size=\"10\">step</text>\n</svg>\n",
      label_w - 6, axis_y + 14);
  return out;
}

std::string ScoreLegend() {
  const double bands[] = {95, 80, 60, 40, 10};
  const char* names[] = {"90-100 healthy", "70-89 watch", "50-69 degraded",
                         "25-49 poor", "0-24 critical"};
  std::string out = "<div class=\"legend\" id=\"score-legend\">";
  for (size_t i = 0; i < 5; ++i) {
    out += fmt::format(
        "<span><span class=\"swatch\" style=\"background:{}\"></span>{}"
        "</span>",
        ScoreColour(bands[i]), names[i]);
  }
  out += fmt::format(
      "<span><span class=\"swatch\" style=\"background:{}\"></span>not "
      "measured</span><span><span class=\"swatch\" "
      "style=\"background:#54aeff\"></span>captured step</span></div>\n",
      ScoreColour(std::numeric_limits<double>::quiet_NaN()));
  return out;
}

// ---- problem layers ---------------------------------------------------------

std::string ProblemTable(const TrainingDiagnosisResult& r,
                         const Lookup& lookup) {
  if (r.problem_layers.empty()) {
    return HtmlParagraph("No layer has a health problem.", "note");
  }
  std::set<int32_t> producers;
  for (const TrainingChainLink& c : r.chain) {
    if (c.role == "producer") producers.insert(c.layer);
  }
  std::string out =
      "<table id=\"problem-layers\">\n<thead><tr><th>layer</th><th>type</th>"
      "<th>score</th><th>worst score</th><th>at step</th><th>problems</th>"
      "<th>role in the chain</th></tr></thead>\n<tbody>\n";
  for (int32_t id : r.problem_layers) {
    const TrainingLayerHealth* l = lookup.Layer(id);
    if (l == nullptr) continue;
    std::string role;
    for (const TrainingChainLink& c : r.chain) {
      if (c.layer == id) role = c.role;
    }
    out += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td class=\"num\"><span class=\"swatch\" "
        "style=\"background:{}\"></span>{}</td><td class=\"num\"><span "
        "class=\"swatch\" style=\"background:{}\"></span>{}</td><td "
        "class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
        producers.count(id) ? " class=\"producer\"" : "",
        XmlEscape(LayerLabel(l->name)), XmlEscape(l->type),
        ScoreColour(l->score), ScoreText(l->score), ScoreColour(l->worst_score),
        ScoreText(l->worst_score),
        l->worst_step >= 0 ? std::to_string(l->worst_step) : "-",
        XmlEscape(Join(l->flags, ", ")), XmlEscape(role));
  }
  out += "</tbody>\n</table>\n";
  return out;
}

// ---- the chain on the graph -------------------------------------------------

std::string ChainDrawing(const TrainingDiagnosisResult& r,
                         const TrainingGraph& graph, const Lookup& lookup,
                         const TrainingReportOptions& options) {
  std::map<int32_t, size_t> chain_pos;  // layer -> first position
  for (size_t i = 0; i < r.chain.size(); ++i) {
    chain_pos.emplace(r.chain[i].layer, i);
  }
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (auto [a, b] : graph.edges) {
    if (a != b && lookup.Layer(a) != nullptr && lookup.Layer(b) != nullptr) {
      edges.push_back({a, b});
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  // The layers drawn: all, or around the chain and the problems.
  std::set<int32_t> drawn;
  std::string note;
  if (edges.empty()) {
    for (const TrainingChainLink& c : r.chain) {
      if (lookup.Layer(c.layer) != nullptr) drawn.insert(c.layer);
    }
    note =
        "The snapshot records no data flow between layers: only the chain's "
        "layers are drawn.";
  } else if (r.layers.size() <= options.max_drawn_layers) {
    for (const TrainingLayerHealth& l : r.layers) drawn.insert(l.layer);
  } else {
    std::set<int32_t> core;
    for (const TrainingChainLink& c : r.chain) core.insert(c.layer);
    for (int32_t p : r.problem_layers) core.insert(p);
    drawn = core;
    for (auto [a, b] : edges) {
      if (core.count(a) || core.count(b)) {
        drawn.insert(a);
        drawn.insert(b);
      }
    }
    note = fmt::format(
        "The model has {} layers, more than the {} drawn whole: the chain, "
        "the problem layers and their neighbours are drawn ({} layers).",
        r.layers.size(), options.max_drawn_layers, drawn.size());
  }
  if (drawn.empty()) return HtmlParagraph("No chain to draw.", "note");
  std::vector<GraphNode> nodes;
  std::map<int32_t, uint32_t> node_of;
  for (const TrainingLayerHealth& l : r.layers) {
    if (!drawn.count(l.layer)) continue;
    auto pos = chain_pos.find(l.layer);
    GraphNode n;
    n.label = LayerLabel(l.name);
    n.tooltip = fmt::format("{} ({}): score {} at the anomaly, worst {}{}{}",
                            LayerLabel(l.name), l.type, ScoreText(l.score),
                            ScoreText(l.worst_score),
                            l.flags.empty() ? "" : "; ", Join(l.flags, ", "));
    if (pos != chain_pos.end()) {
      const TrainingChainLink& link = r.chain[pos->second];
      bool producer = link.role == "producer";
      n.sublabel = producer ? fmt::format("producer · {}", l.type)
                            : fmt::format("{}. propagator · {}",
                                          pos->second + 1, l.type);
      n.fill = producer ? kProducerFill : kPropagatorFill;
      n.stroke = producer ? kProducerStroke : kPropagatorStroke;
      n.stroke_width = producer ? 3.5f : 2.5f;
      n.css_class = producer ? "producer" : "propagator";
      if (!link.evidence.empty()) n.tooltip += "\n" + link.evidence;
    } else {
      n.sublabel = fmt::format("{} · {}", l.type, ScoreText(l.score));
      n.fill = "#ffffff";
      n.stroke = ScoreColour(l.score);
      n.stroke_width = 2;
      n.css_class = "layer";
    }
    node_of[l.layer] = static_cast<uint32_t>(nodes.size());
    nodes.push_back(std::move(n));
  }
  std::vector<GraphEdge> gedges;
  std::map<std::pair<int32_t, int32_t>, size_t> edge_index;
  for (auto [a, b] : edges) {
    if (!node_of.count(a) || !node_of.count(b)) continue;
    edge_index[{a, b}] = gedges.size();
    GraphEdge e;
    e.from = node_of[a];
    e.to = node_of[b];
    gedges.push_back(e);
  }
  // The chain: each consecutive pair as an arrow in the direction the
  // anomaly travelled, on the data edge between them when there is one.
  for (size_t i = 0; i + 1 < r.chain.size(); ++i) {
    int32_t a = r.chain[i].layer, b = r.chain[i + 1].layer;
    if (a == b || !node_of.count(a) || !node_of.count(b)) continue;
    auto fwd = edge_index.find({a, b});
    auto back = edge_index.find({b, a});
    GraphEdge* e = nullptr;
    bool at_start = false;
    if (fwd != edge_index.end()) {
      e = &gedges[fwd->second];
    } else if (back != edge_index.end()) {
      e = &gedges[back->second];
      at_start = true;
    } else {
      // No data edge: a dashed arrow, laid out along forward order.
      const TrainingLayerHealth* la = lookup.Layer(a);
      const TrainingLayerHealth* lb = lookup.Layer(b);
      bool reverse = la->forward_order > lb->forward_order;
      GraphEdge extra;
      extra.from = node_of[reverse ? b : a];
      extra.to = node_of[reverse ? a : b];
      extra.dashed = true;
      gedges.push_back(extra);
      e = &gedges.back();
      at_start = reverse;
      e->css_class = "chain indirect";
    }
    e->stroke = kChainArrow;
    e->width = 3;
    e->arrow_at_start = at_start;
    if (e->css_class.empty()) e->css_class = "chain";
  }
  std::string out;
  if (!note.empty()) out += HtmlParagraph(note, "note");
  out += "<div class=\"drawing\">" +
         GraphSvg("The root-cause chain on the layers graph", nodes, gedges) +
         "</div>\n";
  out += fmt::format(
      "<div class=\"legend\"><span><i style=\"border-color:{};background:{}"
      "\"></i>producer (where the anomaly starts)</span><span><i "
      "style=\"border-color:{};background:{}\"></i>propagator</span><span><i "
      "style=\"border-color:#2da44e;background:#fff\"></i>other layer "
      "(outline: "
      "its score band)</span><span><b style=\"color:{}\">&#8594;</b> the "
      "anomaly's path ({})</span><span><b style=\"color:#8c959f\">&#8594;"
      "</b> data flow</span></div>\n",
      kProducerStroke, kProducerFill, kPropagatorStroke, kPropagatorFill,
      kChainArrow,
      !r.chain.empty() && r.chain.back().direction == "backward"
          ? "gradients, backward"
          : "activations, forward");
  return out;
}

std::string ChainTable(const TrainingDiagnosisResult& r, const Lookup& lookup) {
  std::string out =
      "<table id=\"chain\">\n<thead><tr><th>#</th><th>layer</th><th>role</th>"
      "<th>direction</th><th>step</th><th>evidence</th></tr></thead>\n"
      "<tbody>\n";
  for (size_t i = 0; i < r.chain.size(); ++i) {
    const TrainingChainLink& c = r.chain[i];
    out += fmt::format(
        "<tr{}><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"num\">{}</td><td>{}</td></tr>\n",
        c.role == "producer" ? " class=\"producer\"" : "", i + 1,
        XmlEscape(lookup.Name(c.layer, c.layer_name)), XmlEscape(c.role),
        XmlEscape(c.direction), c.step >= 0 ? std::to_string(c.step) : "-",
        XmlEscape(c.evidence));
  }
  out += "</tbody>\n</table>\n";
  return out;
}

// ---- causes -----------------------------------------------------------------

std::string Causes(const TrainingDiagnosisResult& r, const Lookup& lookup) {
  if (r.causes.empty()) {
    return HtmlParagraph(
        r.anomaly_step >= 0
            ? "No cause could be ranked from what the snapshot holds."
            : "Nothing to explain: no trigger fired.",
        "note");
  }
  std::string out;
  for (size_t i = 0; i < r.causes.size(); ++i) {
    const TrainingCause& c = r.causes[i];
    double pct = std::clamp(c.confidence, 0.0, 1.0) * 100;
    out += fmt::format(
        "<section class=\"cause\" data-cause=\"{}\"><h3>{}. {}</h3>\n"
        "<div class=\"meta\">in <b>{}</b>{} &#183; confidence<span "
        "class=\"meter\"><b style=\"width:{:.0f}%\"></b></span>{:.0f}%</div>\n",
        XmlAttributeEscape(c.cause), i + 1,
        XmlEscape(c.title.empty() ? c.cause : c.title),
        XmlEscape(lookup.Name(c.layer, c.layer_name)),
        c.step >= 0 ? fmt::format(" at step {}", c.step) : "", pct, pct);
    if (!c.evidence.empty()) {
      out += "<div class=\"label\">Evidence</div><ul>";
      for (const TrainingEvidence& e : c.evidence) {
        std::string figures;
        if (!std::isnan(e.value)) {
          figures = fmt::format("{} = {}", e.metric, Num(e.value));
          if (!std::isnan(e.expected)) {
            figures += fmt::format(", healthy about {}", Num(e.expected));
          }
          if (e.layer >= 0) figures += " in " + lookup.Name(e.layer);
          if (e.step >= 0) figures += fmt::format(" at step {}", e.step);
        }
        out += "<li>" + XmlEscape(e.text);
        if (!figures.empty()) {
          out += " <span class=\"note\">(" + XmlEscape(figures) + ")</span>";
        }
        out += "</li>";
      }
      out += "</ul>\n";
    }
    if (!c.fix.summary.empty()) {
      out += "<div><span class=\"label\">Fix:</span> " +
             XmlEscape(c.fix.summary) + "</div>\n";
    }
    if (!c.fix.snippet.empty()) {
      out += "<pre class=\"snippet\"><code>" + XmlEscape(c.fix.snippet) +
             "</code></pre>\n";
    }
    if (!c.fix.validation.empty()) {
      out += "<div><span class=\"label\">How to check it worked:</span> " +
             XmlEscape(c.fix.validation) + "</div>\n";
    }
    out += "</section>\n";
  }
  return out;
}

std::string SnapshotTable(const TrainingDiagnosisResult& r) {
  Section s;
  s.table = {"What was read", {"what", "value"}, {}};
  auto row = [&](std::string k, std::string v) {
    if (!v.empty()) s.table.rows.push_back({std::move(k), std::move(v)});
  };
  row("file", r.path);
  row("model", r.model);
  row("optimizer", r.optimizer);
  row("command", Join(r.command, " "));
  row("created (UTC)", r.created);
  row("host", r.host);
  row("torch", r.torch);
  row("status", r.status);
  row("steps", fmt::format("{} to {} ({} recorded)", r.first_step, r.last_step,
                           r.steps.size()));
  row("capture window", fmt::format("{} steps each side", r.capture_window));
  if (!r.captured_steps.empty()) {
    row("captured steps",
        fmt::format("{} ({} to {})", r.captured_steps.size(),
                    r.captured_steps.front(), r.captured_steps.back()));
  }
  row("layers", std::to_string(r.layers.size()));
  row("thresholds",
      fmt::format("vanishing gradient below {}, exploding above {}, dead "
                  "units from {}",
                  Num(r.vanishing), Num(r.exploding), Num(r.dead)));
  return HtmlTable(s);
}

}  // namespace

std::string ScoreColour(double score) {
  if (std::isnan(score)) return "#eaeef2";
  if (score >= 90) return "#2da44e";
  if (score >= 70) return "#9be9a8";
  if (score >= 50) return "#f2cc60";
  if (score >= 25) return "#fb8f44";
  return "#cf222e";
}

std::string ScoreBand(double score) {
  if (std::isnan(score)) return "not measured";
  if (score >= 90) return "healthy";
  if (score >= 70) return "watch";
  if (score >= 50) return "degraded";
  if (score >= 25) return "poor";
  return "critical";
}

std::string RenderTrainingHtml(const TrainingDiagnosisResult& r,
                               const TrainingGraph& graph,
                               const TrainingReportOptions& options) {
  Lookup lookup(r);
  std::string title =
      "Training diagnosis" + (r.model.empty() ? "" : ": " + r.model);
  std::string out = HtmlPageStart(title, kCss);
  out += "<main>\n" + HtmlHeading(1, title);
  out += HtmlParagraph(fmt::format("{}{}steps {} to {}, {} layers", r.path,
                                   r.path.empty() ? "" : " · ", r.first_step,
                                   r.last_step, r.layers.size()),
                       "sub");
  out += Overview(r, lookup);

  out += HtmlHeading(2, "Anomaly timeline");
  if (r.steps.empty()) {
    out += HtmlParagraph("The snapshot holds no steps.", "note");
  } else {
    out += TimelineSvg(r);
    out += fmt::format(
        "<div class=\"legend\"><span><i style=\"border-color:{0};background:"
        "{0}\"></i>loss</span><span><i style=\"border-color:{1};background:"
        "{1}\"></i>global gradient norm</span><span><i class=\"fill\" "
        "style=\"background:{2}\"></i>captured steps (tensors kept)</span>"
        "<span><b style=\"color:{3}\">|</b> a trigger fired (solid: the "
        "anomaly step)</span></div>\n",
        kLossColour, kGradColour, kCapturedFill, kTriggerColour);
  }

  out += HtmlHeading(2, "Gradient health, layer × step");
  if (r.steps.empty() || r.layers.empty()) {
    out += HtmlParagraph("No layer was measured.", "note");
  } else {
    out += HtmlParagraph(
        "Each cell is a layer's 0-100 health score at a step (rows in "
        "forward order; problem layers in red).",
        "note");
    out += "<div class=\"drawing\">" + HeatmapSvg(r, options) + "</div>\n";
    if (r.steps.size() > options.max_step_columns) {
      out += HtmlParagraph(
          fmt::format("{} steps binned into {} columns; each shows the worst "
                      "score of its steps.",
                      r.steps.size(), options.max_step_columns),
          "note");
    }
    out += ScoreLegend();
  }

  out += HtmlHeading(2, "Problem layers");
  out += ProblemTable(r, lookup);

  out += HtmlHeading(2, "Root-cause chain");
  if (r.chain.empty()) {
    out += HtmlParagraph(r.anomaly_step >= 0 ? "No propagation chain was found."
                                             : "No anomaly, no chain.",
                         "note");
  } else {
    out += HtmlParagraph(
        fmt::format("Where the anomaly started (the producer) and the layers "
                    "it travelled through, {}.",
                    r.chain.front().direction == "backward"
                        ? "backward with the gradients"
                        : "forward with the activations"),
        "note");
    out += ChainDrawing(r, graph, lookup, options);
    out += ChainTable(r, lookup);
  }

  out += HtmlHeading(2, "Causes, most likely first");
  out += Causes(r, lookup);

  out += HtmlHeading(2, "Snapshot");
  out += SnapshotTable(r);
  out += HtmlParagraph(
      "Made by model-inspector diagnose. The health score and the causes are "
      "defined in docs/design/training-diagnosis.md.",
      "note");
  out += "</main>\n" + HtmlPageEnd();
  return out;
}

}  // namespace mi::report
