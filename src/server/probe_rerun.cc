#include "server/probe_rerun.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

extern char** environ;

namespace mi::server {

namespace fs = std::filesystem;
using nlohmann::json;

struct ProbeRerunner::Job {
  uint64_t id = 0;
  std::vector<std::string> argv;
  std::vector<std::string> probes;
  std::string input;
  pid_t pid = -1;
  std::thread reader;
  // Under mutex: state, the output's last lines, the exit status.
  std::mutex mutex;
  std::string state = "running";  // "running" | "complete" | "failed"
  std::deque<std::string> log;
  size_t lines = 0;
  int exit_code = -1;
  std::string error;
  std::chrono::steady_clock::time_point started;
  int64_t elapsed_ms = -1;
};

namespace {

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json; charset=utf-8";
  r.body = std::move(body);
  Api::AddSecurityHeaders(&r, /*cacheable=*/false);
  return r;
}

bool IsOnnx(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".onnx";
}

// A probe pattern or trigger as one argument: printable, not an option, no
// comma (the runner splits its values on commas).
bool SafeArgument(const std::string& s) {
  if (s.empty() || s.size() > 1024 || s.front() == '-') return false;
  if (s.find(',') != std::string::npos) return false;
  return std::none_of(s.begin(), s.end(),
                      [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

constexpr size_t kMaxProbePatterns = 4096;
constexpr size_t kMaxTriggers = 32;

}  // namespace

RerunTarget RerunTargetOf(const ServedRun& run) {
  RerunTarget t;
  if (run.session == nullptr) {
    t.reason = "the run could not be opened";
    return t;
  }
  for (const InputFile& f : run.session->inputs()) {
    if (f.role == "framework" && IsOnnx(f.path)) {
      t.model = f.path;
      break;
    }
  }
  std::error_code ec;
  for (const std::string& p : run.paths) {
    if (fs::is_directory(p, ec)) {
      t.run_dir = p;
      break;
    }
  }
  if (t.model.empty()) {
    t.reason =
        "the run has no ONNX model at its framework level: re-running needs "
        "a model ONNX Runtime can run";
  } else if (t.run_dir.empty()) {
    t.reason =
        "the run was not opened from a run directory: a re-run writes its "
        "probes into <run dir>/probes/ (open the folder holding the model)";
  }
  return t;
}

RerunOptions DefaultRerunOptions() {
  RerunOptions o;
  const char* python = std::getenv("MI_PYTHON");
  if (python != nullptr && *python != '\0') o.python = python;
#ifdef MI_BUILD_PYTHON_DIR
  std::error_code ec;
  if (fs::is_directory(fs::path(MI_BUILD_PYTHON_DIR) / "model_inspector", ec)) {
    o.extra_pythonpath = MI_BUILD_PYTHON_DIR;
  }
#endif
  return o;
}

ProbeRerunner::ProbeRerunner(RerunOptions options)
    : options_(std::move(options)) {}

ProbeRerunner::~ProbeRerunner() {
  std::map<size_t, std::shared_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs.swap(jobs_);
  }
  for (auto& [run, job] : jobs) {
    {
      std::lock_guard<std::mutex> lock(job->mutex);
      if (job->state == "running" && job->pid > 0) kill(job->pid, SIGTERM);
    }
    if (job->reader.joinable()) job->reader.join();
  }
}

std::vector<std::string> ProbeRerunner::InputsFor(
    const RerunTarget& target) const {
  std::vector<std::string> out = options_.inputs;
  std::vector<std::string> found;
  if (!target.run_dir.empty()) {
    for (const fs::path& dir :
         {fs::path(target.run_dir), fs::path(target.run_dir) / "inputs"}) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() == ".npy" && e.is_regular_file(ec)) {
          found.push_back(e.path().string());
        }
      }
    }
  }
  std::sort(found.begin(), found.end());
  for (std::string& f : found) {
    if (std::find(out.begin(), out.end(), f) == out.end()) {
      out.push_back(std::move(f));
    }
  }
  return out;
}

HttpResponse ProbeRerunner::Handle(size_t run_id, const RerunTarget& target,
                                   const HttpRequest& request) {
  if (request.method == "POST") return Start(run_id, target, request);
  return State(run_id, target);
}

HttpResponse ProbeRerunner::State(size_t run_id, const RerunTarget& target) {
  json out = json::object();
  out["runnable"] = target.reason.empty();
  out["reason"] = target.reason.empty() ? json(nullptr) : json(target.reason);
  out["model"] = target.model;
  out["run_dir"] = target.run_dir;
  out["inputs"] = InputsFor(target);
  std::shared_ptr<Job> job;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = jobs_.find(run_id);
    if (it != jobs_.end()) job = it->second;
  }
  if (job) {
    std::lock_guard<std::mutex> lock(job->mutex);
    json j = json::object();
    j["id"] = job->id;
    j["state"] = job->state;
    j["probes"] = job->probes;
    j["input"] = job->input;
    j["command"] = job->argv;
    j["log"] = json(std::vector<std::string>(job->log.begin(), job->log.end()));
    j["lines"] = job->lines;
    j["exit_code"] = job->exit_code;
    j["error"] = job->error.empty() ? json(nullptr) : json(job->error);
    j["elapsed_ms"] = job->elapsed_ms;
    out["job"] = std::move(j);
  } else {
    out["job"] = nullptr;
  }
  return JsonResponse(200, out.dump());
}

HttpResponse ProbeRerunner::Start(size_t run_id, const RerunTarget& target,
                                  const HttpRequest& request) {
  if (!target.reason.empty()) {
    return Api::Error(
        409, fmt::format("run {} cannot re-run: {}", run_id, target.reason));
  }
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return Api::Error(400,
                      "body: expected {\"probes\": [PATTERN, ...], \"input\": "
                      "INDEX, \"keep\": \"stats\"|\"tensor\", \"triggers\": "
                      "[...]}");
  }
  auto strings =
      [&](const char* key, size_t max, bool required,
          std::vector<std::string>* out) -> std::optional<HttpResponse> {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) {
      if (!required) return std::nullopt;
      return Api::Error(400, fmt::format("{}: expected a list of names or "
                                         "patterns",
                                         key));
    }
    if (!it->is_array() || it->size() > max || (required && it->empty())) {
      return Api::Error(400, fmt::format("{}: expected a list of 1..{} "
                                         "strings",
                                         key, max));
    }
    for (const json& v : *it) {
      if (!v.is_string() || !SafeArgument(v.get<std::string>())) {
        return Api::Error(400, fmt::format("{}: expected printable strings "
                                           "not starting with '-', without "
                                           "',', found {}",
                                           key, v.dump()));
      }
      out->push_back(v.get<std::string>());
    }
    return std::nullopt;
  };
  std::vector<std::string> probes, triggers;
  if (auto refused = strings("probes", kMaxProbePatterns, true, &probes)) {
    return std::move(*refused);
  }
  if (auto refused = strings("triggers", kMaxTriggers, false, &triggers)) {
    return std::move(*refused);
  }
  std::string keep = "stats";
  if (body.contains("keep")) {
    if (!body["keep"].is_string() ||
        (body["keep"] != "stats" && body["keep"] != "tensor")) {
      return Api::Error(400, "keep: expected \"stats\" or \"tensor\"");
    }
    keep = body["keep"].get<std::string>();
  }
  // The input: an index into the inputs offered; absent or -1: the
  // runner's deterministic input (x[i] = (i % 7) / 7 for every float input
  // of static shape, as the fixtures are fed).
  std::vector<std::string> inputs = InputsFor(target);
  std::string input;
  bool given = body.contains("input") && !body["input"].is_null() &&
               !(body["input"].is_number_integer() &&
                 body["input"].get<int64_t>() == -1);
  if (given) {
    if (!body["input"].is_number_unsigned() ||
        body["input"].get<uint64_t>() >= inputs.size()) {
      return Api::Error(
          400, inputs.empty()
                   ? fmt::format("input: run {} offers no model input (put a "
                                 ".npy file in {} or {}/inputs/, or give "
                                 "`open --inputs X.npy`); -1 or none for the "
                                 "runner's deterministic input",
                                 run_id, target.run_dir, target.run_dir)
                   : fmt::format("input: expected -1 or an index 0..{} into "
                                 "the inputs GET answers",
                                 inputs.size() - 1));
    }
    input = inputs[body["input"].get<uint64_t>()];
  }

  std::lock_guard<std::mutex> lock(mutex_);
  auto existing = jobs_.find(run_id);
  if (existing != jobs_.end()) {
    std::lock_guard<std::mutex> job_lock(existing->second->mutex);
    if (existing->second->state == "running") {
      return Api::Error(409, fmt::format("run {} is already re-running (job "
                                         "{})",
                                         run_id, existing->second->id));
    }
  }
  auto job = std::make_shared<Job>();
  job->id = next_job_++;
  job->probes = probes;
  job->input = input;
  // The runner's options repeat (--probes P --probes Q): each value one
  // argument, never split by a shell.
  job->argv = {options_.python, "-m",         "model_inspector.runner",
               "--model",       target.model, "--out",
               target.run_dir,  "--keep",     keep};
  if (!input.empty()) {
    job->argv.push_back("--inputs");
    job->argv.push_back(input);
  }
  for (const std::string& p : probes) {
    job->argv.push_back("--probes");
    job->argv.push_back(p);
  }
  for (const std::string& t : triggers) {
    job->argv.push_back("--triggers");
    job->argv.push_back(t);
  }
  job->argv.push_back("--label");
  job->argv.push_back("re-run from the UI");

  // The child's environment: ours, its PYTHONPATH extended with the
  // build's package, unbuffered output (lines arrive as printed).
  std::vector<std::string> env;
  std::string pythonpath;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view v(*e);
    if (v.starts_with("PYTHONPATH=")) {
      pythonpath = std::string(v.substr(11));
      continue;
    }
    if (v.starts_with("PYTHONUNBUFFERED=")) continue;
    env.emplace_back(v);
  }
  if (!options_.extra_pythonpath.empty()) {
    pythonpath += (pythonpath.empty() ? "" : ":") + options_.extra_pythonpath;
  }
  if (!pythonpath.empty()) env.push_back("PYTHONPATH=" + pythonpath);
  env.push_back("PYTHONUNBUFFERED=1");

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Api::Error(500, "could not create a pipe for the runner");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The server's threads block SIGINT / SIGTERM and ignore SIGPIPE; the
  // runner gets the defaults.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv, envp;
  for (std::string& a : job->argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, options_.python.c_str(), &actions, &attr,
                             argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return Api::Error(500,
                      fmt::format("could not start {}: {} (set MI_PYTHON "
                                  "to the Python that has "
                                  "model_inspector)",
                                  options_.python, std::strerror(spawned)));
  }
  job->pid = pid;
  job->started = std::chrono::steady_clock::now();
  size_t keep_lines = options_.log_lines;
  Job* raw = job.get();
  job->reader = std::thread([raw, fd = fds[0], keep_lines] {
    std::string pending;
    char buffer[4096];
    auto add = [&](std::string line) {
      std::lock_guard<std::mutex> lock(raw->mutex);
      raw->log.push_back(std::move(line));
      ++raw->lines;
      while (raw->log.size() > keep_lines) raw->log.pop_front();
    };
    for (;;) {
      ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buffer, static_cast<size_t>(n));
      size_t nl;
      while ((nl = pending.find_first_of("\n\r")) != std::string::npos) {
        if (nl > 0) add(pending.substr(0, nl));
        pending.erase(0, nl + 1);
      }
    }
    if (!pending.empty()) add(pending);
    close(fd);
    int status = 0;
    while (waitpid(raw->pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::lock_guard<std::mutex> lock(raw->mutex);
    raw->elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - raw->started)
                          .count();
    if (WIFEXITED(status)) {
      raw->exit_code = WEXITSTATUS(status);
      raw->state = raw->exit_code == 0 ? "complete" : "failed";
      if (raw->exit_code != 0) {
        raw->error =
            fmt::format("the runner exited with status {}{}", raw->exit_code,
                        raw->log.empty() ? "" : ": " + raw->log.back());
      }
    } else {
      raw->state = "failed";
      raw->error = fmt::format("the runner was stopped by signal {}",
                               WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
  });
  if (existing != jobs_.end()) {
    std::shared_ptr<Job> old = std::move(existing->second);
    if (old->reader.joinable()) old->reader.join();  // finished already
  }
  jobs_[run_id] = job;
  json out = json::object();
  out["job"] = job->id;
  out["state"] = "running";
  out["command"] = job->argv;
  return JsonResponse(202, out.dump());
}

}  // namespace mi::server
