#include "cli/path_command.h"

#include <cstdio>
#include <map>
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

using encoders::RenderText;
using encoders::Table;

struct PathFlags {
  InputFlags input;
  bool critical = false;
  std::string node;
  std::string level;
  int run = -1;
  std::string clock = "calibrated";
  bool json = false;
  int top = 30;
};

std::string Us(int64_t ns) { return fmt::format("{:.1f}", ns / 1000.0); }
std::string Pct(double share) { return fmt::format("{:.1f}%", share * 100); }

std::string CriticalPathText(const CriticalPathResult& r, int top) {
  int64_t length = r.length_ns;
  int64_t busy = r.busy_ns;
  std::string scope =
      r.run ? fmt::format("run {}", *r.run) : std::string("whole trace");
  std::string out = fmt::format(
      "Critical path ({} clock, {}): {} us of {} us wall ({}), {} tasks; "
      "tasks ran {} us, waits {} us\n\n",
      r.clock, scope, Us(length), Us(r.wall_ns), Pct(r.share), r.tasks.size(),
      Us(busy), Us(length - busy));
  auto share_of_path = [length](int64_t ns) {
    return length > 0 ? Pct(static_cast<double>(ns) / length) : Pct(0);
  };
  std::map<int64_t, std::string> track_names;
  Table tracks{"Path time by track", {"track", "time (us)", "share"}, {}};
  tracks.numeric = {false, true, true};
  for (const auto& t : r.by_track) {
    track_names[t.track] = t.name;
    tracks.rows.push_back({t.name, Us(t.ns), share_of_path(t.ns)});
  }
  Table ops{"Path time by op type", {"op type", "time (us)", "share"}, {}};
  ops.numeric = {false, true, true};
  for (const auto& o : r.by_op_type) {
    ops.rows.push_back({o.label, Us(o.ns), share_of_path(o.ns)});
  }
  Table waits{"Waits on the path, by what the next task waited for",
              {"dependency", "time (us)", "share"},
              {}};
  waits.numeric = {false, true, true};
  for (const auto& o : r.waits) {
    waits.rows.push_back({o.label, Us(o.ns), share_of_path(o.ns)});
  }
  const auto& steps = r.steps;
  // Times from the path's start: traces often count from an epoch.
  const int64_t path_start = r.start_ns;
  Table path{
      steps.size() > static_cast<size_t>(top)
          ? fmt::format("Path tasks (first {} of {}; --top)", top, steps.size())
          : std::string("Path tasks"),
      {"task", "name", "op type", "track", "start (us)", "duration (us)", "via",
       "wait (us)"},
      {}};
  path.numeric = {true, false, false, false, true, true, false, true};
  for (size_t i = 0; i < steps.size() && i < static_cast<size_t>(top); ++i) {
    const CriticalPathStep& s = steps[i];
    auto name = track_names.find(s.track);
    path.rows.push_back(
        {std::to_string(s.task), s.name, s.op_type,
         name != track_names.end() ? name->second : std::to_string(s.track),
         Us(s.start_ns - path_start), Us(s.end_ns - s.start_ns), s.via,
         Us(s.wait_ns)});
  }
  for (const Table* t : {&tracks, &ops, &waits, &path}) {
    out += RenderText(*t) + "\n";
  }
  return out;
}

std::string NodeNames(const Session& session, const std::string& level,
                      const std::vector<uint32_t>& ids, size_t limit) {
  std::string out;
  size_t shown = 0;
  for (uint32_t id : ids) {
    if (shown == limit) {
      out += fmt::format(", ... ({} more)", ids.size() - limit);
      break;
    }
    auto details = session.NodeDetails(level, id);
    std::string name = details.ok() ? details->name : std::to_string(id);
    out += (shown == 0 ? "" : ", ") + EscapeForTerminal(name);
    ++shown;
  }
  return out;
}

int Run(const PathFlags& flags) {
  int exit_code = 0;
  std::unique_ptr<Session> session = OpenOrReport(flags.input, &exit_code);
  if (!session) return exit_code;
  if (flags.critical) {
    TimingRequest request;
    request.run = flags.run;
    request.clock =
        flags.clock == "raw" ? TraceClock::kRaw : TraceClock::kCalibrated;
    auto path = session->CriticalPath(request);
    if (!path.ok()) return ReportError(path.status());
    if (path->tasks.empty()) {
      return ReportError(InvalidArgumentError(
          "no tasks to build a critical path from: give a trace (an ONNX "
          "Runtime profile, a PyTorch or Ascend profiler trace)"));
    }
    std::fputs(flags.json ? encoders::EncodeJson(*path).c_str()
                          : CriticalPathText(*path, flags.top).c_str(),
               stdout);
    return 0;
  }
  std::string level = flags.level;
  if (level.empty()) {
    std::vector<std::string> levels = session->Levels();
    if (levels.empty()) {
      return ReportError(InvalidArgumentError(
          "--node needs a model among the inputs; they hold none"));
    }
    level = levels.front();
  }
  auto id = session->FindNodeId(level, flags.node);
  if (!id.ok()) return ReportError(id.status());
  auto paths = session->NodePaths(level, id.value());
  if (!paths.ok()) return ReportError(paths.status());
  if (flags.json) {
    std::fputs(encoders::EncodeJson(*paths).c_str(), stdout);
    return 0;
  }
  const NodePathsResult& j = *paths;
  constexpr size_t kNamesShown = 20;
  std::string out = fmt::format(
      "Node {} ({} level, id {}): {} task{} of its own\n"
      "{} ancestors ({} tasks): {}\n"
      "{} descendants ({} tasks): {}\n",
      EscapeForTerminal(flags.node), level, id.value(), j.node_tasks.size(),
      j.node_tasks.size() == 1 ? "" : "s", j.ancestors.size(),
      j.ancestor_tasks.size(),
      NodeNames(*session, level, j.ancestors, kNamesShown),
      j.descendants.size(), j.descendant_tasks.size(),
      NodeNames(*session, level, j.descendants, kNamesShown));
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

void RegisterPathCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<PathFlags>();
  CLI::App* cmd = app.add_subcommand(
      "path",
      "the critical path of a run (--critical), or a node's ancestors and "
      "descendants with their tasks (--node NAME)");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  auto* critical = cmd->add_flag(
      "--critical", flags->critical,
      "the longest dependency chain by time: its tasks, time per track and "
      "op type, and what it waited on");
  auto* node = cmd->add_option("--node", flags->node,
                               "a node's name (or #ID): every node on a "
                               "path from "
                               "the graph inputs to it and from it to the "
                               "outputs, with their tasks");
  critical->excludes(node);
  cmd->add_option("--level", flags->level,
                  "graph level of --node (default: the first present of "
                  "framework, compiled)")
      ->check(LevelValidator());
  cmd->add_option("--run", flags->run,
                  "only this run / iteration (index, see `summary`'s Runs "
                  "table); default the whole trace");
  cmd->add_option("--clock", flags->clock,
                  "task times: calibrated (raw + clock offset, the default) "
                  "or raw")
      ->check(CLI::IsMember({"raw", "calibrated"}));
  cmd->add_option("--top", flags->top, "path tasks listed (text output)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", flags->json,
                "print JSON (docs/reference/http-api.md, Analyses)");
  cmd->callback([flags, exit_code]() {
    if (flags->input.empty()) {
      throw CLI::ValidationError("path", "give at least one PATH");
    }
    if (!flags->critical && flags->node.empty()) {
      throw CLI::ValidationError("path", "give --critical or --node NAME");
    }
    *exit_code = Run(*flags);
  });
}

}  // namespace mi::cli
