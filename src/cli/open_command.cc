#include "cli/open_command.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "cli/common.h"
#include "cli/demo_run.h"
#include "encoders/json_encoder.h"
#include "model_inspector/cluster.h"
#include "model_inspector/history.h"
#include "model_inspector/saved_session.h"
#include "model_inspector/session.h"
#include "server/assets.h"
#include "server/probe_rerun.h"
#include "server/server.h"
#include "server/session_file_api.h"

extern char** environ;

namespace mi::cli {
namespace {

namespace fs = std::filesystem;

struct OpenFlags {
  std::vector<std::string> paths;                // one run each
  std::vector<std::vector<std::string>> groups;  // --run: files of one run
  std::string host = "127.0.0.1";
  int port = 0;
  std::string token;
  bool no_browser = false;
  bool keep_going = false;
  bool no_calibrate = false;
  bool no_cluster = false;
  bool verbose = false;
  bool quiet = false;
  // --history PATH: the run history the UI's trend chart reads (only when
  // given; the server never writes to it).
  std::string history;
  // --session PATH: where the UI's "save session" writes (`open
  // session.mis` writes back to that file unless this names another).
  std::string session;
  // --inputs X.npy: model inputs the UI's re-run offers.
  std::vector<std::string> inputs;
  // Names of the runs of `groups`, in order, where a saved session gave
  // them.
  std::vector<std::string> run_names;
};

std::string RunName(const std::vector<std::string>& paths) {
  std::filesystem::path p(paths.front());
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();  // "dir/"
  if (name.empty()) name = paths.front();
  if (paths.size() > 1) name += fmt::format(" (+{})", paths.size() - 1);
  return name;
}

// The demo run unpacked into a private temporary folder (removed when the
// server stops): the binary carries it, so it works without the source
// tree.
class UnpackedDemo {
 public:
  UnpackedDemo() = default;
  UnpackedDemo(const UnpackedDemo&) = delete;
  UnpackedDemo& operator=(const UnpackedDemo&) = delete;
  ~UnpackedDemo() {
    if (root_.empty()) return;
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  Status Unpack() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
        "/model-inspector-demo-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return IoError(pattern +
                     ": could not create a folder for the bundled demo run; "
                     "set TMPDIR to a writable folder");
    }
    root_ = pattern;
    for (const DemoFile& f : DemoRunFiles()) {
      fs::path path = fs::path(root_) / "resnet18" / f.path;
      std::error_code ec;
      fs::create_directories(path.parent_path(), ec);
      Status written =
          ec ? IoError(path.parent_path().string() +
                       ": cannot create directory: " + ec.message())
             : WriteFileAtomically(path.string(), f.data);
      if (!written.ok()) {
        return written.WithContext("the bundled demo run");
      }
    }
    return Status::Ok();
  }

  // The folder holding the demo ("<tmp>/model-inspector-demo-XXXXXX").
  const std::string& root() const { return root_; }
  std::string entry() const {
    return (fs::path(root_) / "resnet18" / DemoRunEntry()).string();
  }

 private:
  std::string root_;
};

// Model files beside a trace-only run's traces: what could give it a graph
// (`open --run MODEL TRACE`). Named by extension only: opening them to be
// sure would cost as much as loading them.
std::vector<std::string> PairCandidates(const Session& session) {
  static constexpr std::string_view kModelExtensions[] = {".onnx", ".om",
                                                          ".pbtxt"};
  std::vector<std::string> out;
  std::vector<fs::path> dirs;
  for (const InputFile& f : session.inputs()) {
    if (f.role != "trace") continue;
    fs::path dir = fs::path(f.path).parent_path();
    if (dir.empty()) dir = ".";
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
      dirs.push_back(dir);
    }
  }
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (out.size() >= 20) break;
      std::string ext = entry.path().extension().string();
      bool model =
          std::find(std::begin(kModelExtensions), std::end(kModelExtensions),
                    ext) != std::end(kModelExtensions);
      if (model && entry.is_regular_file(ec)) {
        out.push_back(entry.path().string());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Opens the browser on a desktop; quietly does nothing elsewhere.
void OpenBrowser(const std::string& url) {
  if (std::getenv("DISPLAY") == nullptr &&
      std::getenv("WAYLAND_DISPLAY") == nullptr) {
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The server thread blocks SIGINT/SIGTERM; the browser must not inherit
  // that mask.
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::string program = "xdg-open";
  char* argv[] = {program.data(), const_cast<char*>(url.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "xdg-open", &actions, &attr, argv, environ) != 0) {
    std::fprintf(stderr,
                 "model-inspector: could not start a browser; open "
                 "the URL yourself\n");
  }
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
}

// One run from its files, as `open --run PATH...` opens it: its session,
// or (exit_code set) the error that says which file, where and what was
// expected.
server::ServedRun OpenServedRun(const OpenFlags& flags,
                                const std::vector<std::string>& paths,
                                int* exit_code) {
  InputFlags input;
  input.paths = paths;
  input.keep_going = flags.keep_going;
  // A viewer: a graph with a fault opens, the fault marked on it.
  input.allow_graph_faults = true;
  input.no_calibrate = flags.no_calibrate;
  input.verbose = flags.verbose;
  input.quiet = flags.quiet;
  Status error;
  std::unique_ptr<Session> session = OpenOrReport(input, exit_code, &error);
  server::ServedRun run;
  run.name = RunName(paths);
  run.paths = paths;
  if (!session) {
    run.error_code = std::string(StatusCodeName(error.code()));
    run.error = error.message();
  } else if (session->Levels().empty()) {
    run.pair_candidates = PairCandidates(*session);
  }
  run.session = std::move(session);
  return run;
}

// A single directory holding the profiles of two or more ranks is a
// cluster: its report is computed once here (each rank read, reduced and
// closed, in parallel, progress on stderr) and the server opens ranks as
// runs only when the UI asks for them. Nothing (and no error) when the
// directory is not a cluster: it opens as a run, as before.
StatusOr<std::shared_ptr<const server::ServedCluster>> OpenServedCluster(
    const OpenFlags& flags) {
  if (flags.no_cluster || !flags.groups.empty() || flags.paths.size() != 1) {
    return std::shared_ptr<const server::ServedCluster>();
  }
  std::error_code ec;
  if (!fs::is_directory(flags.paths[0], ec)) {
    return std::shared_ptr<const server::ServedCluster>();
  }
  StatusOr<ClusterInputs> inputs = DiscoverClusterRanks(flags.paths);
  if (!inputs.ok() || inputs->ranks.size() < 2) {
    return std::shared_ptr<const server::ServedCluster>();
  }
  ClusterOptions options;
  options.paths = flags.paths;
  bool quiet = flags.quiet;
  size_t ranks = inputs->ranks.size();
  if (!quiet) {
    std::fprintf(stderr, "model-inspector: %s holds %zu ranks: reading them\n",
                 flags.paths[0].c_str(), ranks);
  }
  options.progress = [quiet](const std::string& what, uint64_t done,
                             uint64_t total) {
    if (quiet) return;
    std::fprintf(stderr, "model-inspector: cluster: %s read (%llu of %llu)\n",
                 what.c_str(), static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total));
  };
  StatusOr<ClusterReport> report = OpenCluster(options);
  if (!report.ok()) return report.status();
  auto served = std::make_shared<server::ServedCluster>();
  served->report_json = encoders::EncodeJson(*report);
  // The UI's first screen leaves the collectives' per-rank rows out (500
  // collectives x 1,024 ranks would be ~100 MB) and asks for one
  // collective's rows when it is picked: a report holding it alone, so
  // ClusterReport::Write stays the one description of the JSON.
  {
    ClusterReport light = *report;
    for (ClusterCollective& c : light.collectives) c.ranks.clear();
    served->report_without_collective_ranks_json = encoders::EncodeJson(light);
  }
  for (const ClusterCollective& c : report->collectives) {
    ClusterReport one;
    one.collectives.push_back(c);
    served->collective_json.push_back(encoders::EncodeJson(one));
  }
  for (const ClusterRankInput& r : inputs->ranks) {
    served->ranks.push_back({r.rank, r.files});
  }
  return std::shared_ptr<const server::ServedCluster>(std::move(served));
}

int Run(OpenFlags flags) {
  // `open session.mis`: the runs, probe inputs, bookmarks, notes and view
  // a saved session holds (paths relative to its folder; a missing one
  // is an error naming it).
  std::optional<SavedSession> restored;
  std::string session_path = flags.session;
  if (std::any_of(flags.paths.begin(), flags.paths.end(),
                  [](const std::string& p) { return IsSavedSessionPath(p); })) {
    if (flags.paths.size() != 1 || !flags.groups.empty()) {
      return ReportError(InvalidArgumentError(
          "a saved session (.mis) opens alone: `open SESSION.mis` (its runs "
          "are inside it)"));
    }
    StatusOr<SavedSession> read = ReadSavedSession(flags.paths[0]);
    if (!read.ok()) return ReportError(read.status());
    if (session_path.empty()) session_path = flags.paths[0];
    restored = std::move(read).value();
    flags.paths.clear();
    for (const SavedRun& r : restored->runs) {
      flags.groups.push_back(r.paths);
      flags.run_names.push_back(r.name);
    }
    for (const std::string& in : restored->probes.inputs) {
      if (std::find(flags.inputs.begin(), flags.inputs.end(), in) ==
          flags.inputs.end()) {
        flags.inputs.push_back(in);
      }
    }
    if (flags.groups.empty()) {
      return ReportError(
          InvalidArgumentError(session_path + ": the session holds no runs"));
    }
  }
  for (const std::string& in : flags.inputs) {
    std::error_code ec;
    if (!fs::is_regular_file(in, ec)) {
      return ReportError(
          NotFoundError(in + ": --inputs: no such file (a .npy model input)"));
    }
  }
  auto cluster = OpenServedCluster(flags);
  if (!cluster.ok()) return ReportError(cluster.status());
  std::vector<std::vector<std::string>> runs;
  // A cluster opens no run at first: the UI asks for the ranks it shows.
  if (*cluster == nullptr) {
    for (const std::string& p : flags.paths) runs.push_back({p});
  }
  for (const auto& g : flags.groups) {
    if (!g.empty()) runs.push_back(g);
  }
  UnpackedDemo demo;
  if (runs.empty() && *cluster == nullptr) {
    Status unpacked = demo.Unpack();
    if (!unpacked.ok()) return ReportError(unpacked);
    runs.push_back({demo.entry()});
  }

  // Check the address before the (possibly long) loading.
  server::ServerOptions options;
  options.host = flags.host;
  options.port = flags.port;
  options.token = flags.token;
  if (options.token == "auto") {
    auto token = server::GenerateToken();
    if (!token.ok()) return ReportError(token.status());
    options.token = *token;
  }
  // The UI's "Pair with MODEL" button opens the model and a trace-only
  // run's traces as a new run, the way `open --run MODEL TRACE` would.
  options.open_run = [flags](const std::vector<std::string>& paths) {
    int exit_code = 0;
    return OpenServedRun(flags, paths, &exit_code);
  };
  options.cluster = *cluster;
  if (!flags.history.empty()) {
    auto store = HistoryStore::Open(flags.history, /*create=*/false);
    if (!store.ok()) return ReportError(store.status());
    options.history = std::move(store).value();
  }
  if (!session_path.empty() || restored) {
    options.session_file = std::make_shared<server::SessionFileApi>(
        session_path, std::move(restored));
  }
  server::RerunOptions rerun = server::DefaultRerunOptions();
  for (const std::string& in : flags.inputs) {
    rerun.inputs.push_back(fs::absolute(in).lexically_normal().string());
  }
  options.rerun = std::make_shared<server::ProbeRerunner>(std::move(rerun));
  Status allowed = server::CheckAccessOptions(options);
  if (!allowed.ok()) return ReportError(allowed);

  // With --keep-going a run that cannot be opened is served as its error
  // (the UI shows it), as long as one run opens.
  std::vector<server::ServedRun> served;
  size_t failed = 0;
  int first_exit_code = 0;
  for (const std::vector<std::string>& paths : runs) {
    int exit_code = 0;
    server::ServedRun run = OpenServedRun(flags, paths, &exit_code);
    if (!run.session) {
      if (!flags.keep_going) return exit_code;
      if (failed++ == 0) first_exit_code = exit_code;
    }
    if (served.size() < flags.run_names.size() &&
        !flags.run_names[served.size()].empty()) {
      run.name = flags.run_names[served.size()];
    }
    if (!demo.root().empty()) {
      run.name = "demo: resnet18 (ONNX Runtime)";
      run.real_root = demo.root();
      run.shown_root = "(bundled demo)";
    }
    served.push_back(std::move(run));
  }
  if (failed != 0 && failed == served.size()) return first_exit_code;

  // Signals go to one waiting thread (sigwait), never to httplib's workers,
  // so that shutdown runs outside a signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up is not fatal

  size_t run_count = served.size();
  auto server = server::Server::Bind(options, std::move(served));
  if (!server.ok()) return ReportError(server.status());
  std::string url = (*server)->Url();
  std::printf("%s\n", url.c_str());
  std::fflush(stdout);
  if (!flags.quiet) {
    // A cluster's ranks open as runs when the UI asks for them.
    std::string cluster_text =
        *cluster == nullptr
            ? ""
            : fmt::format(
                  "a cluster of {} ranks (each opens as a run when "
                  "asked) and ",
                  (*cluster)->ranks.size());
    std::string not_opened =
        failed == 0 ? ""
                    : fmt::format(
                          ", {} that could not be opened shown as "
                          "{}",
                          failed, failed == 1 ? "its error" : "errors");
    std::fprintf(stderr,
                 "model-inspector: serving %s%zu run%s%s at %s (Ctrl+C to "
                 "stop)\n",
                 cluster_text.c_str(), run_count, run_count == 1 ? "" : "s",
                 not_opened.c_str(), url.c_str());
  }
  if (!flags.quiet && server::EmbeddedUiIsPlaceholder()) {
    std::fprintf(stderr,
                 "model-inspector: the web UI was not built into this binary "
                 "(build web/ with npm, then rebuild); the API works\n");
  }
  if (!flags.no_browser) OpenBrowser(url);

  Status served_status;
  pthread_t main_thread = pthread_self();
  std::thread serve_thread([&] {
    served_status = (*server)->Serve();
    // Wake the waiting thread if the server ended by itself.
    pthread_kill(main_thread, SIGTERM);
  });
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  (*server)->Stop();
  serve_thread.join();
  if (!served_status.ok()) return ReportError(served_status);
  if (!flags.quiet) std::fprintf(stderr, "model-inspector: stopped\n");
  return 0;
}

struct SeedFlags {
  std::string model;
  std::string compare;
  std::string log_level = "warning";
};

int RunSeed(const SeedFlags& seed, OpenFlags flags) {
  // Two files of one format (two versions of a model) are two runs, side by
  // side in the run picker; a model and another form of it (an ONNX model
  // and its .om) are one run, the framework and the compiled graph linked.
  if (seed.compare.empty()) {
    flags.paths = {seed.model};
  } else {
    std::string a = DetectInputFormat(seed.model);
    std::string b = DetectInputFormat(seed.compare);
    // Two run directories (no format of their own) are two runs too.
    if (a == b) {
      flags.paths = {seed.model, seed.compare};
    } else {
      flags.groups = {{seed.model, seed.compare}};
    }
  }
  flags.verbose = seed.log_level == "debug" || seed.log_level == "info";
  flags.quiet = seed.log_level == "error";
  return Run(flags);
}

}  // namespace

void RegisterSeedOptions(CLI::App& app, int* exit_code) {
  auto seed = std::make_shared<SeedFlags>();
  auto flags = std::make_shared<OpenFlags>();
  CLI::Option* model = app.add_option(
      "--model", seed->model,
      "without a subcommand: open this model (or run directory) in the web "
      "UI, as `open MODEL` does");
  app.add_option("--compare", seed->compare,
                 "with --model: a second model; of the same format it is a "
                 "second run beside the first, another form of the same "
                 "model (ONNX and its .om) is linked to it in one run")
      ->needs(model);
  app.add_option("--host", flags->host,
                 "with --model: address to listen on (default 127.0.0.1); "
                 "an address other than loopback needs --token")
      ->needs(model);
  app.add_option("--port", flags->port,
                 "with --model: port (default 0: a free one)")
      ->check(CLI::Range(0, 65535))
      ->needs(model);
  app.add_option("--token", flags->token,
                 "with --model: access token every request must carry; "
                 "'auto' for a random one")
      ->needs(model);
  app.add_option("--log-level", seed->log_level,
                 "with --model: debug or info (also info diagnostics), "
                 "warning (default), error (no progress output)")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}))
      ->needs(model);
  app.callback([&app, seed, flags, exit_code]() {
    if (!app.get_subcommands().empty()) {
      if (!seed->model.empty()) {
        std::fprintf(stderr,
                     "model-inspector: error: --model before a subcommand; "
                     "give it after the subcommand, or no subcommand to "
                     "open the model in the web UI\n");
        *exit_code = 2;
      }
      return;
    }
    if (seed->model.empty()) {
      throw CLI::RequiredError(
          "a subcommand, or --model FILE to open a model in the web UI");
    }
    *exit_code = RunSeed(*seed, *flags);
  });
}

void RegisterOpenCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<OpenFlags>();
  CLI::App* cmd = app.add_subcommand(
      "open",
      "serve the web UI and its API for one or more runs on a local URL "
      "(no PATH: the bundled demo run)");
  cmd->add_option("paths", flags->paths,
                  "one run each: a run directory, a model or a trace; or "
                  "one saved session (.mis) to restore");
  AddMemoryLimitOption(cmd);
  cmd->add_option("--run", flags->groups,
                  "one run made of several files (model, compiled model, "
                  "trace); repeatable; runs from PATHs come first")
      ->allow_extra_args()
      ->expected(1, -1);
  cmd->add_option("--host", flags->host,
                  "address to listen on (default 127.0.0.1); an address "
                  "other than loopback needs --token");
  cmd->add_option("--port", flags->port, "port (default 0: a free one)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--token", flags->token,
                  "access token every request must carry (in the printed "
                  "URL); 'auto' for a random one");
  cmd->add_flag("--no-browser", flags->no_browser,
                "do not open a browser, only print the URL");
  cmd->add_flag("--keep-going", flags->keep_going,
                "load inputs with error diagnostics instead of failing; "
                "serve the runs that open and show the others' errors");
  cmd->add_flag("--no-calibrate", flags->no_calibrate,
                "keep the traces' raw clocks (no clock offsets estimated)");
  cmd->add_flag("--no-cluster", flags->no_cluster,
                "open a directory holding several ranks as one run of all "
                "their events, not as a cluster (whose ranks open when asked "
                "for)");
  cmd->add_option("--history", flags->history,
                  "serve this run history (`history add`, `export --record`) "
                  "to the UI's trend chart; read only")
      ->type_name("PATH");
  cmd->add_option("--session", flags->session,
                  "where the UI's \"save session\" writes the saved session "
                  "(.mis; `open SESSION.mis` writes back to that file)")
      ->type_name("PATH");
  cmd->add_option("--inputs", flags->inputs,
                  "model inputs (.npy) the UI offers for re-running the "
                  "model with other probes; repeatable")
      ->type_name("X.npy");
  cmd->add_flag("-v,--verbose", flags->verbose, "also print info diagnostics");
  cmd->add_flag("-q,--quiet", flags->quiet, "no progress output");
  cmd->callback([flags, exit_code]() { *exit_code = Run(*flags); });
}

}  // namespace mi::cli
