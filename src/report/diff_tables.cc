#include "report/diff_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "base/strings.h"
#include "report/format.h"

namespace mi::report {
namespace {

void Cut(Section& s, size_t max_rows) {
  if (s.table.rows.size() > max_rows) {
    s.left_out = s.table.rows.size() - max_rows;
    s.table.rows.resize(max_rows);
  }
}

std::vector<std::string> TimingRow(const TimingDelta& d, std::string key) {
  bool has_base = d.base.samples > 0;
  bool has_new = d.next.samples > 0;
  return {std::move(key),
          has_base ? Duration(d.base.median_ns) : "-",
          has_base ? Duration(d.base.spread_ns) : "-",
          has_new ? Duration(d.next.median_ns) : "-",
          has_new ? Duration(d.next.spread_ns) : "-",
          SignedDuration(d.delta_ns),
          has_base ? SignedPercent(d.delta_pct) : "-",
          Duration(d.noise_ns),
          d.verdict};
}

const std::vector<std::string> kTimingHeader = {
    "key",   "base median", "base spread", "new median", "new spread",
    "delta", "delta %",     "noise",       "verdict"};
const std::vector<bool> kTimingNumeric = {false, true, true, true, true,
                                          true,  true, true, false};

std::string Group(const std::vector<std::string>& names) {
  return names.empty() ? "-" : Join(names, ", ");
}

std::string Compiled(const std::string& name, const std::string& op) {
  if (name.empty()) return "-";
  return op.empty() ? name : name + " (" + op + ")";
}

}  // namespace

std::string_view RuleState(const RuleOutcome& rule) {
  if (rule.crossed) return "crossed";
  if (rule.measured_on.empty() && !rule.note.empty() && rule.note != "noise") {
    return "skipped";
  }
  return "passed";
}

std::string RuleValue(const RuleOutcome& rule) {
  if (RuleState(rule) == "skipped") return "-";
  if (rule.rule.unit == "percent") return SignedPercent(rule.value);
  if (rule.rule.unit == "ns") {
    return SignedDuration(static_cast<int64_t>(std::llround(rule.value)));
  }
  return fmt::format("{:g}", rule.value);
}

Section RulesTable(const DiffReport& report, bool crossed_only) {
  Section s;
  s.table = {crossed_only ? "Rules crossed" : "Rules",
             {"rule", "result", "value", "measured on", "message"},
             {}};
  s.table.full_last_column = true;
  for (const RuleOutcome& r : report.rules) {
    if (crossed_only && !r.crossed) continue;
    std::string state(RuleState(r));
    if (state == "passed" && r.note == "noise") state = "passed (noise)";
    s.table.rows.push_back({r.rule.text, state, RuleValue(r),
                            r.measured_on.empty() ? "-" : r.measured_on,
                            r.message});
  }
  return s;
}

Section StructureTable(const DiffReport& report) {
  Section s;
  s.table = {
      "Structure",
      {"level", "base nodes", "new nodes", "matched by name",
       "matched by structure", "added", "removed", "changed", "renamed",
       "fusions lost", "fusions gained", "fusions changed", "same graph"},
      {}};
  s.table.numeric = {false, true, true, true, true, true, true,
                     true,  true, true, true, true, false};
  for (const LevelDiff& l : report.structure) {
    bool same =
        !l.base_fingerprint.empty() && l.base_fingerprint == l.new_fingerprint;
    s.table.rows.push_back(
        {l.level, std::to_string(l.base_nodes), std::to_string(l.new_nodes),
         std::to_string(l.matched_by_name),
         std::to_string(l.matched_by_structure), std::to_string(l.added),
         std::to_string(l.removed), std::to_string(l.changed),
         std::to_string(l.renamed), std::to_string(l.fusions_lost),
         std::to_string(l.fusions_gained), std::to_string(l.fusions_changed),
         same ? "yes (fingerprints equal)" : "no"});
  }
  return s;
}

Section NodeChangesTable(const DiffReport& report, size_t max_rows) {
  Section s;
  s.table = {
      "Node changes",
      {"level", "kind", "base node", "new node", "op type", "what changed"},
      {}};
  s.table.full_last_column = true;
  for (const LevelDiff& l : report.structure) {
    for (const NodeChange& c : l.changes) {
      std::string op =
          c.base_op_type.empty() || c.new_op_type.empty() ||
                  c.base_op_type == c.new_op_type
              ? (c.new_op_type.empty() ? c.base_op_type : c.new_op_type)
              : c.base_op_type + " -> " + c.new_op_type;
      std::string what = Join(c.changes, "; ");
      if (what.empty() && c.kind == "renamed") {
        what = "matched by structure, nothing else differs";
      }
      s.table.rows.push_back({l.level, c.kind,
                              c.base_name.empty() ? "-" : c.base_name,
                              c.new_name.empty() ? "-" : c.new_name, op,
                              what.empty() ? "-" : what});
    }
  }
  Cut(s, max_rows);
  return s;
}

Section FusionTable(const DiffReport& report, size_t max_rows) {
  Section s;
  s.table = {"Fusion changes",
             {"level", "kind", "base group", "base compiled node", "new group",
              "new compiled node"},
             {}};
  for (const LevelDiff& l : report.structure) {
    for (const FusionChange& f : l.fusions) {
      s.table.rows.push_back(
          {l.level, f.kind, Group(f.base_group),
           Compiled(f.base_compiled, f.base_compiled_op_type),
           Group(f.new_group),
           Compiled(f.new_compiled, f.new_compiled_op_type)});
    }
  }
  Cut(s, max_rows);
  return s;
}

Section OpCountTable(const DiffReport& report, size_t max_rows) {
  Section s;
  s.table = {"Op-type counts that changed",
             {"level", "op type", "base", "new", "delta"},
             {}};
  s.table.numeric = {false, false, true, true, true};
  for (const LevelDiff& l : report.structure) {
    for (const OpTypeShift& o : l.op_types) {
      s.table.rows.push_back(
          {l.level, o.op_type, std::to_string(o.base_count),
           std::to_string(o.new_count),
           fmt::format("{:+d}", o.new_count - o.base_count)});
    }
  }
  Cut(s, max_rows);
  return s;
}

Section TimingTable(std::string title, const std::vector<TimingDelta>& rows,
                    size_t max_rows) {
  Section s;
  s.table = {std::move(title), kTimingHeader, {}};
  s.table.numeric = kTimingNumeric;
  for (const TimingDelta& d : rows) {
    // A node is named with its level: one name can be in both.
    s.table.rows.push_back(
        TimingRow(d, d.level.empty() ? d.key : d.key + " (" + d.level + ")"));
  }
  Cut(s, max_rows);
  return s;
}

Section TopTimingTable(const DiffReport& report, size_t max_rows) {
  struct Item {
    const TimingDelta* d;
    std::string key;
  };
  std::vector<Item> items;
  auto add = [&](const std::vector<TimingDelta>& v, std::string_view kind) {
    for (const TimingDelta& d : v) {
      if (d.verdict == "same") continue;
      items.push_back({&d, d.level.empty() ? fmt::format("{} {}", kind, d.key)
                                           : fmt::format("{} {} ({})", kind,
                                                         d.key, d.level)});
    }
  };
  add(report.op_types, "op");
  add(report.streams, "stream");
  add(report.nodes, "node");
  add(report.unlinked_tasks, "task");
  std::stable_sort(
      items.begin(), items.end(), [](const Item& a, const Item& b) {
        return std::llabs(a.d->delta_ns) > std::llabs(b.d->delta_ns);
      });
  Section s;
  s.table = {"Top timing changes (beyond the noise)", kTimingHeader, {}};
  s.table.numeric = kTimingNumeric;
  for (const Item& i : items) s.table.rows.push_back(TimingRow(*i.d, i.key));
  Cut(s, max_rows);
  return s;
}

Section OverlapTable(const DiffReport& report, size_t max_rows) {
  Section s;
  s.table = {"Concurrency (overlap with other streams)",
             {"scope", "key", "base busy", "base overlapped", "new busy",
              "new overlapped", "verdict", "cost"},
             {}};
  s.table.numeric = {false, false, true, true, true, true, false, true};
  for (const OverlapChange& o : report.overlap) {
    s.table.rows.push_back({o.scope, o.key, Duration(o.base_busy_ns),
                            fmt::format("{} ({})", Duration(o.base_overlap_ns),
                                        Percent(o.base_fraction)),
                            Duration(o.new_busy_ns),
                            fmt::format("{} ({})", Duration(o.new_overlap_ns),
                                        Percent(o.new_fraction)),
                            o.verdict,
                            o.cost_ns > 0 ? "+" + Duration(o.cost_ns) : "-"});
  }
  Cut(s, max_rows);
  return s;
}

Section UnmatchedTasksTable(const DiffReport& report, size_t max_rows) {
  Section s;
  s.table = {"Tasks in one run only", {"run", "task name"}, {}};
  s.table.full_last_column = true;
  for (const std::string& n : report.unmatched_base_tasks) {
    s.table.rows.push_back({"base only", n});
  }
  for (const std::string& n : report.unmatched_new_tasks) {
    s.table.rows.push_back({"new only", n});
  }
  Cut(s, max_rows);
  return s;
}

Section RunsTable(const DiffReport& report) {
  Section s;
  s.table = {"Runs", {"", "base", "new"}, {}};
  s.table.full_last_column = true;
  const RunDigestMeta& b = report.base.meta;
  const RunDigestMeta& n = report.next.meta;
  auto row = [&](std::string what, std::string x, std::string y) {
    if (x.empty() && y.empty()) return;
    s.table.rows.push_back(
        {std::move(what), x.empty() ? "-" : x, y.empty() ? "-" : y});
  };
  row("model", b.model, n.model);
  row("label", b.label, n.label);
  row("git commit", b.git_commit, n.git_commit);
  row("inputs", Join(b.inputs, ", "), Join(n.inputs, ", "));
  row("producers", b.producers, n.producers);
  row("host", b.host, n.host);
  row("created (UTC)", b.created_utc, n.created_utc);
  auto runs = [](const DiffRunInfo& r) {
    return r.run_count > 0
               ? fmt::format("{} (from {})", r.run_count, r.runs_from)
               : std::string("no trace");
  };
  row("runs", runs(report.base), runs(report.next));
  return s;
}

std::vector<Section> AllSections(const DiffReport& report, size_t max_rows) {
  std::vector<Section> out;
  out.push_back(RunsTable(report));
  if (!report.rules.empty()) out.push_back(RulesTable(report, false));
  if (!report.structure.empty()) out.push_back(StructureTable(report));
  for (Section s :
       {NodeChangesTable(report, max_rows), FusionTable(report, max_rows),
        OpCountTable(report, max_rows)}) {
    if (!s.table.rows.empty()) out.push_back(std::move(s));
  }
  if (report.has_timing) {
    std::vector<TimingDelta> total_and_ops = {report.total};
    total_and_ops.insert(total_and_ops.end(), report.op_types.begin(),
                         report.op_types.end());
    out.push_back(
        TimingTable("Time: total and op types", total_and_ops, max_rows));
    for (Section s :
         {TimingTable("Time per stream", report.streams, max_rows),
          TimingTable("Time per node (by |delta|)", report.nodes, max_rows),
          TimingTable("Time of tasks linked to no node", report.unlinked_tasks,
                      max_rows),
          UnmatchedTasksTable(report, max_rows),
          OverlapTable(report, max_rows)}) {
      if (!s.table.rows.empty()) out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace mi::report
