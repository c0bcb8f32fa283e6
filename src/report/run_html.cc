// One run as a self-contained HTML page (`model-inspector report RUN`):
// what was read, the time per op type (table and bar chart), streams, the
// slowest nodes, and each graph level drawn with the layered layout.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "layout/op_palette.h"
#include "report/diff_tables.h"
#include "report/format.h"
#include "report/html_page.h"
#include "report/report.h"
#include "report/svg.h"

namespace mi::report {
namespace {

constexpr size_t kChartRows = 25;
constexpr size_t kNodeRows = 30;

// Median and (p75 - p25) of a per-run series, linear interpolation between
// closest ranks (the diff's TimingStat definition).
double Quantile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return static_cast<double>(v[lo]) + frac * static_cast<double>(v[hi] - v[lo]);
}
int64_t Median(const std::vector<int64_t>& v) {
  return std::llround(Quantile(v, 0.5));
}
int64_t Spread(const std::vector<int64_t>& v) {
  return std::llround(Quantile(v, 0.75) - Quantile(v, 0.25));
}

Section SeriesTable(std::string title, const std::vector<DigestSeries>& rows,
                    int64_t total_median, size_t max_rows) {
  Section s;
  s.table = {std::move(title),
             {"key", "median", "spread", "share of total", "tasks per run",
              "overlapped with other streams"},
             {}};
  s.table.numeric = {false, true, true, true, true, true};
  std::vector<const DigestSeries*> sorted;
  for (const DigestSeries& d : rows) sorted.push_back(&d);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const DigestSeries* a, const DigestSeries* b) {
                     return Median(a->run_ns) > Median(b->run_ns);
                   });
  for (const DigestSeries* d : sorted) {
    int64_t m = Median(d->run_ns);
    s.table.rows.push_back(
        {d->key, Duration(m), Duration(Spread(d->run_ns)),
         total_median > 0 ? Percent(static_cast<double>(m) / total_median)
                          : "-",
         std::to_string(Median(d->count)), Duration(Median(d->overlapped_ns))});
  }
  if (s.table.rows.size() > max_rows) {
    s.left_out = s.table.rows.size() - max_rows;
    s.table.rows.resize(max_rows);
  }
  return s;
}

std::string LevelDrawing(const DigestLevel& level,
                         const RunReportOptions& options) {
  if (level.nodes.size() > options.max_drawn_nodes) {
    return HtmlParagraph(
        fmt::format("The {} graph has {} nodes, more than the {} drawn here; "
                    "`model-inspector open` shows it whole.",
                    level.level, level.nodes.size(), options.max_drawn_nodes),
        "note");
  }
  std::unordered_map<std::string, uint32_t> producer;
  for (size_t i = 0; i < level.nodes.size(); ++i) {
    for (const DigestTensor& t : level.nodes[i].outputs) {
      if (!t.name.empty()) producer.emplace(t.name, static_cast<uint32_t>(i));
    }
  }
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  for (size_t i = 0; i < level.nodes.size(); ++i) {
    const DigestNode& n = level.nodes[i];
    std::string tooltip = n.name + " (" + n.op_type + ")";
    if (!n.run_ns.empty()) tooltip += ": " + Duration(Median(n.run_ns));
    if (!n.fused_from.empty())
      tooltip += "\nfused from " + Join(n.fused_from, ", ");
    nodes.push_back(
        {n.name, n.op_type, tooltip, layout::CssHex(layout::OpFill(n.op_type)),
         layout::CssHex(layout::OpOutline(n.op_type)), false, "op"});
    for (const DigestTensor& t : n.inputs) {
      auto p = producer.find(t.name);
      if (p != producer.end()) {
        edges.push_back({p->second, static_cast<uint32_t>(i)});
      }
    }
  }
  if (nodes.empty()) return HtmlParagraph("The graph has no nodes.", "note");
  return "<div class=\"drawing\">" +
         GraphSvg("The " + level.level + " graph", nodes, edges) + "</div>\n";
}

}  // namespace

std::string RenderRunHtml(const RunDigest& run,
                          const RunReportOptions& options) {
  const RunDigestMeta& m = run.meta;
  std::string title =
      "model-inspector report" + (m.model.empty() ? "" : ": " + m.model);
  std::string out = HtmlPageStart(title);
  out += HtmlHeading(1, title);
  {
    Section s;
    s.table = {"Run", {"what", "value"}, {}};
    auto row = [&](std::string k, std::string v) {
      if (!v.empty()) s.table.rows.push_back({std::move(k), std::move(v)});
    };
    row("model", m.model);
    row("label", m.label);
    row("git commit", m.git_commit);
    row("inputs", Join(m.inputs, ", "));
    row("formats", Join(m.formats, ", "));
    row("producers", m.producers);
    row("host", m.host);
    row("created (UTC)", m.created_utc);
    row("model-inspector", m.tool_version);
    row("runs", run.has_trace()
                    ? fmt::format("{} (from {})", run.run_count, run.runs_from)
                    : std::string("no trace"));
    if (run.has_trace()) {
      row("time per run (median)", Duration(Median(run.total.run_ns)));
      row("spread (p75 - p25)", Duration(Spread(run.total.run_ns)));
    }
    out += HtmlTable(s);
  }
  if (!run.levels.empty()) {
    Section s;
    s.table = {"Graph levels",
               {"level", "nodes", "op types", "format", "producer", "file",
                "fingerprint"},
               {}};
    s.table.numeric = {false, true, true, false, false, false, false};
    for (const DigestLevel& l : run.levels) {
      std::vector<std::string> ops;
      for (const DigestNode& n : l.nodes) ops.push_back(n.op_type);
      std::sort(ops.begin(), ops.end());
      ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
      s.table.rows.push_back({l.level, std::to_string(l.nodes.size()),
                              std::to_string(ops.size()), l.format, l.producer,
                              l.source_file, l.fingerprint});
    }
    out += HtmlTable(s);
  }
  if (run.has_trace()) {
    int64_t total = Median(run.total.run_ns);
    out += HtmlHeading(2, "Time per op type");
    std::vector<const DigestSeries*> sorted;
    for (const DigestSeries& d : run.op_types) sorted.push_back(&d);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const DigestSeries* a, const DigestSeries* b) {
                       return Median(a->run_ns) > Median(b->run_ns);
                     });
    if (sorted.size() > kChartRows) sorted.resize(kChartRows);
    std::vector<BarRow> bars;
    for (const DigestSeries* d : sorted) {
      bars.push_back({d->key, {Median(d->run_ns)}});
    }
    if (!bars.empty()) {
      out +=
          BarChartSvg("Median time per op type", {{"median", "#0969da"}}, bars);
    }
    out += HtmlTable(SeriesTable("Op types", run.op_types, total, 500));
    out += HtmlHeading(2, "Streams");
    out += HtmlTable(SeriesTable("Streams", run.streams, total, 500));
    if (!run.unlinked_tasks.empty()) {
      out += HtmlTable(SeriesTable("Tasks linked to no node",
                                   run.unlinked_tasks, total, 50));
    }
    Section nodes;
    nodes.table = {"Slowest nodes",
                   {"level", "node", "op type", "median", "spread",
                    "overlapped with other streams"},
                   {}};
    nodes.table.numeric = {false, false, false, true, true, true};
    struct Timed {
      const DigestLevel* level;
      const DigestNode* node;
      int64_t median;
    };
    std::vector<Timed> timed;
    for (const DigestLevel& l : run.levels) {
      for (const DigestNode& n : l.nodes) {
        if (!n.run_ns.empty()) timed.push_back({&l, &n, Median(n.run_ns)});
      }
    }
    std::stable_sort(
        timed.begin(), timed.end(),
        [](const Timed& a, const Timed& b) { return a.median > b.median; });
    for (const Timed& t : timed) {
      if (nodes.table.rows.size() == kNodeRows) {
        nodes.left_out = timed.size() - kNodeRows;
        break;
      }
      nodes.table.rows.push_back({t.level->level, t.node->name, t.node->op_type,
                                  Duration(t.median),
                                  Duration(Spread(t.node->run_ns)),
                                  Duration(Median(t.node->overlapped_ns))});
    }
    if (!nodes.table.rows.empty()) out += HtmlTable(nodes);
  } else {
    out += HtmlParagraph("No trace was given: no timing.", "note");
  }
  for (const DigestLevel& l : run.levels) {
    out += HtmlHeading(2, "The " + l.level + " graph");
    out += LevelDrawing(l, options);
  }
  out += HtmlParagraph(
      "Made by model-inspector report. Times are medians "
      "over the runs of the trace; spread is p75 - p25.",
      "note");
  out += HtmlPageEnd();
  return out;
}

}  // namespace mi::report
