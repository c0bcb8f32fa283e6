#include "cli/summary_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/common.h"
#include "encoders/json_encoder.h"
#include "encoders/table_printer.h"

namespace mi::cli {
namespace {

using encoders::RenderCsv;
using encoders::RenderMarkdown;
using encoders::RenderText;
using encoders::Table;

struct SummaryFlags {
  InputFlags input;
  std::string format = "table";
  int top = 20;
  int run = -1;
  std::string from_us;  // time range, microseconds as decimal text
  std::string to_us;
  std::string clock = "raw";
};

// Microseconds as written ("6153", "-2.5", "6153.125") to nanoseconds,
// exactly: at most three decimals, within int64.
bool ParseMicroseconds(std::string_view text, int64_t* ns) {
  bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 15 || fraction.size() > 3 ||
      (dot != std::string_view::npos && fraction.empty())) {
    return false;
  }
  int64_t value = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  int64_t frac = 0;
  for (size_t i = 0; i < 3; ++i) {
    char c = i < fraction.size() ? fraction[i] : '0';
    if (c < '0' || c > '9') return false;
    frac = frac * 10 + (c - '0');
  }
  *ns = (value * 1000 + frac) * (negative ? -1 : 1);
  return true;
}

std::string Us(double us) { return fmt::format("{:.1f}", us); }
std::string Pct(double share) { return fmt::format("{:.1f}%", share * 100); }

// Idle time of the device streams by what they waited for (whole-trace
// summaries only).
void AddIdleTable(const SummaryReport& r, std::vector<Table>* tables) {
  Table idle{"Idle time per stream (by what the stream waited for)",
             {"stream", "idle (us)", "waiting on host launch (us)",
              "waiting on another stream (us)", "other (us)"},
             {}};
  idle.numeric = {false, true, true, true, true};
  for (const StreamRow& row : r.streams) {
    if (row.idle_us < 0) continue;
    idle.rows.push_back(
        {row.name, Us(row.idle_us), Us(row.idle_waiting_host_us),
         Us(row.idle_waiting_other_stream_us), Us(row.idle_other_us)});
  }
  if (!idle.rows.empty()) tables->push_back(std::move(idle));
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= (1u << 20)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  if (bytes >= (1u << 10)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
}

// Critical path, overlap, host synchronize, memory and findings (whole-trace
// summaries only; see docs/design/analyses.md).
void AddAnalysisTables(const SummaryReport& r, std::vector<Table>* tables) {
  if (!r.has_analyses) return;
  if (r.has_critical_path) {
    const CriticalPathSummary& c = r.critical_path;
    Table path{"Critical path (calibrated clock)",
               {"length (us)", "wall (us)", "share of wall", "tasks",
                "time on the path by op type"},
               {}};
    path.full_last_column = true;
    path.numeric = {true, true, true, true, false};
    std::string ops;
    for (const auto& [op, us] : c.top_op_types_us) {
      ops += fmt::format("{}{} {} us", ops.empty() ? "" : ", ", op, Us(us));
    }
    path.rows.push_back({Us(c.length_us), Us(c.wall_us), Pct(c.share),
                         std::to_string(c.tasks), ops});
    tables->push_back(std::move(path));
  }
  if (!r.overlap.empty()) {
    Table overlap{"Copy / compute overlap",
                  {"device", "compute (us)", "data movement (us)",
                   "overlapped (us)", "overlapped share"},
                  {}};
    overlap.numeric = {false, true, true, true, true};
    for (const OverlapRow& o : r.overlap) {
      overlap.rows.push_back({o.device, Us(o.compute_us),
                              Us(o.data_movement_us), Us(o.overlap_us),
                              Pct(o.overlap_share)});
    }
    tables->push_back(std::move(overlap));
  }
  if (r.host_sync.calls > 0) {
    Table sync{"Host synchronize calls",
               {"calls", "host blocked (us)", "device idle meanwhile (us)"},
               {}};
    sync.numeric = {true, true, true};
    sync.rows.push_back({std::to_string(r.host_sync.calls),
                         Us(r.host_sync.total_us),
                         Us(r.host_sync.device_idle_us)});
    tables->push_back(std::move(sync));
  }
  if (r.has_memory) {
    const MemorySummary& m = r.memory;
    Table memory{
        fmt::format("Memory estimate ({} level, {} order)", m.level, m.order),
        {"activation peak", "weights", "allocator peak (trace)"},
        {}};
    memory.numeric = {true, true, true};
    memory.rows.push_back(
        {Bytes(m.peak_activation_bytes), Bytes(m.weight_bytes),
         m.reported_peak_bytes >= 0
             ? Bytes(static_cast<uint64_t>(m.reported_peak_bytes))
             : std::string("-")});
    tables->push_back(std::move(memory));
  }
  Table findings{
      fmt::format("Findings ({}; thresholds: model-inspector diagnose)",
                  r.findings.size()),
      {"severity", "rule", "finding"},
      {}};
  findings.full_last_column = true;
  for (const FindingInfo& f : r.findings) {
    findings.rows.push_back({f.severity, f.rule_id, f.message});
  }
  if (!findings.rows.empty()) tables->push_back(std::move(findings));
}

void AddTables(const SummaryReport& r, const SummaryOptions& options,
               const std::vector<InputFile>& inputs,
               std::vector<Table>* tables) {
  Table in{"Inputs", {"file", "format", "role"}, {}};
  for (const InputFile& f : inputs)
    in.rows.push_back({f.path, f.format, f.role});
  tables->push_back(std::move(in));
  if (options.has_window()) {
    auto us = [](int64_t ns, bool open) {
      return open ? std::string("-") : fmt::format("{:.3f}", ns / 1000.0);
    };
    Table range{"Time range (tasks clipped to it)",
                {"from (us)", "to (us)", "clock"},
                {}};
    range.rows.push_back(
        {us(options.from_ns, options.from_ns == INT64_MIN),
         us(options.to_ns, options.to_ns == INT64_MAX),
         options.clock == TraceClock::kCalibrated ? "calibrated" : "raw"});
    tables->push_back(std::move(range));
  }
  if (r.has_graph) {
    const GraphCounts& g = r.graph;
    Table graph{"Graph",
                {"framework nodes", "compiled nodes", "fused", "folded",
                 "eliminated", "inserted", "unexplained"},
                {}};
    graph.rows.push_back({std::to_string(g.framework_nodes),
                          std::to_string(g.compiled_nodes),
                          std::to_string(g.fused_framework_nodes),
                          std::to_string(g.folded_framework_nodes),
                          std::to_string(g.eliminated_framework_nodes),
                          std::to_string(g.inserted_compiled_nodes),
                          std::to_string(g.unexplained_compiled_nodes)});
    tables->push_back(std::move(graph));
  }
  if (!r.has_trace) return;
  std::string links;
  if (r.has_graph && r.linked_tasks + r.unlinked_tasks > 0) {
    links = fmt::format(", {} linked to nodes / {} unlinked", r.linked_tasks,
                        r.unlinked_tasks);
    // Why: the reasons that apply, in a parenthesis.
    std::string why;
    for (const UnlinkedReason& reason : UnlinkedReasons(r)) {
      if (reason.code == "no_graph") continue;  // this table has a graph
      why += fmt::format("{}{} {}", why.empty() ? "" : ", ", reason.count,
                         reason.text);
    }
    if (!why.empty()) links += " (" + why + ")";
  }
  if (r.aligned_host_ops > 0) {
    links +=
        fmt::format(", {} host ops aligned to graph nodes", r.aligned_host_ops);
  }
  Table ops{
      fmt::format(
          "Time by op type ({}, {} tasks{}, total {} us{})", r.basis, r.tasks,
          r.sync_tasks > 0 ? fmt::format(" ({} of them syncs and waits, not in "
                                         "the total)",
                                         r.sync_tasks)
                           : std::string(),
          Us(r.total_us), links),
      {"op type", "nodes", "calls", "total (us)", "average (us)", "share"},
      {}};
  ops.numeric = {false, true, true, true, true, true};
  for (const OpTypeRow& row : r.op_types) {
    // Syncs and waits are not part of the total the shares are of.
    ops.rows.push_back({row.op_type, std::to_string(row.nodes),
                        std::to_string(row.calls), Us(row.total_us),
                        Us(row.average_us),
                        row.kind == "sync" ? "wait" : Pct(row.share)});
  }
  tables->push_back(std::move(ops));
  Table streams{"Streams",
                {"stream", "kind", "tasks", "total (us)", "busy (us)",
                 "span (us)", "busy share"},
                {}};
  streams.numeric = {false, false, true, true, true, true, true};
  for (const StreamRow& row : r.streams) {
    streams.rows.push_back({row.name, row.kind, std::to_string(row.tasks),
                            Us(row.total_us), Us(row.busy_us), Us(row.span_us),
                            Pct(row.utilisation)});
  }
  tables->push_back(std::move(streams));
  AddIdleTable(r, tables);
  Table nodes{fmt::format("Top {} nodes", r.top_nodes.size()),
              {"node", "op type", "status", "calls", "total (us)",
               "average (us)", "share"},
              {}};
  nodes.numeric = {false, false, false, true, true, true, true};
  for (const NodeRow& row : r.top_nodes) {
    nodes.rows.push_back({row.name, row.op_type, row.status,
                          std::to_string(row.calls), Us(row.total_us),
                          Us(row.average_us), Pct(row.share)});
  }
  tables->push_back(std::move(nodes));
  Table runs{
      "Runs", {"run", "name", "duration (us)", "tasks", "task time (us)"}, {}};
  runs.numeric = {true, false, true, true, true};
  for (const RunRow& row : r.runs) {
    runs.rows.push_back({std::to_string(row.index), row.name,
                         Us(row.duration_us), std::to_string(row.tasks),
                         Us(row.task_time_us)});
  }
  tables->push_back(std::move(runs));
  AddAnalysisTables(r, tables);
}

int Run(const SummaryFlags& flags) {
  int exit_code = 0;
  SummaryOptions options;
  options.top_nodes = flags.top;
  options.run = flags.run;
  options.clock =
      flags.clock == "calibrated" ? TraceClock::kCalibrated : TraceClock::kRaw;
  if (!flags.from_us.empty() &&
      !ParseMicroseconds(flags.from_us, &options.from_ns)) {
    std::fprintf(stderr,
                 "error: --from-us: expected microseconds with at most three "
                 "decimals (e.g. 6153.5), found '%s'\n",
                 EscapeForTerminal(flags.from_us).c_str());
    return 2;
  }
  if (!flags.to_us.empty() && !ParseMicroseconds(flags.to_us, &options.to_ns)) {
    std::fprintf(stderr,
                 "error: --to-us: expected microseconds with at most three "
                 "decimals (e.g. 8434), found '%s'\n",
                 EscapeForTerminal(flags.to_us).c_str());
    return 2;
  }
  if (options.from_ns >= options.to_ns) {
    std::fprintf(stderr, "error: --from-us (%s) must be before --to-us (%s)\n",
                 EscapeForTerminal(flags.from_us).c_str(),
                 EscapeForTerminal(flags.to_us).c_str());
    return 2;
  }
  std::unique_ptr<Session> session = OpenOrReport(flags.input, &exit_code);
  if (!session) return exit_code;
  if (flags.format == "json") {
    std::fputs(encoders::EncodeJson(session->Summary(options),
                                    encoders::JsonStyle::kPretty)
                   .c_str(),
               stdout);
    return 0;
  }
  std::vector<Table> tables;
  AddTables(session->Summary(options), options, session->inputs(), &tables);
  std::string out;
  for (const Table& t : tables) {
    if (flags.format == "csv") {
      out += RenderCsv(t);
    } else if (flags.format == "markdown") {
      out += RenderMarkdown(t);
    } else {
      out += RenderText(t);
    }
    out += "\n";
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

void RegisterSummaryCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SummaryFlags>();
  CLI::App* cmd = app.add_subcommand(
      "summary",
      "time per op type (count, total, average, share), per stream and per "
      "node, with framework/compiled node counts");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  cmd->add_option("--top", flags->top, "rows in the per-node table");
  cmd->add_option("--run", flags->run,
                  "only this run / iteration (index, see the Runs table)");
  cmd->add_option("--from-us", flags->from_us,
                  "only the time range from here (microseconds in the "
                  "trace's time base; tasks are clipped to the range)");
  cmd->add_option("--to-us", flags->to_us,
                  "only the time range up to here (microseconds, exclusive)");
  cmd->add_option("--clock", flags->clock,
                  "clock of --from-us/--to-us: raw (the trace's) or "
                  "calibrated (raw + per-track clock offset)")
      ->check(CLI::IsMember({"raw", "calibrated"}));
  cmd->callback([flags, exit_code]() {
    if (flags->input.empty()) {
      throw CLI::ValidationError("summary", "give at least one PATH");
    }
    *exit_code = Run(*flags);
  });
}

}  // namespace mi::cli
