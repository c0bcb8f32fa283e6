#include "cli/trace_command.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace mi::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct TraceFlags {
  std::vector<std::string> triggers;
  int window = 5;
  std::string output = "snapshot.db";
  std::string python;
  std::vector<std::string> command;
};

// The sitecustomize.py put first on the script's PYTHONPATH: it takes itself
// off sys.path and PYTHONPATH, runs the sitecustomize it hides, and hands
// MI_TRACE_CONFIG (taken out of the environment: processes the script
// starts are not traced) to model_inspector.train.attach.
constexpr char kSiteCustomize[] =
    R"PY(# Written by `model-inspector trace` (src/cli/trace_command.cc).
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if p and os.path.abspath(p) != _here)
del sys.modules["sitecustomize"]
try:
    import sitecustomize  # the one this file hides (Debian's, a virtualenv's)
except ImportError:
    pass
_config = os.environ.pop("MI_TRACE_CONFIG", None)
if _config:
    try:
        from model_inspector.train import attach as _attach
    except Exception as _e:
        import json as _json
        _status = _json.loads(_config).get("status")
        _message = (f"{sys.executable} cannot import model_inspector.train ({_e}): build the "
                    "package (ninja model_inspector_python), or name a Python that has it "
                    "with --python / MI_PYTHON")
        if _status:
            with open(_status, "w") as _f:
                _json.dump({"attached": False, "error": _message, "code": 3}, _f)
        print("model-inspector trace: " + _message, file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)
    _attach.install(_config)
)PY";

// Removes the bootstrap folder when the command ends.
class TempDir {
 public:
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  bool Make() {
    std::string pattern =
        (fs::temp_directory_path() / "mi_trace_XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) return false;
    path_ = buffer.data();
    return true;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string DefaultPython() {
  if (const char* p = std::getenv("MI_PYTHON"); p && *p) return p;
#ifdef MI_BUILD_PYTHON_EXECUTABLE
  if (std::string fallback = MI_BUILD_PYTHON_EXECUTABLE; !fallback.empty()) {
    return fallback;
  }
#endif
  return "python3";
}

// This build's package folder when it exists ($MI_PYTHON_PACKAGE first);
// empty: the interpreter's own (setup.sh's .pth, an installed wheel).
std::string PackageDir() {
  if (const char* p = std::getenv("MI_PYTHON_PACKAGE"); p && *p) return p;
#ifdef MI_BUILD_PYTHON_PACKAGE
  std::error_code ec;
  if (fs::exists(MI_BUILD_PYTHON_PACKAGE "/model_inspector", ec)) {
    return MI_BUILD_PYTHON_PACKAGE;
  }
#endif
  return "";
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "model-inspector trace: %s\n", message.c_str());
  return code;
}

// Runs argv with env; returns the exit status (128 + signal when killed),
// or -errno when it could not start.
int Spawn(std::vector<std::string> argv, std::vector<std::string> env) {
  std::vector<char*> cargv, cenv;
  for (std::string& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  for (std::string& s : env) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  // As system(): while the script runs, Ctrl-C and Ctrl-\ are its (the
  // terminal sends them to both); this process waits for its exit status.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int err =
      posix_spawnp(&pid, cargv[0], nullptr, &attr, cargv.data(), cenv.data());
  posix_spawnattr_destroy(&attr);
  int result;
  if (err != 0) {
    result = -err;
  } else {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result = WIFEXITED(status)     ? WEXITSTATUS(status)
             : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                   : 1;
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  return result;
}

int RunTrace(const TraceFlags& flags) {
  if (flags.command.empty()) {
    return Fail(2,
                "expected the command to run after '--' (e.g. "
                "`model-inspector trace -- python3 train.py`)");
  }
  if (flags.window < 0) {
    return Fail(
        2, fmt::format("--window: expected K >= 0, found {}", flags.window));
  }
  std::string python = flags.python.empty() ? DefaultPython() : flags.python;
  std::vector<std::string> argv = flags.command;
  // A script named first runs with the Python.
  if (EndsWith(argv[0], ".py")) argv.insert(argv.begin(), python);
  // The script must exist: Python would only say "can't open file".
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "-m" || argv[i] == "-c") break;
    if (!argv[i].empty() && argv[i][0] == '-') continue;
    if (EndsWith(argv[i], ".py")) {
      std::error_code ec;
      if (!fs::is_regular_file(argv[i], ec)) {
        return Fail(3, fmt::format("the script '{}' does not exist", argv[i]));
      }
    }
    break;
  }
  std::error_code ec;
  fs::path output = fs::absolute(flags.output, ec);
  if (ec || flags.output.empty()) {
    return Fail(
        2, fmt::format("--output: '{}' is not a usable path", flags.output));
  }
  TempDir boot;
  if (!boot.Make()) {
    return Fail(3, "cannot create a temporary folder for the bootstrap");
  }
  fs::path site = fs::path(boot.path()) / "sitecustomize.py";
  fs::path status_path = fs::path(boot.path()) / "status.json";
  {
    std::ofstream out(site);
    out << kSiteCustomize;
    if (!out) {
      return Fail(3, fmt::format("cannot write {}", site.string()));
    }
  }
  Json config = {{"output", output.string()},
                 {"triggers", flags.triggers},
                 {"window", flags.window},
                 {"command", flags.command},
                 {"status", status_path.string()}};
  std::string package = PackageDir();
  std::string pythonpath = boot.path();
  if (!package.empty()) pythonpath += ":" + package;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("MI_TRACE_CONFIG=", 0) == 0) continue;
    if (entry.rfind("PYTHONPATH=", 0) == 0) {
      if (entry.size() > 11) pythonpath += ":" + entry.substr(11);
      continue;
    }
    env.push_back(std::move(entry));
  }
  env.push_back("PYTHONPATH=" + pythonpath);
  env.push_back("MI_TRACE_CONFIG=" + config.dump());

  int code = Spawn(argv, env);
  if (code < 0) {
    return Fail(
        3, fmt::format("cannot start '{}': {}{}", argv[0], std::strerror(-code),
                       argv[0] == python ? " (name a Python with --python or "
                                           "MI_PYTHON)"
                                         : ""));
  }
  Json status;
  bool have_status = false;
  {
    std::ifstream in(status_path);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      status = Json::parse(text.str(), nullptr, false);
      have_status = !status.is_discarded() && status.is_object();
    }
  }
  int fallback = code != 0 ? code : 3;
  if (!have_status) {
    return Fail(
        fallback,
        fmt::format(
            "no snapshot: the monitor never started in '{}' (exit {}). Is it "
            "a Python that reads PYTHONPATH and sitecustomize (not -I / -S)?",
            argv[0], code));
  }
  if (status.contains("code") && status["code"].is_number_integer()) {
    // The bootstrap refused to start (its message is above).
    return status["code"].get<int>();
  }
  std::string error = status.value("error", "");
  if (!status.value("attached", false)) {
    return Fail(fallback,
                fmt::format("no snapshot: {}", error.empty() ? "the monitor "
                                                               "did not attach"
                                                             : error));
  }
  if (!error.empty()) {
    return Fail(fallback, error);
  }
  if (!status.contains("snapshot_status")) {
    // Attached, but the process ended without its exit handlers (a signal,
    // os._exit): a snapshot written when the window filled stays.
    bool exists = fs::exists(output, ec);
    return Fail(fallback,
                fmt::format("the script ended without finishing the snapshot "
                            "(exit {}); {}",
                            code,
                            exists ? "the one written when the window filled "
                                     "is kept: " +
                                         output.string()
                                   : "none was written"));
  }
  std::string anomaly =
      status.contains("anomaly_step") && status["anomaly_step"].is_number()
          ? fmt::format(", anomaly at step {} ({} trigger hits)",
                        status["anomaly_step"].get<int64_t>(),
                        status.value("triggers_fired", 0))
          : "";
  std::fprintf(stderr,
               "model-inspector trace: %s: %s, %d steps%s (model %s, "
               "optimizer %s)\n",
               output.string().c_str(),
               status.value("snapshot_status", std::string("?")).c_str(),
               status.value("steps", 0), anomaly.c_str(),
               status.value("model", std::string("?")).c_str(),
               status.value("optimizer", std::string("?")).c_str());
  return code;
}

}  // namespace

void RegisterTraceCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<TraceFlags>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "run an unmodified PyTorch training script with the training monitor "
      "attached: per-step statistics, and on the first trigger the tensors "
      "of the K steps before and after, into a SQLite snapshot "
      "(docs/guides/training-monitor.md)");
  cmd->add_option("--trigger", flags->triggers,
                  "a trigger spec (repeatable): loss_spike[:FACTOR[:WINDOW]], "
                  "grad_norm[:LIMIT], nan, inf, act_range[:LIMIT], "
                  "dead_units[:FRACTION] (default: all of them with their "
                  "default thresholds)");
  cmd->add_option("--window", flags->window,
                  "K: the steps captured at tensor level before and after "
                  "the anomaly (default 5)");
  cmd->add_option("--output", flags->output,
                  "the snapshot file (default snapshot.db)");
  cmd->add_option("--python", flags->python,
                  "the Python that runs a CMD naming a .py script first "
                  "(default: $MI_PYTHON, else the one the package was "
                  "built for)");
  cmd->add_option("command", flags->command,
                  "the command after '--': python3 train.py ARGS, or "
                  "train.py ARGS")
      ->required();
  cmd->callback([flags, exit_code]() { *exit_code = RunTrace(*flags); });
}

}  // namespace mi::cli
