#include "cli/history_command.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "cli/common.h"
#include "encoders/history_json.h"
#include "encoders/table_printer.h"
#include "model_inspector/session.h"

namespace mi::cli {
namespace {

namespace fs = std::filesystem;

std::string NowUtc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

// A file name without its format extensions ("resnet18.onnx.gz" ->
// "resnet18").
std::string StemOf(const fs::path& path) {
  std::string name = path.filename().string();
  for (std::string_view ext : {".gz", ".json", ".onnx", ".om", ".pbtxt",
                               ".onnxtxt", ".prototxt", ".midigest"}) {
    if (name.size() > ext.size() &&
        name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
      name.resize(name.size() - ext.size());
    }
  }
  return name;
}

// A name for the model when neither the user nor the digest gave one.
std::string ModelNameFromInputs(const RunDigest& digest,
                                const std::vector<std::string>& paths) {
  for (const char* level : {"framework", "compiled"}) {
    for (const DigestLevel& l : digest.levels) {
      if (l.level != level || l.source_file.empty()) continue;
      fs::path file(l.source_file);
      std::string stem = StemOf(file);
      // "model.onnx" says nothing: its folder does.
      if ((stem == "model" || stem.empty()) &&
          !file.parent_path().filename().empty()) {
        return file.parent_path().filename().string();
      }
      return stem;
    }
  }
  if (paths.empty()) return "";
  fs::path first(paths.front());
  std::error_code ec;
  if (fs::is_directory(first, ec)) {
    fs::path dir = fs::absolute(first, ec).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();
    return dir.filename().string();
  }
  std::string stem = StemOf(first);
  if (stem == "model" && !first.parent_path().filename().empty()) {
    return first.parent_path().filename().string();
  }
  return stem;
}

std::string Ms(int64_t ns) {
  if (ns < 0) return "-";
  return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6);
}

std::string CountOrDash(int64_t n) { return n < 0 ? "-" : std::to_string(n); }

// An argument that names a run: its id, `latest` (the newest run, of
// `model` when given) or a baseline name.
StatusOr<int64_t> ResolveRun(const HistoryStore& store, const std::string& arg,
                             const std::string& model) {
  if (auto id = ParseInteger<int64_t>(arg)) return *id;
  if (arg == "latest") {
    MI_ASSIGN_OR_RETURN(std::vector<HistoryRun> runs, store.List(model, 1));
    if (runs.empty()) {
      return NotFoundError(
          store.path() + ": no run " +
          (model.empty() ? "is recorded" : "of model '" + model + "'") +
          ", so none is the latest");
    }
    return runs.front().id;
  }
  StatusOr<HistoryBaseline> baseline = store.Baseline(arg);
  if (!baseline.ok()) {
    return NotFoundError(store.path() + ": '" + arg +
                         "' is neither a run id, `latest` nor a baseline (" +
                         baseline.status().message() + ")");
  }
  return baseline->run_id;
}

// Cells come from the inputs (names, labels): escaped, the layout not.
void PrintTable(encoders::Table table) {
  table.title = EscapeForTerminal(table.title);
  for (auto& row : table.rows) {
    for (std::string& cell : row) cell = EscapeForTerminal(cell);
  }
  std::printf("%s", encoders::RenderText(table).c_str());
}

// One line of output naming inputs: escaped, ending in a newline.
void PrintLine(const std::string& line) {
  std::printf("%s\n", EscapeForTerminal(line).c_str());
}

struct HistoryFlags {
  std::string history;
  std::string model;
  size_t limit = 50;
  std::string format = "text";
  std::string run;
  std::vector<std::string> runs;
  std::string name;
  std::string digest_out;
  RecordFlags record;
};

void AddFormatOption(CLI::App* cmd, std::string* format) {
  cmd->add_option("--format", *format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
}

StatusOr<std::unique_ptr<HistoryStore>> OpenExisting(const std::string& flag) {
  return HistoryStore::Open(HistoryPathOrDefault(flag), /*create=*/false);
}

Status ListRuns(const HistoryFlags& f) {
  MI_ASSIGN_OR_RETURN(auto store, OpenExisting(f.history));
  MI_ASSIGN_OR_RETURN(std::vector<HistoryRun> runs,
                      store->List(f.model, f.limit));
  if (f.format == "json") {
    std::printf("%s\n",
                encoders::HistoryRunsJson(store->path(), runs, true).c_str());
    return Status::Ok();
  }
  if (runs.empty() && !f.model.empty()) {
    // Trend names the models there are.
    return store->Trend(f.model).status();
  }
  encoders::Table table;
  table.title =
      fmt::format("run history {} ({} run{}, newest first)", store->path(),
                  runs.size(), runs.size() == 1 ? "" : "s");
  table.header = {"run",         "created (UTC)", "model",
                  "label",       "commit",        "total (ms)",
                  "spread (ms)", "runs",          "nodes (framework/compiled)",
                  "host"};
  table.numeric = {true, false, false, false, false,
                   true, true,  true,  false, false};
  for (const HistoryRun& r : runs) {
    table.rows.push_back(
        {std::to_string(r.id), r.meta.created_utc, r.meta.model, r.meta.label,
         r.meta.git_commit.substr(0, 12), Ms(r.total_median_ns),
         Ms(r.total_spread_ns), std::to_string(r.run_count),
         CountOrDash(r.framework_nodes) + "/" + CountOrDash(r.compiled_nodes),
         r.meta.host});
  }
  PrintTable(table);
  return Status::Ok();
}

Status ShowRun(const HistoryFlags& f) {
  MI_ASSIGN_OR_RETURN(auto store, OpenExisting(f.history));
  MI_ASSIGN_OR_RETURN(int64_t id, ResolveRun(*store, f.run, ""));
  MI_ASSIGN_OR_RETURN(HistoryRun run, store->Get(id));
  if (!f.digest_out.empty()) {
    MI_ASSIGN_OR_RETURN(RunDigest digest, store->Digest(id));
    MI_RETURN_IF_ERROR(WriteFileAtomically(f.digest_out, RunDigestJson(digest))
                           .WithContext(f.digest_out));
  }
  MI_ASSIGN_OR_RETURN(std::vector<HistoryBaseline> all, store->Baselines());
  std::vector<std::string> baselines;
  for (const HistoryBaseline& b : all) {
    if (b.run_id == id) baselines.push_back(b.name);
  }
  if (f.format == "json") {
    std::printf(
        "%s\n",
        encoders::HistoryRunJson(store->path(), run, baselines, true).c_str());
    return Status::Ok();
  }
  const RunDigestMeta& m = run.meta;
  std::string out;
  auto line = [&out](std::string_view key, std::string_view value) {
    out += fmt::format("{:<14} {}\n", std::string(key) + ":",
                       EscapeForTerminal(value));
  };
  line("run", std::to_string(run.id));
  line("model", m.model);
  line("label", m.label);
  line("created", m.created_utc);
  line("recorded", run.recorded_utc);
  line("git commit", m.git_commit);
  line("host", m.host);
  line("tool version", m.tool_version);
  line("producers", m.producers);
  line("inputs", Join(m.inputs, ", "));
  line("formats", Join(m.formats, ", "));
  line("fingerprint", run.fingerprint);
  line("nodes", "framework " + CountOrDash(run.framework_nodes) +
                    ", compiled " + CountOrDash(run.compiled_nodes));
  if (run.total_median_ns >= 0) {
    line("total", fmt::format("{} ms median, spread {} ms, over {} run{}",
                              Ms(run.total_median_ns), Ms(run.total_spread_ns),
                              run.run_count, run.run_count == 1 ? "" : "s"));
  } else {
    line("total", "no trace");
  }
  line("baselines", baselines.empty() ? "-" : Join(baselines, ", "));
  std::printf("%s", out.c_str());
  return Status::Ok();
}

Status AddRuns(const HistoryFlags& f, int* exit_code) {
  if (f.runs.empty()) return InvalidArgumentError("history add: give RUN...");
  for (const std::string& path : f.runs) {
    DiffInputOptions input;
    input.paths = {path};
    input.digest = DigestOptionsFor(f.record);
    TerminalProgress progress(/*quiet=*/false);
    input.progress = progress.Callback();
    StatusOr<RunDigest> digest = LoadDiffInput(input);
    progress.Finish();
    if (!digest.ok()) return digest.status();
    CompleteRunMeta(f.record, input.paths, &*digest);
    MI_RETURN_IF_ERROR(RecordRun(f.record, *digest).status());
  }
  *exit_code = 0;
  return Status::Ok();
}

Status SetBaseline(const HistoryFlags& f) {
  MI_ASSIGN_OR_RETURN(auto store, OpenExisting(f.history));
  if (f.name.empty() || ParseInteger<int64_t>(f.name) || f.name == "latest") {
    return InvalidArgumentError(
        "baseline name '" + f.name +
        "': a name is not empty, not a number and not `latest` (those "
        "name runs)");
  }
  MI_ASSIGN_OR_RETURN(int64_t id, ResolveRun(*store, f.run, f.model));
  MI_RETURN_IF_ERROR(store->SetBaseline(f.name, id));
  MI_ASSIGN_OR_RETURN(HistoryRun run, store->Get(id));
  PrintLine(fmt::format(
      "baseline {} = run {} (model {}{}{}) in {}", f.name, id, run.meta.model,
      run.meta.label.empty() ? "" : ", label ", run.meta.label, store->path()));
  return Status::Ok();
}

Status ListBaselines(const HistoryFlags& f) {
  MI_ASSIGN_OR_RETURN(auto store, OpenExisting(f.history));
  MI_ASSIGN_OR_RETURN(std::vector<HistoryBaseline> all, store->Baselines());
  if (f.format == "json") {
    std::printf(
        "%s\n",
        encoders::HistoryBaselinesJson(store->path(), all, true).c_str());
    return Status::Ok();
  }
  encoders::Table table;
  table.title = fmt::format("baselines in {}", store->path());
  table.header = {"baseline", "run",        "model",
                  "label",    "total (ms)", "set (UTC)"};
  table.numeric = {false, true, false, false, true, false};
  for (const HistoryBaseline& b : all) {
    MI_ASSIGN_OR_RETURN(HistoryRun run, store->Get(b.run_id));
    table.rows.push_back({b.name, std::to_string(b.run_id), run.meta.model,
                          run.meta.label, Ms(run.total_median_ns), b.set_utc});
  }
  PrintTable(table);
  return Status::Ok();
}

Status ShowTrend(const HistoryFlags& f) {
  MI_ASSIGN_OR_RETURN(auto store, OpenExisting(f.history));
  MI_ASSIGN_OR_RETURN(std::vector<HistoryTrendPoint> points,
                      store->Trend(f.model));
  if (f.format == "json") {
    std::printf("%s\n",
                encoders::HistoryTrendJson(store->path(), f.model, points, true)
                    .c_str());
    return Status::Ok();
  }
  encoders::Table table;
  table.title = fmt::format(
      "total time of {} across {} run{} (median ± spread over each run's "
      "iterations; oldest first)",
      f.model, points.size(), points.size() == 1 ? "" : "s");
  table.header = {"run",        "created (UTC)", "commit", "label",
                  "total (ms)", "spread (ms)",   "change"};
  table.numeric = {true, false, false, false, true, true, true};
  int64_t previous = -1;
  for (const HistoryTrendPoint& p : points) {
    std::string change = "-";
    if (p.total_median_ns >= 0 && previous > 0) {
      change = fmt::format(
          "{:+.1f}%", 100.0 *
                          static_cast<double>(p.total_median_ns - previous) /
                          static_cast<double>(previous));
    }
    table.rows.push_back(
        {std::to_string(p.run_id), p.created_utc, p.git_commit.substr(0, 12),
         p.label, p.total_median_ns >= 0 ? Ms(p.total_median_ns) : "no trace",
         Ms(p.total_spread_ns), change});
    if (p.total_median_ns >= 0) previous = p.total_median_ns;
  }
  PrintTable(table);
  return Status::Ok();
}

// Runs `action` as the command's callback: an error is reported and sets
// the exit code.
template <typename Action>
void SetAction(CLI::App* cmd, int* exit_code, Action action) {
  cmd->callback([exit_code, action]() {
    Status s = action();
    *exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace

void AddHistoryPathOption(CLI::App* command, std::string* path) {
  command
      ->add_option("--history", *path,
                   "the run history file (default: $MODEL_INSPECTOR_HISTORY, "
                   "else $XDG_DATA_HOME/model-inspector/history.db, else "
                   "~/.local/share/model-inspector/history.db)")
      ->type_name("PATH");
}

std::string HistoryPathOrDefault(const std::string& flag) {
  return flag.empty() ? DefaultHistoryPath() : flag;
}

void AddRecordFlags(CLI::App* command, RecordFlags* flags,
                    bool with_record_flag, const std::string& model_option) {
  if (with_record_flag) {
    command->add_flag("--record", flags->record,
                      "record the run's digest in the run history (see "
                      "`history`)");
  }
  AddHistoryPathOption(command, &flags->history);
  command
      ->add_option(model_option, flags->model,
                   "the model's name in the run history (runs are grouped "
                   "and trended by it; default: the framework model's file "
                   "name)")
      ->type_name("NAME");
  command->add_option("--label", flags->label,
                      "free text kept with the run (a CI job id, "
                      "\"nightly\")");
  command->add_option("--commit", flags->commit,
                      "the git commit the run was made from");
}

DigestOptions DigestOptionsFor(const RecordFlags& flags) {
  DigestOptions options;
  options.meta.model = flags.model;
  options.meta.label = flags.label;
  options.meta.git_commit = flags.commit;
  return options;
}

void CompleteRunMeta(const RecordFlags& flags,
                     const std::vector<std::string>& paths, RunDigest* digest) {
  RunDigestMeta& m = digest->meta;
  if (!flags.model.empty()) m.model = flags.model;
  if (!flags.label.empty()) m.label = flags.label;
  if (!flags.commit.empty()) m.git_commit = flags.commit;
  if (m.tool_version.empty()) {
    m.tool_version = "model-inspector " + std::string(Version());
  }
  if (m.host.empty()) m.host = HostName();
  if (m.created_utc.empty()) m.created_utc = NowUtc();
  if (m.inputs.empty()) m.inputs = paths;
  if (m.model.empty()) m.model = ModelNameFromInputs(*digest, paths);
}

StatusOr<int64_t> RecordRun(const RecordFlags& flags, const RunDigest& digest,
                            std::FILE* out) {
  MI_ASSIGN_OR_RETURN(auto store,
                      HistoryStore::Open(HistoryPathOrDefault(flags.history),
                                         /*create=*/true));
  MI_ASSIGN_OR_RETURN(int64_t id, store->Add(digest));
  std::fprintf(
      out, "%s\n",
      EscapeForTerminal(fmt::format("recorded run {} (model {}) in {}", id,
                                    digest.meta.model, store->path()))
          .c_str());
  return id;
}

StatusOr<RunDigest> LoadBaselineDigest(const std::string& history_path,
                                       const std::string& name,
                                       HistoryRun* run) {
  MI_ASSIGN_OR_RETURN(auto store,
                      HistoryStore::Open(history_path, /*create=*/false));
  MI_ASSIGN_OR_RETURN(HistoryBaseline baseline, store->Baseline(name));
  if (run != nullptr) {
    MI_ASSIGN_OR_RETURN(*run, store->Get(baseline.run_id));
  }
  return store->Digest(baseline.run_id);
}

void RegisterHistoryCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<HistoryFlags>();
  CLI::App* history = app.add_subcommand(
      "history",
      "the run history: past runs' digests, named baselines, the trend of "
      "total time per model");
  history->require_subcommand(1);

  CLI::App* list = history->add_subcommand("list", "list recorded runs");
  AddHistoryPathOption(list, &f->history);
  list->add_option("--model", f->model, "only this model's runs");
  list->add_option("--limit", f->limit, "the newest N runs (0: all)")
      ->capture_default_str();
  AddFormatOption(list, &f->format);
  SetAction(list, exit_code, [f]() { return ListRuns(*f); });

  CLI::App* show =
      history->add_subcommand("show", "a recorded run's summary and metadata");
  show->add_option("run", f->run, "run id, `latest` or a baseline name")
      ->required();
  AddHistoryPathOption(show, &f->history);
  AddFormatOption(show, &f->format);
  show->add_option("--digest-out", f->digest_out,
                   "also write the run's stored digest to FILE (a digest "
                   "file `diff` and `history add` read)")
      ->type_name("FILE");
  SetAction(show, exit_code, [f]() { return ShowRun(*f); });

  CLI::App* add = history->add_subcommand(
      "add", "record runs: each RUN a run directory, a file or a digest file");
  add->add_option("runs", f->runs,
                  "runs to record: each a run directory (see `start`), one "
                  "input file, or a run digest (*.midigest.json)")
      ->required();
  AddRecordFlags(add, &f->record, /*with_record_flag=*/false, "--model");
  AddMemoryLimitOption(add);
  SetAction(add, exit_code,
            [f, exit_code]() { return AddRuns(*f, exit_code); });

  CLI::App* baseline = history->add_subcommand(
      "baseline", "named baselines (`diff --baseline`)");
  baseline->require_subcommand(1);
  CLI::App* set = baseline->add_subcommand(
      "set", "point baseline NAME at a run (replacing where it pointed)");
  set->add_option("name", f->name, "baseline name, e.g. main")->required();
  set->add_option("run", f->run,
                  "run id, `latest` (of --model when given) or another "
                  "baseline's name")
      ->required();
  set->add_option("--model", f->model, "with `latest`: this model's newest");
  AddHistoryPathOption(set, &f->history);
  SetAction(set, exit_code, [f]() { return SetBaseline(*f); });
  CLI::App* blist = baseline->add_subcommand("list", "list baselines");
  AddHistoryPathOption(blist, &f->history);
  AddFormatOption(blist, &f->format);
  SetAction(blist, exit_code, [f]() { return ListBaselines(*f); });

  CLI::App* trend = history->add_subcommand(
      "trend", "total time of a model's runs, oldest first, with spread");
  trend->add_option("model", f->model, "model name (see `history list`)")
      ->required();
  AddHistoryPathOption(trend, &f->history);
  AddFormatOption(trend, &f->format);
  SetAction(trend, exit_code, [f]() { return ShowTrend(*f); });
}

}  // namespace mi::cli
