// The terminal and Markdown reports of a diff.

#include <fmt/format.h>

#include "base/strings.h"
#include "report/diff_tables.h"
#include "report/escape.h"
#include "report/format.h"
#include "report/report.h"

namespace mi::report {
namespace {

constexpr size_t kTextRows = 50;
constexpr size_t kMarkdownRows = 15;

std::string TotalLine(const DiffReport& r) {
  if (!r.has_timing) return "no timing (a run without a trace)";
  const TimingDelta& t = r.total;
  return fmt::format("total {} -> {} ({}, {}; noise {})",
                     Duration(t.base.median_ns), Duration(t.next.median_ns),
                     SignedDuration(t.delta_ns), SignedPercent(t.delta_pct),
                     Duration(t.noise_ns)) +
         (t.verdict.empty() ? "" : ": " + t.verdict);
}

std::string SideName(const DiffRunInfo& r, std::string_view fallback) {
  std::string s = r.meta.label.empty() ? std::string(fallback) : r.meta.label;
  if (!r.meta.git_commit.empty()) s += " @ " + r.meta.git_commit;
  return s;
}

std::string MarkdownTable(const Section& s) {
  const encoders::Table& t = s.table;
  std::string out;
  out += "|";
  for (const std::string& h : t.header) out += " " + MarkdownEscape(h) + " |";
  out += "\n|";
  for (size_t c = 0; c < t.header.size(); ++c) {
    bool numeric = c < t.numeric.size() && t.numeric[c];
    out += numeric ? " ---: |" : " --- |";
  }
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const std::string& cell : row) {
      out += " " + MarkdownEscape(cell) + " |";
    }
    out += "\n";
  }
  if (s.left_out > 0) {
    out += fmt::format(
        "\n{} more not shown (the JSON or HTML report lists "
        "them all).\n",
        s.left_out);
  }
  return out;
}

}  // namespace

std::string Headline(const DiffReport& r) {
  size_t crossed = 0;
  for (const RuleOutcome& o : r.rules) crossed += o.crossed ? 1 : 0;
  if (r.rules.empty()) return "PASSED: no rules";
  if (crossed == 0) {
    return fmt::format("PASSED: none of {} rule{} crossed", r.rules.size(),
                       r.rules.size() == 1 ? "" : "s");
  }
  return fmt::format("FAILED: {} of {} rule{} crossed", crossed, r.rules.size(),
                     r.rules.size() == 1 ? "" : "s");
}

std::string RenderDiffText(const DiffReport& r) {
  // Each line escaped on its own: a name holding a newline must not start
  // a line of its own.
  std::string out;
  for (const std::string& line :
       {"model-inspector diff: " + Headline(r),
        "base: " + SideName(r.base, "base"), "new:  " + SideName(r.next, "new"),
        TotalLine(r)}) {
    out += EscapeForTerminal(line) + "\n";
  }
  out += "\n";
  for (const Section& s : AllSections(r, kTextRows)) {
    out += encoders::RenderText(s.table) + "\n";
    if (s.left_out > 0) {
      out += fmt::format(
          "({} more rows not shown; --format json lists them "
          "all)\n",
          s.left_out);
    }
    out += "\n";
  }
  return out;
}

std::string RenderDiffMarkdown(const DiffReport& r) {
  std::string out;
  bool failed = false;
  for (const RuleOutcome& o : r.rules) failed |= o.crossed;
  std::string model =
      r.next.meta.model.empty() ? r.base.meta.model : r.next.meta.model;
  out += fmt::format("## {} model-inspector diff{}: {}\n\n",
                     failed ? ":x:" : ":white_check_mark:",
                     model.empty() ? "" : " of " + MarkdownEscape(model),
                     MarkdownEscape(Headline(r)));
  out += fmt::format(
      "**{}** → **{}** · {}\n\n", MarkdownEscape(SideName(r.base, "base")),
      MarkdownEscape(SideName(r.next, "new")), MarkdownEscape(TotalLine(r)));
  if (failed) {
    out += "### Rules crossed\n\n" +
           MarkdownTable(RulesTable(r, /*crossed_only=*/true)) + "\n";
  }
  if (!r.rules.empty()) {
    Section all = RulesTable(r, false);
    out += fmt::format("<details><summary>All {} rules</summary>\n\n",
                       r.rules.size()) +
           MarkdownTable(all) + "\n</details>\n\n";
  }
  if (r.has_timing) {
    Section top = TopTimingTable(r, kMarkdownRows);
    out += "### Top timing changes\n\n";
    if (top.table.rows.empty()) {
      out += "No op type, stream or node changed beyond the noise.\n\n";
    } else {
      out += MarkdownTable(top) + "\n";
    }
  }
  if (!r.structure.empty()) {
    out += "### Structure\n\n" + MarkdownTable(StructureTable(r)) + "\n";
    Section changes = NodeChangesTable(r, kMarkdownRows);
    if (!changes.table.rows.empty()) {
      out += "#### Node changes\n\n" + MarkdownTable(changes) + "\n";
    }
    Section fusions = FusionTable(r, kMarkdownRows);
    if (!fusions.table.rows.empty()) {
      out += "#### Fusion changes\n\n" + MarkdownTable(fusions) + "\n";
    }
    Section counts = OpCountTable(r, kMarkdownRows);
    if (!counts.table.rows.empty()) {
      out += "#### Op-type counts\n\n" + MarkdownTable(counts) + "\n";
    }
  }
  Section overlap = OverlapTable(r, kMarkdownRows);
  if (!overlap.table.rows.empty()) {
    out += "### Concurrency\n\n" + MarkdownTable(overlap) + "\n";
  }
  return out;
}

}  // namespace mi::report
