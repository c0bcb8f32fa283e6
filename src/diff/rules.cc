// `--fail-on` rules (docs/design/diff.md "Rules"): parsing, the default set
// and their evaluation on a diff report.
//
//   spec    := rule ("," rule)*
//   rule    := metric [":" subject] compare value [unit]
//   metric  := total | op | stream | node | task            (time rules)
//            | nodes | added | removed | changed | renamed
//            | fusions-lost | fusions-gained | fusions-changed
//            | overlap-lost                                  (count rules)
//   subject := a name up to the comparison, or "quoted" ("" doubles a
//              quote), or * for every subject (the worst one counts)
//   compare := > | >= | < | <= | == | !=
//   value   := [+|-] number
//   unit    := % | ns | us | ms | s        (time rules: required)
//            | %                           (nodes: the relative change)
//
// Time rules measure the change of the median; a change within the noise
// never crosses one.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "diff/diff_internal.h"

namespace mi {
namespace {

constexpr std::string_view kTimeMetrics[] = {"total", "op", "stream", "node",
                                             "task"};
constexpr std::string_view kCountMetrics[] = {
    "nodes",          "added",           "removed",
    "changed",        "renamed",         "fusions-lost",
    "fusions-gained", "fusions-changed", "overlap-lost"};

bool IsTimeMetric(std::string_view m) {
  return std::find(std::begin(kTimeMetrics), std::end(kTimeMetrics), m) !=
         std::end(kTimeMetrics);
}
bool IsCountMetric(std::string_view m) {
  return std::find(std::begin(kCountMetrics), std::end(kCountMetrics), m) !=
         std::end(kCountMetrics);
}
bool NeedsSubject(std::string_view m) {
  return IsTimeMetric(m) && m != "total";
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class RuleParser {
 public:
  // `offset`: where the rule's text starts in the whole spec (columns are
  // of the spec, 1-based).
  RuleParser(std::string_view text, size_t offset, size_t index)
      : text_(text), offset_(offset), index_(index) {}

  StatusOr<DiffRule> Parse() {
    DiffRule rule;
    rule.text = std::string(Trimmed());
    SkipSpace();
    const size_t metric_start = pos_;
    while (pos_ < text_.size() &&
           (std::islower(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '-')) {
      ++pos_;
    }
    rule.metric = std::string(text_.substr(metric_start, pos_ - metric_start));
    if (rule.metric.empty()) {
      return Error(metric_start,
                   "a metric (total, op:, stream:, node:, task:, nodes, "
                   "added, removed, changed, renamed, fusions-lost, "
                   "fusions-gained, fusions-changed, overlap-lost)");
    }
    if (!IsTimeMetric(rule.metric) && !IsCountMetric(rule.metric)) {
      return Error(metric_start,
                   "a metric (total, op:, stream:, node:, task:, nodes, "
                   "added, removed, changed, renamed, fusions-lost, "
                   "fusions-gained, fusions-changed, overlap-lost), not '" +
                       rule.metric + "'");
    }
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ':') {
      if (!NeedsSubject(rule.metric)) {
        return Error(pos_,
                     "a comparison: " + rule.metric + " takes no subject");
      }
      ++pos_;
      SkipSpace();
      StatusOr<std::string> subject = Subject();
      if (!subject.ok()) return subject.status();
      rule.subject = *subject;
    } else if (NeedsSubject(rule.metric)) {
      return Error(pos_, "':' and the " + SubjectWord(rule.metric) + " (" +
                             rule.metric + ":NAME, or " + rule.metric +
                             ":* for every one)");
    }
    SkipSpace();
    const size_t cmp_start = pos_;
    for (std::string_view c : {">=", "<=", "==", "!=", ">", "<"}) {
      if (text_.substr(pos_).starts_with(c)) {
        rule.comparison = std::string(c);
        pos_ += c.size();
        break;
      }
    }
    if (rule.comparison.empty()) {
      return Error(cmp_start, "a comparison (>, >=, <, <=, ==, !=)");
    }
    SkipSpace();
    const size_t value_start = pos_;
    size_t p = pos_;
    bool negative = false;
    if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) {
      negative = text_[p] == '-';
      ++p;
    }
    double value = 0;
    const char* first = text_.data() + p;
    const char* last = text_.data() + text_.size();
    auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end == first || !std::isfinite(value)) {
      return Error(value_start, "a number (5, +5, -2.5)");
    }
    pos_ = static_cast<size_t>(end - text_.data());
    if (negative) value = -value;
    SkipSpace();
    const size_t unit_start = pos_;
    std::string_view unit = text_.substr(pos_);
    while (!unit.empty() && IsSpace(unit.back())) unit.remove_suffix(1);
    const bool time = IsTimeMetric(rule.metric);
    if (unit == "%") {
      if (!time && rule.metric != "nodes") {
        return Error(unit_start, "the end of the rule: " + rule.metric +
                                     " is a count, without a unit");
      }
      rule.unit = "percent";
      rule.threshold = value;
    } else if (unit.empty()) {
      if (time) {
        return Error(unit_start,
                     "a unit after the number: % (relative change) or ns, "
                     "us, ms, s (time change)");
      }
      rule.unit = "count";
      rule.threshold = value;
    } else {
      double scale = 0;
      if (unit == "ns") scale = 1;
      if (unit == "us" || unit == "\u00b5s") scale = 1e3;
      if (unit == "ms") scale = 1e6;
      if (unit == "s") scale = 1e9;
      if (scale == 0) {
        return Error(unit_start,
                     time ? "a unit: %, ns, us, ms or s"
                          : "the end of the rule: " + rule.metric +
                                " is a count" +
                                (rule.metric == "nodes" ? " (or %)" : ""));
      }
      if (!time) {
        return Error(unit_start, "the end of the rule: " + rule.metric +
                                     " is a count, not a time");
      }
      rule.unit = "ns";
      rule.threshold = value * scale;
    }
    return rule;
  }

 private:
  std::string_view Trimmed() const {
    std::string_view t = text_;
    while (!t.empty() && IsSpace(t.front())) t.remove_prefix(1);
    while (!t.empty() && IsSpace(t.back())) t.remove_suffix(1);
    return t;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }
  static std::string SubjectWord(std::string_view metric) {
    if (metric == "op") return "op type";
    if (metric == "task") return "task name";
    return std::string(metric) + " name";
  }
  StatusOr<std::string> Subject() {
    const size_t start = pos_;
    std::string out;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      ++pos_;
      while (true) {
        if (pos_ >= text_.size()) {
          return Error(start, "a closing '\"' for the quoted subject");
        }
        if (text_[pos_] == '"') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
            out += '"';
            pos_ += 2;
            continue;
          }
          ++pos_;
          break;
        }
        out += text_[pos_++];
      }
    } else {
      while (pos_ < text_.size() && text_[pos_] != '>' && text_[pos_] != '<' &&
             text_[pos_] != '=' && text_[pos_] != '!') {
        out += text_[pos_++];
      }
      while (!out.empty() && IsSpace(out.back())) out.pop_back();
    }
    if (out.empty()) {
      return Error(start, "a subject name (or * for every one)");
    }
    return out;
  }
  Status Error(size_t at, const std::string& expected) const {
    return InvalidArgumentError(
        fmt::format("--fail-on rule {} '{}', column {}: expected {}", index_,
                    Trimmed(), offset_ + at + 1, expected));
  }

  std::string_view text_;
  size_t offset_;
  size_t index_;
  size_t pos_ = 0;
};

bool Compares(double value, const std::string& cmp, double threshold) {
  if (cmp == ">") return value > threshold;
  if (cmp == ">=") return value >= threshold;
  if (cmp == "<") return value < threshold;
  if (cmp == "<=") return value <= threshold;
  if (cmp == "==") return value == threshold;
  return value != threshold;
}

// A time for people: "1.20 ms", "35.2 us", "800 ns".
std::string FormatNs(double ns, bool sign = false) {
  const double a = std::abs(ns);
  const char* plus = sign && ns >= 0 ? "+" : "";
  if (a >= 1e6) return fmt::format("{}{:.2f} ms", plus, ns / 1e6);
  if (a >= 1e3) return fmt::format("{}{:.2f} us", plus, ns / 1e3);
  return fmt::format("{}{:.0f} ns", plus, ns);
}

std::string FormatThreshold(const DiffRule& rule) {
  if (rule.unit == "percent") return fmt::format("{:+g}%", rule.threshold);
  if (rule.unit == "ns") return FormatNs(rule.threshold, true);
  return fmt::format("{:g}", rule.threshold);
}

std::string RuleName(const DiffRule& rule) {
  return rule.subject.empty() ? rule.metric : rule.metric + ":" + rule.subject;
}

const std::vector<TimingDelta>* SeriesOf(const DiffReport& report,
                                         const std::string& metric) {
  if (metric == "op") return &report.op_types;
  if (metric == "stream") return &report.streams;
  if (metric == "node") return &report.nodes;
  if (metric == "task") return &report.unlinked_tasks;
  return nullptr;
}

// A node's key is its name, or "base -> new" when it was renamed: either
// name picks it.
bool SubjectMatches(const std::string& metric, const std::string& subject,
                    const std::string& key) {
  if (subject == "*" || key == subject) return true;
  if (metric != "node") return false;
  return key.starts_with(subject + " -> ") || key.ends_with(" -> " + subject);
}

void ApplyTimeRule(const DiffReport& report, RuleOutcome& out) {
  const DiffRule& rule = out.rule;
  if (!report.has_timing) {
    out.message =
        RuleName(rule) + ": not measured, one of the runs has no trace";
    out.note = "no timing";
    return;
  }
  std::vector<const TimingDelta*> candidates;
  if (rule.metric == "total") {
    candidates.push_back(&report.total);
  } else {
    for (const TimingDelta& d : *SeriesOf(report, rule.metric)) {
      if (SubjectMatches(rule.metric, rule.subject, d.key)) {
        candidates.push_back(&d);
      }
    }
  }
  const bool percent = rule.unit == "percent";
  struct Measured {
    const TimingDelta* d;
    double value;
    bool compares;
    bool crossed;
  };
  std::vector<Measured> measured;
  for (const TimingDelta* d : candidates) {
    // A relative change needs a base: a key of the new run only is judged
    // by time rules in ns.
    if (percent && d->base.median_ns == 0) continue;
    const double value =
        percent ? d->delta_pct : static_cast<double>(d->delta_ns);
    const bool compares = Compares(value, rule.comparison, rule.threshold);
    measured.push_back({d, value, compares, compares && d->verdict != "same"});
  }
  if (measured.empty()) {
    out.message = RuleName(rule) + ": not measured, " +
                  (candidates.empty()
                       ? std::string("no such key in either run")
                       : std::string("present in the new run only (a "
                                     "relative change needs a base; use ns, "
                                     "us or ms)"));
    out.note = candidates.empty() ? "absent" : "no base";
    return;
  }
  // The worst: a crossing one before one only the noise kept from crossing,
  // before the rest; among equals the furthest in the rule's direction.
  const bool up = rule.comparison[0] == '>' || rule.comparison == "!=";
  auto rank = [](const Measured& m) {
    return m.crossed ? 2 : m.compares ? 1 : 0;
  };
  const Measured* worst = &measured.front();
  for (const Measured& m : measured) {
    if (rank(m) != rank(*worst)) {
      if (rank(m) > rank(*worst)) worst = &m;
      continue;
    }
    const bool further = up ? m.value > worst->value : m.value < worst->value;
    if (further) worst = &m;
  }
  const TimingDelta& d = *worst->d;
  out.crossed = worst->crossed;
  out.value = worst->value;
  out.measured_on = d.key;
  if (worst->compares && !worst->crossed) out.note = "noise";
  const double scale =
      std::max(std::abs(static_cast<double>(d.base.median_ns)),
               std::abs(static_cast<double>(d.next.median_ns)));
  auto in_unit = [&](double ns) {
    if (scale >= 1e6) return fmt::format("{:.2f}", ns / 1e6);
    if (scale >= 1e3) return fmt::format("{:.2f}", ns / 1e3);
    return fmt::format("{:.0f}", ns);
  };
  const char* unit = scale >= 1e6 ? "ms" : scale >= 1e3 ? "us" : "ns";
  const std::string what =
      rule.metric == "total" ? "total" : rule.metric + ":" + d.key;
  const std::string change =
      percent
          ? fmt::format("{:+.1f}% ({}: {} -> {} {}, noise {})", d.delta_pct,
                        FormatNs(d.delta_ns, true), in_unit(d.base.median_ns),
                        in_unit(d.next.median_ns), unit, FormatNs(d.noise_ns))
          : fmt::format("{} ({} -> {} {}, noise {})",
                        FormatNs(d.delta_ns, true), in_unit(d.base.median_ns),
                        in_unit(d.next.median_ns), unit, FormatNs(d.noise_ns));
  const std::string limit = rule.comparison + " " + FormatThreshold(rule);
  if (out.crossed) {
    out.message = what + " " + change + " " + limit;
  } else if (out.note == "noise") {
    out.message = what + " " + change + " " + limit +
                  ", but within the noise: not crossed";
  } else {
    out.message = what + " " + change + ", not " + limit;
  }
}

void ApplyCountRule(const DiffReport& report, RuleOutcome& out) {
  const DiffRule& rule = out.rule;
  int64_t value = 0;
  int64_t base_nodes = 0;
  int64_t new_nodes = 0;
  for (const LevelDiff& l : report.structure) {
    // One run's two levels against each other are no change between runs.
    if (l.level.find("->") != std::string::npos) continue;
    if (rule.metric == "nodes") {
      base_nodes += l.base_nodes;
      new_nodes += l.new_nodes;
    }
    if (rule.metric == "added") value += l.added;
    if (rule.metric == "removed") value += l.removed;
    if (rule.metric == "changed") value += l.changed;
    if (rule.metric == "renamed") value += l.renamed;
    if (rule.metric == "fusions-lost") value += l.fusions_lost;
    if (rule.metric == "fusions-gained") value += l.fusions_gained;
    if (rule.metric == "fusions-changed") value += l.fusions_changed;
  }
  if (rule.metric == "overlap-lost") value = report.overlap_lost;
  std::string shown;
  if (rule.metric == "nodes") {
    value = new_nodes - base_nodes;
    if (rule.unit == "percent") {
      out.value = base_nodes > 0 ? 100.0 * static_cast<double>(value) /
                                       static_cast<double>(base_nodes)
                                 : 0;
      shown = fmt::format("{:+.1f}% ({:+} nodes: {} -> {})", out.value, value,
                          base_nodes, new_nodes);
    } else {
      out.value = static_cast<double>(value);
      shown = fmt::format("{:+} ({} -> {})", value, base_nodes, new_nodes);
    }
  } else {
    out.value = static_cast<double>(value);
    shown = fmt::format("{}", value);
  }
  out.crossed = Compares(out.value, rule.comparison, rule.threshold);
  const std::string limit = rule.comparison + " " + FormatThreshold(rule);
  out.message =
      rule.metric + " " + shown + (out.crossed ? " " : ", not ") + limit;
}

}  // namespace

std::string_view DefaultFailOn() {
  // The run got slower beyond 5% and beyond its noise; a fusion the base
  // had is gone; work that ran beside another stream's now runs serially.
  // Structural edits (nodes, added, changed) are often the point of a
  // change and are left to the caller; per op type limits need knowledge
  // of the model.
  return "total>+5%,fusions-lost>0,overlap-lost>0";
}

StatusOr<std::vector<DiffRule>> ParseFailOn(std::string_view spec) {
  std::vector<DiffRule> rules;
  bool all_space = true;
  for (char c : spec) all_space &= IsSpace(c);
  if (all_space) return rules;
  size_t start = 0;
  size_t index = 1;
  while (start <= spec.size()) {
    // A rule ends at a comma outside quotes.
    size_t end = start;
    bool quoted = false;
    while (end < spec.size() && (quoted || spec[end] != ',')) {
      if (spec[end] == '"') quoted = !quoted;
      ++end;
    }
    std::string_view text = spec.substr(start, end - start);
    RuleParser parser(text, start, index);
    StatusOr<DiffRule> rule = parser.Parse();
    if (!rule.ok()) return rule.status();
    rules.push_back(std::move(*rule));
    start = end + 1;
    ++index;
  }
  return rules;
}

void ApplyDiffRules(const std::vector<DiffRule>& rules, DiffReport& report) {
  report.rules.clear();
  report.failed = false;
  for (const DiffRule& rule : rules) {
    RuleOutcome out;
    out.rule = rule;
    if (IsTimeMetric(rule.metric)) {
      ApplyTimeRule(report, out);
    } else {
      ApplyCountRule(report, out);
    }
    report.failed |= out.crossed;
    report.rules.push_back(std::move(out));
  }
}

}  // namespace mi
