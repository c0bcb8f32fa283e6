// The diff as one self-contained HTML page: verdict, tables, an op-type bar
// chart (base vs new median time) and, per graph level, the changed
// subgraph (added, removed, changed and renamed nodes plus their direct
// neighbours) laid out with the layered layout engine.

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "report/diff_tables.h"
#include "report/escape.h"
#include "report/format.h"
#include "report/html_page.h"
#include "report/report.h"
#include "report/svg.h"

namespace mi::report {
namespace {

constexpr size_t kHtmlRows = 500;
constexpr size_t kChartRows = 25;

struct Style {
  const char* fill;
  const char* stroke;
  bool dashed;
};
// Colours of the changed-subgraph drawing, also in its legend.
const std::map<std::string, Style>& Styles() {
  static const std::map<std::string, Style> styles = {
      {"added", {"#dafbe1", "#1a7f37", false}},
      {"removed", {"#ffebe9", "#cf222e", true}},
      {"changed", {"#fff8c5", "#9a6700", false}},
      {"renamed", {"#ddf4ff", "#0969da", false}},
      {"context", {"#f6f8fa", "#8c959f", false}},
  };
  return styles;
}

std::string Legend() {
  std::string out = "<p class=\"legend\">";
  for (const char* kind :
       {"added", "removed", "changed", "renamed", "context"}) {
    const Style& s = Styles().at(kind);
    out += fmt::format(
        "<span><i style=\"background:{};border-color:{};{}\"></i>{}</span>",
        s.fill, s.stroke, s.dashed ? "border-style:dashed" : "",
        std::string(kind) == "context" ? "neighbour (unchanged)" : kind);
  }
  return out + "</p>\n";
}

const DigestLevel* FindLevel(const RunDigest* run, std::string_view level) {
  if (run == nullptr) return nullptr;
  for (const DigestLevel& l : run->levels) {
    if (l.level == level) return &l;
  }
  return nullptr;
}

// Tensor flow of one level: node index by name, producer by tensor,
// readers by tensor.
struct Flow {
  const DigestLevel* level = nullptr;
  std::unordered_map<std::string, size_t> by_name;
  std::unordered_map<std::string, size_t> producer;
  std::unordered_map<std::string, std::vector<size_t>> readers;

  explicit Flow(const DigestLevel* l) : level(l) {
    if (l == nullptr) return;
    for (size_t i = 0; i < l->nodes.size(); ++i) {
      const DigestNode& n = l->nodes[i];
      by_name.emplace(n.name, i);
      for (const DigestTensor& t : n.outputs) {
        if (!t.name.empty()) producer.emplace(t.name, i);
      }
      for (const DigestTensor& t : n.inputs) {
        if (!t.name.empty()) readers[t.name].push_back(i);
      }
    }
  }
  std::vector<size_t> Neighbours(size_t i) const {
    std::vector<size_t> out;
    const DigestNode& n = level->nodes[i];
    for (const DigestTensor& t : n.inputs) {
      auto p = producer.find(t.name);
      if (p != producer.end()) out.push_back(p->second);
    }
    for (const DigestTensor& t : n.outputs) {
      auto r = readers.find(t.name);
      if (r != readers.end())
        out.insert(out.end(), r->second.begin(), r->second.end());
    }
    return out;
  }
};

// The changed subgraph of one level diff, drawn as SVG; "" with a note in
// *note when the digests do not hold the level.
std::string ChangedSubgraph(const LevelDiff& diff, const DiffDrawing& drawing,
                            std::string* note) {
  std::string base_level = diff.level;
  std::string new_level = diff.level;
  const RunDigest* base_run = drawing.base;
  const RunDigest* new_run = drawing.next;
  if (size_t arrow = diff.level.find("->"); arrow != std::string::npos) {
    // One run's two levels: both sides come from the new run.
    base_level = diff.level.substr(0, arrow);
    new_level = diff.level.substr(arrow + 2);
    base_run = new_run;
  }
  Flow base(FindLevel(base_run, base_level));
  Flow next(FindLevel(new_run, new_level));
  if (base.level == nullptr || next.level == nullptr) {
    *note =
        "The graphs of this level were not given to the report (a "
        "digest without them), so the changed subgraph is not drawn.";
    return "";
  }
  // Drawn nodes: new-run nodes keyed by their index, base-only nodes
  // (removed, and neighbours of removed nodes that have no new
  // counterpart) by theirs.
  std::vector<GraphNode> nodes;
  std::map<size_t, uint32_t> new_slot;
  std::map<size_t, uint32_t> base_slot;
  std::unordered_map<std::string, std::string> base_to_new;  // renamed
  std::map<size_t, std::string> new_kind;
  std::map<size_t, std::string> base_kind;
  std::unordered_map<std::string, const NodeChange*> change_of_new;
  std::unordered_map<std::string, const NodeChange*> change_of_base;
  for (const NodeChange& c : diff.changes) {
    if (!c.base_name.empty() && !c.new_name.empty()) {
      base_to_new[c.base_name] = c.new_name;
    }
    if (c.kind == "removed") {
      auto b = base.by_name.find(c.base_name);
      if (b != base.by_name.end()) base_kind[b->second] = c.kind;
      change_of_base[c.base_name] = &c;
    } else {
      auto n = next.by_name.find(c.new_name);
      if (n != next.by_name.end()) new_kind[n->second] = c.kind;
      change_of_new[c.new_name] = &c;
    }
  }
  size_t left_out = 0;
  auto tooltip = [](const DigestNode& n, const NodeChange* c,
                    std::string_view kind) {
    std::string t = n.name + " (" + n.op_type + "): " + std::string(kind);
    if (c != nullptr) {
      if (c->kind == "renamed") t += ", was " + c->base_name;
      for (const std::string& line : c->changes) t += "\n" + line;
    }
    return t;
  };
  auto add_new = [&](size_t i, std::string kind) -> int64_t {
    if (auto it = new_slot.find(i); it != new_slot.end()) return it->second;
    if (nodes.size() >= drawing.max_nodes) {
      ++left_out;
      return -1;
    }
    const DigestNode& n = next.level->nodes[i];
    const Style& s = Styles().at(kind);
    auto c = change_of_new.find(n.name);
    nodes.push_back(
        {n.name, n.op_type,
         tooltip(n, c == change_of_new.end() ? nullptr : c->second, kind),
         s.fill, s.stroke, s.dashed, kind});
    new_slot[i] = static_cast<uint32_t>(nodes.size() - 1);
    return new_slot[i];
  };
  // A base node: drawn as its new counterpart when it has one.
  auto new_of_base = [&](size_t b) -> std::optional<size_t> {
    std::string name = base.level->nodes[b].name;
    if (auto r = base_to_new.find(name); r != base_to_new.end())
      name = r->second;
    if (base_kind.count(b)) return std::nullopt;
    auto n = next.by_name.find(name);
    if (n == next.by_name.end()) return std::nullopt;
    return n->second;
  };
  auto add_base = [&](size_t b, std::string kind) -> int64_t {
    if (auto n = new_of_base(b)) {
      auto k = new_kind.find(*n);
      return add_new(*n, k == new_kind.end() ? "context" : k->second);
    }
    if (auto it = base_slot.find(b); it != base_slot.end()) return it->second;
    if (nodes.size() >= drawing.max_nodes) {
      ++left_out;
      return -1;
    }
    const DigestNode& n = base.level->nodes[b];
    const Style& s = Styles().at(kind);
    auto c = change_of_base.find(n.name);
    nodes.push_back(
        {n.name, n.op_type,
         tooltip(n, c == change_of_base.end() ? nullptr : c->second, kind),
         s.fill, s.stroke, s.dashed, kind});
    base_slot[b] = static_cast<uint32_t>(nodes.size() - 1);
    return base_slot[b];
  };
  // Focus nodes first (graph order), then their neighbours.
  for (const auto& [i, kind] : new_kind) add_new(i, kind);
  for (const auto& [b, kind] : base_kind) add_base(b, kind);
  for (const auto& [i, kind] : new_kind) {
    for (size_t m : next.Neighbours(i)) {
      auto k = new_kind.find(m);
      add_new(m, k == new_kind.end() ? "context" : k->second);
    }
  }
  for (const auto& [b, kind] : base_kind) {
    for (size_t m : base.Neighbours(b)) {
      add_base(m, base_kind.count(m) ? base_kind[m] : "context");
    }
  }
  if (nodes.empty()) {
    *note = "No node of this level was added, removed, changed or renamed.";
    return "";
  }
  // Edges among the drawn nodes: the new run's tensor flow, and the base
  // run's flow into and out of the base-only nodes.
  std::set<std::pair<uint32_t, uint32_t>> edges;
  for (const auto& [i, slot] : new_slot) {
    for (const DigestTensor& t : next.level->nodes[i].inputs) {
      auto p = next.producer.find(t.name);
      if (p == next.producer.end()) continue;
      auto from = new_slot.find(p->second);
      if (from != new_slot.end()) edges.insert({from->second, slot});
    }
  }
  auto slot_of_base = [&](size_t b) -> std::optional<uint32_t> {
    if (auto it = base_slot.find(b); it != base_slot.end()) return it->second;
    if (auto n = new_of_base(b)) {
      if (auto it = new_slot.find(*n); it != new_slot.end()) return it->second;
    }
    return std::nullopt;
  };
  for (const auto& [b, slot] : base_slot) {
    const DigestNode& n = base.level->nodes[b];
    for (const DigestTensor& t : n.inputs) {
      auto p = base.producer.find(t.name);
      if (p == base.producer.end()) continue;
      if (auto from = slot_of_base(p->second)) edges.insert({*from, slot});
    }
    for (const DigestTensor& t : n.outputs) {
      auto r = base.readers.find(t.name);
      if (r == base.readers.end()) continue;
      for (size_t reader : r->second) {
        if (auto to = slot_of_base(reader)) edges.insert({slot, *to});
      }
    }
  }
  std::vector<GraphEdge> edge_list;
  for (const auto& [from, to] : edges) edge_list.push_back({from, to});
  if (left_out > 0) {
    *note = fmt::format(
        "{} more nodes of the changed subgraph not drawn "
        "(the drawing stops at {}).",
        left_out, drawing.max_nodes);
  }
  return GraphSvg("Changed subgraph, " + diff.level + " level", nodes,
                  edge_list);
}

std::string OpTypeChart(const DiffReport& r) {
  std::vector<const TimingDelta*> rows;
  for (const TimingDelta& d : r.op_types) rows.push_back(&d);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TimingDelta* a, const TimingDelta* b) {
                     return std::max(a->base.median_ns, a->next.median_ns) >
                            std::max(b->base.median_ns, b->next.median_ns);
                   });
  if (rows.size() > kChartRows) rows.resize(kChartRows);
  std::vector<BarRow> bars;
  for (const TimingDelta* d : rows) {
    bars.push_back({d->key, {d->base.median_ns, d->next.median_ns}});
  }
  return BarChartSvg("Median time per op type, base and new",
                     {{"base", "#8c959f"}, {"new", "#0969da"}}, bars);
}

}  // namespace

std::string RenderDiffHtml(const DiffReport& r, const DiffDrawing& drawing) {
  std::string model =
      r.next.meta.model.empty() ? r.base.meta.model : r.next.meta.model;
  std::string title =
      "model-inspector diff" + (model.empty() ? "" : ": " + model);
  std::string out = HtmlPageStart(title);
  out += HtmlHeading(1, title);
  bool failed = false;
  for (const RuleOutcome& o : r.rules) failed |= o.crossed;
  out += fmt::format("<div class=\"verdict {}\" id=\"verdict\">{}</div>\n",
                     r.rules.empty() ? "info"
                     : failed        ? "failed"
                                     : "passed",
                     XmlEscape(Headline(r)));
  if (r.has_timing) {
    const TimingDelta& t = r.total;
    out += HtmlParagraph(fmt::format(
        "Total {} -> {} ({}, {}; noise {}): {}", Duration(t.base.median_ns),
        Duration(t.next.median_ns), SignedDuration(t.delta_ns),
        SignedPercent(t.delta_pct), Duration(t.noise_ns), t.verdict));
  }
  std::vector<Section> sections = AllSections(r, kHtmlRows);
  for (const Section& s : sections) {
    out += HtmlTable(s);
    // The drawings follow the structure tables, the chart the op types.
    if (s.table.title == "Structure") {
      out += HtmlHeading(2, "Changed subgraphs") + Legend();
      for (const LevelDiff& l : r.structure) {
        out += HtmlHeading(3, l.level);
        std::string note;
        std::string svg = ChangedSubgraph(l, drawing, &note);
        if (!svg.empty()) {
          out += "<div class=\"drawing\">" + svg + "</div>\n";
        }
        if (!note.empty()) out += HtmlParagraph(note, "note");
      }
    }
    if (s.table.title == "Time: total and op types" && !r.op_types.empty()) {
      out += HtmlHeading(3, "Median time per op type") + OpTypeChart(r);
    }
  }
  out += HtmlParagraph(
      "Made by model-inspector diff. Times are medians over "
      "the runs of each trace; spread is p75 - p25.",
      "note");
  out += HtmlPageEnd();
  return out;
}

}  // namespace mi::report
