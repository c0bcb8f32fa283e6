#include "cli/summary_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/common.h"
#include "cli/table_printer.h"

namespace mi::cli {
namespace {

struct SummaryFlags {
  InputFlags input;
  std::string format = "table";
  int top = 20;
  int run = -1;
};

std::string Us(double us) { return fmt::format("{:.1f}", us); }
std::string Pct(double share) { return fmt::format("{:.1f}%", share * 100); }

void AddTables(const SummaryReport& r, const std::vector<InputFile>& inputs,
               std::vector<Table>* tables) {
  Table in{"Inputs", {"file", "format", "role"}, {}};
  for (const InputFile& f : inputs)
    in.rows.push_back({f.path, f.format, f.role});
  tables->push_back(std::move(in));
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
    auto add = [&why](uint64_t n, std::string_view what) {
      if (n == 0) return;
      why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, what);
    };
    add(r.unlinked_without_node_name, "name no node");
    add(r.unlinked_unknown_node, "name a node the graphs lack");
    if (!why.empty()) links += " (" + why + ")";
  }
  if (r.aligned_host_ops > 0) {
    links +=
        fmt::format(", {} host ops aligned to graph nodes", r.aligned_host_ops);
  }
  Table ops{
      fmt::format("Time by op type ({}, {} tasks, total {} us{})", r.basis,
                  r.tasks, Us(r.total_us), links),
      {"op type", "nodes", "calls", "total (us)", "average (us)", "share"},
      {}};
  ops.numeric = {false, true, true, true, true, true};
  for (const OpTypeRow& row : r.op_types) {
    ops.rows.push_back({row.op_type, std::to_string(row.nodes),
                        std::to_string(row.calls), Us(row.total_us),
                        Us(row.average_us), Pct(row.share)});
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
}

int Run(const SummaryFlags& flags) {
  int exit_code = 0;
  std::unique_ptr<Session> session = OpenOrReport(flags.input, &exit_code);
  if (!session) return exit_code;
  SummaryOptions options;
  options.top_nodes = flags.top;
  options.run = flags.run;
  if (flags.format == "json") {
    std::fputs(session->SummaryJson(options).c_str(), stdout);
    return 0;
  }
  std::vector<Table> tables;
  AddTables(session->Summary(options), session->inputs(), &tables);
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
  cmd->callback([flags, exit_code]() {
    if (flags->input.empty()) {
      throw CLI::ValidationError("summary", "give at least one PATH");
    }
    *exit_code = Run(*flags);
  });
}

}  // namespace mi::cli
