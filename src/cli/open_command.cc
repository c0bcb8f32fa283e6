#include "cli/open_command.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/common.h"
#include "model_inspector/session.h"
#include "server/assets.h"
#include "server/server.h"

extern char** environ;

namespace mi::cli {
namespace {

#ifndef MI_DEMO_RUN
#define MI_DEMO_RUN ""
#endif

struct OpenFlags {
  std::vector<std::string> paths;                // one run each
  std::vector<std::vector<std::string>> groups;  // --run: files of one run
  std::string host = "127.0.0.1";
  int port = 0;
  std::string token;
  bool no_browser = false;
  bool keep_going = false;
  bool no_calibrate = false;
  bool verbose = false;
  bool quiet = false;
};

std::string RunName(const std::vector<std::string>& paths) {
  std::filesystem::path p(paths.front());
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();  // "dir/"
  if (name.empty()) name = paths.front();
  if (paths.size() > 1) name += fmt::format(" (+{})", paths.size() - 1);
  return name;
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

int Run(const OpenFlags& flags) {
  std::vector<std::vector<std::string>> runs;
  for (const std::string& p : flags.paths) runs.push_back({p});
  for (const auto& g : flags.groups) {
    if (!g.empty()) runs.push_back(g);
  }
  if (runs.empty()) {
    std::string demo = MI_DEMO_RUN;
    if (demo.empty() || !std::filesystem::is_directory(demo)) {
      return ReportError(InvalidArgumentError(
          "no PATH given and the bundled demo run (" +
          (demo.empty() ? std::string("not configured") : demo) +
          ") is not here; give a run directory, model or trace"));
    }
    runs.push_back({demo});
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
  Status allowed = server::CheckAccessOptions(options);
  if (!allowed.ok()) return ReportError(allowed);

  std::vector<server::ServedRun> served;
  for (const std::vector<std::string>& paths : runs) {
    InputFlags input;
    input.paths = paths;
    input.keep_going = flags.keep_going;
    input.no_calibrate = flags.no_calibrate;
    input.verbose = flags.verbose;
    input.quiet = flags.quiet;
    int exit_code = 0;
    std::unique_ptr<Session> session = OpenOrReport(input, &exit_code);
    if (!session) return exit_code;
    served.push_back({RunName(paths), paths, std::move(session)});
  }

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
    std::fprintf(stderr,
                 "model-inspector: serving %zu run%s at %s (Ctrl+C to stop)\n",
                 run_count, run_count == 1 ? "" : "s", url.c_str());
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

}  // namespace

void RegisterOpenCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<OpenFlags>();
  CLI::App* cmd = app.add_subcommand(
      "open",
      "serve the web UI and its API for one or more runs on a local URL "
      "(no PATH: the bundled demo run)");
  cmd->add_option("paths", flags->paths,
                  "one run each: a run directory, a model or a trace");
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
                "load inputs with error diagnostics instead of failing");
  cmd->add_flag("--no-calibrate", flags->no_calibrate,
                "keep the traces' raw clocks (no clock offsets estimated)");
  cmd->add_flag("-v,--verbose", flags->verbose, "also print info diagnostics");
  cmd->add_flag("-q,--quiet", flags->quiet, "no progress output");
  cmd->callback([flags, exit_code]() { *exit_code = Run(*flags); });
}

}  // namespace mi::cli
