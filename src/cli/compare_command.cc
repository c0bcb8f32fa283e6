#include "cli/compare_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "cli/common.h"
#include "encoders/json_encoder.h"
#include "encoders/table_printer.h"
#include "model_inspector/compare.h"
#include "model_inspector/probes.h"

extern char** environ;

namespace mi::cli {
namespace {

struct CompareFlags {
  std::string a, b;
  std::vector<std::string> inputs;
  std::string format = "table";
  std::string match = "auto";
  std::string rule = "msprobe";
  std::vector<std::string> thresholds;  // name=value
  int64_t run_a = 0, run_b = 0;
  size_t max_rows = 50;
  std::string out;
};

// Temporary run directories made for model and dump sides, removed at exit.
class TempDirs {
 public:
  ~TempDirs() {
    for (const std::string& d : dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
  StatusOr<std::string> Make() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mi_compare_XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) {
      return IoError("cannot create a temporary directory in " +
                     std::filesystem::temp_directory_path().string());
    }
    dirs_.emplace_back(buffer.data());
    return dirs_.back();
  }

 private:
  std::vector<std::string> dirs_;
};

// Runs the Python package's `python3 -m model_inspector.<module> ARGS`
// ($MI_PYTHON, else the interpreter the package was built for), with this build's package first on PYTHONPATH
// when it exists ($MI_PYTHON_PACKAGE overrides), its stdout discarded (the
// report is ours), its stderr passed through.
Status RunPython(const std::vector<std::string>& args,
                 const std::string& what) {
  const char* python_env = std::getenv("MI_PYTHON");
#ifdef MI_BUILD_PYTHON_EXECUTABLE
  std::string fallback = MI_BUILD_PYTHON_EXECUTABLE;
#else
  std::string fallback = "python3";
#endif
  if (fallback.empty()) fallback = "python3";
  std::string python = python_env && *python_env ? python_env : fallback;
  std::vector<std::string> argv = {python, "-m"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string package;
  if (const char* p = std::getenv("MI_PYTHON_PACKAGE"); p && *p) {
    package = p;
  } else {
#ifdef MI_BUILD_PYTHON_PACKAGE
    std::error_code ec;
    if (std::filesystem::exists(MI_BUILD_PYTHON_PACKAGE "/model_inspector",
                                ec)) {
      package = MI_BUILD_PYTHON_PACKAGE;
    }
#endif
  }
  std::vector<std::string> env;
  bool path_set = false;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (!package.empty() && entry.rfind("PYTHONPATH=", 0) == 0) {
      entry = "PYTHONPATH=" + package + ":" + entry.substr(11);
      path_set = true;
    }
    env.push_back(std::move(entry));
  }
  if (!package.empty() && !path_set) env.push_back("PYTHONPATH=" + package);
  std::vector<char*> cargv, cenv;
  for (std::string& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  for (std::string& s : env) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  pid_t pid = 0;
  int err = posix_spawnp(&pid, python.c_str(), &actions, nullptr, cargv.data(),
                         cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return NotFoundError(fmt::format(
        "{}: cannot start '{}' ({}); set MI_PYTHON to a Python 3 with the "
        "model_inspector package",
        what, python, std::strerror(err)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::string message =
        fmt::format("{}: '{} -m {}' failed (exit {}; its message is above)",
                    what, python, args.empty() ? "" : args[0], code);
    return code == 3 ? NotFoundError(message) : Status(InternalError(message));
  }
  return Status::Ok();
}

bool IsMsprobeDump(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return false;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() == "dump.json") return true;
  }
  return false;
}

// A side as a run directory with a probe store: itself, or a temporary one
// the runner (a model) or the msprobe importer (a dump) filled.
StatusOr<std::string> ResolveSide(const std::string& side,
                                  const CompareFlags& flags, TempDirs& temp,
                                  std::string_view which) {
  std::error_code ec;
  if (ProbeStore::Exists(side)) return side;
  if (std::filesystem::is_regular_file(side, ec) && side.size() > 5 &&
      side.substr(side.size() - 5) == ".onnx") {
    MI_ASSIGN_OR_RETURN(std::string dir, temp.Make());
    std::vector<std::string> args = {"model_inspector.runner",
                                     "--model",
                                     side,
                                     "--out",
                                     dir,
                                     "--probes",
                                     "*",
                                     "--keep",
                                     "tensor"};
    for (const std::string& in : flags.inputs) {
      args.push_back("--inputs");
      args.push_back(in);
    }
    MI_RETURN_IF_ERROR(
        RunPython(args, fmt::format("running side {} ({})", which, side)));
    return dir;
  }
  if (IsMsprobeDump(side)) {
    MI_ASSIGN_OR_RETURN(std::string dir, temp.Make());
    MI_RETURN_IF_ERROR(
        RunPython({"model_inspector.msprobe", side, dir},
                  fmt::format("importing side {} ({})", which, side)));
    return dir;
  }
  if (!std::filesystem::exists(side, ec)) {
    return NotFoundError(fmt::format("side {}: {} not found", which, side));
  }
  return NotFoundError(fmt::format(
      "side {}: {} is neither a run directory with a probe store "
      "(probes/probes.db), an .onnx model nor an msprobe dump (dump.json)",
      which, side));
}

Status ApplyThreshold(const std::string& text, CompareThresholds* t) {
  size_t eq = text.find('=');
  if (eq == std::string::npos) {
    return InvalidArgumentError(fmt::format(
        "--threshold '{}': expected NAME=VALUE, e.g. cosine_min=0.999", text));
  }
  std::string name = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  if (name == "fp16_overflow_fails") {
    if (value != "true" && value != "false") {
      return InvalidArgumentError(fmt::format(
          "--threshold {}: expected true or false, found '{}'", name, value));
    }
    t->fp16_overflow_fails = value == "true";
    return Status::Ok();
  }
  double* field = name == "cosine_min"            ? &t->cosine_min
                  : name == "max_abs_err_max"     ? &t->max_abs_err_max
                  : name == "cosine_floor"        ? &t->cosine_floor
                  : name == "max_abs_err_ceiling" ? &t->max_abs_err_ceiling
                  : name == "stats_rel_err_max"   ? &t->stats_rel_err_max
                  : name == "one_thousandth_min"  ? &t->one_thousandth_min
                  : name == "max_rel_err_max"     ? &t->max_rel_err_max
                  : name == "mean_rel_err_max"    ? &t->mean_rel_err_max
                  : name == "relative_euclidean_max"
                      ? &t->relative_euclidean_max
                  : name == "rmse_max" ? &t->rmse_max
                                       : nullptr;
  if (field == nullptr) {
    return InvalidArgumentError(
        fmt::format("--threshold: unknown name '{}'; expected cosine_min, "
                    "max_abs_err_max, cosine_floor, max_abs_err_ceiling, "
                    "stats_rel_err_max, one_thousandth_min, max_rel_err_max, "
                    "mean_rel_err_max, relative_euclidean_max, rmse_max or "
                    "fp16_overflow_fails",
                    name));
  }
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0') {
    return InvalidArgumentError(fmt::format(
        "--threshold {}: expected a number, found '{}'", name, value));
  }
  *field = v;
  return Status::Ok();
}

std::string Num(double v) { return fmt::format("{:.6g}", v); }

std::string Render(const encoders::Table& t, const std::string& format) {
  if (format == "md") {
    return "### " + t.title + "\n\n" + encoders::RenderMarkdown(t) + "\n";
  }
  return encoders::RenderText(t) + "\n";
}

std::string Tables(const CompareReport& r, const CompareFlags& flags) {
  std::string out;
  {
    encoders::Table t{"Compare", {"what", "value"}, {}};
    t.rows = {
        {"A (reference)", EscapeForTerminal(r.a)},
        {"B", EscapeForTerminal(r.b)},
        {"matched", r.match == "fused_from"
                        ? "through the compiled graph's fused_from"
                        : "by probe name"},
        {"verdict", r.pass ? "pass" : "FAIL"},
        {"pairs", fmt::format("{} compared: {} pass, {} fail; {} not compared",
                              r.compared, r.passed, r.failed, r.not_compared)},
        {"first divergent",
         r.first_divergent >= 0
             ? EscapeForTerminal(r.first_divergent_node) + " (" +
                   EscapeForTerminal(r.entries[r.first_divergent].probe_b) + ")"
             : "none"},
        {"rule",
         fmt::format("fail when cosine < {} and max abs err > {}, cosine < {}, "
                     "max abs err > {}, or NaN/Inf positions differ",
                     Num(r.thresholds.cosine_min),
                     Num(r.thresholds.max_abs_err_max),
                     Num(r.thresholds.cosine_floor),
                     Num(r.thresholds.max_abs_err_ceiling))},
    };
    if (r.match == "fused_from") {
      t.rows.push_back(
          {"fused groups", fmt::format("{} matched, {} not", r.groups_matched,
                                       r.groups_unmatched)});
    }
    if (!r.only_in_a.empty() || !r.only_in_b.empty()) {
      t.rows.push_back({"without a partner",
                        fmt::format("{} probes of A, {} of B",
                                    r.only_in_a.size(), r.only_in_b.size())});
    }
    t.full_last_column = true;
    out += Render(t, flags.format);
  }
  {
    size_t shown = flags.max_rows == 0
                       ? r.entries.size()
                       : std::min(flags.max_rows, r.entries.size());
    encoders::Table t{
        fmt::format("Pairs in execution order ({} of {})", shown,
                    r.entries.size()),
        {"#", "probe B", "probe A", "matched by", "cosine", "max abs err",
         "max rel err", "RMSE", "1/1000 ratio", "verdict", "why"},
        {}};
    t.numeric = {true, false, false, false, true, true,
                 true, true,  true,  false, false};
    auto row = [&](size_t i) {
      const CompareEntry& e = r.entries[i];
      std::string how = e.matched_by + (e.layout.empty() ? "" : " " + e.layout);
      std::string why;
      for (const std::string& s : e.reasons)
        why += (why.empty() ? "" : "; ") + s;
      if (e.metrics) {
        const TensorMetrics& m = *e.metrics;
        t.rows.push_back({std::to_string(i), EscapeForTerminal(e.probe_b),
                          EscapeForTerminal(e.probe_a), how,
                          m.cosine ? Num(*m.cosine) : "-", Num(m.max_abs_err),
                          Num(m.max_rel_err), Num(m.rmse),
                          Num(m.one_thousandth_ratio), e.verdict, why});
      } else {
        std::string stat = "-";
        if (e.stats && e.stats->max_rel_err) {
          stat = "max rel " + Num(*e.stats->max_rel_err);
        }
        t.rows.push_back({std::to_string(i), EscapeForTerminal(e.probe_b),
                          EscapeForTerminal(e.probe_a), how, "-", "-",
                          e.stats ? stat : "-", "-", "-", e.verdict, why});
      }
    };
    for (size_t i = 0; i < shown; ++i) row(i);
    // The first divergent pair is always shown.
    if (r.first_divergent >= 0 &&
        static_cast<size_t>(r.first_divergent) >= shown) {
      row(static_cast<size_t>(r.first_divergent));
    }
    t.full_last_column = true;
    out += Render(t, flags.format);
  }
  if (!r.groups.empty()) {
    encoders::Table t{"Fused groups",
                      {"compiled node", "op", "framework nodes",
                       "compared with", "status", "how / why not"},
                      {}};
    for (const CompareGroup& g : r.groups) {
      t.rows.push_back(
          {EscapeForTerminal(g.compiled_node), g.op_type,
           EscapeForTerminal(fmt::format("{}", fmt::join(g.fused_from, ", "))),
           EscapeForTerminal(g.compared_with), g.status, g.reason});
    }
    t.full_last_column = true;
    out += Render(t, flags.format);
  }
  return out;
}

int RunCompare(const CompareFlags& flags) {
  CompareOptions options;
  options.match = flags.match;
  options.thresholds = flags.rule == "msit" ? CompareThresholds::Msit()
                                            : CompareThresholds::Msprobe();
  for (const std::string& t : flags.thresholds) {
    if (Status s = ApplyThreshold(t, &options.thresholds); !s.ok()) {
      return ReportError(s);
    }
  }
  TempDirs temp;
  StatusOr<std::string> a = ResolveSide(flags.a, flags, temp, "A");
  if (!a.ok()) return ReportError(a.status());
  StatusOr<std::string> b = ResolveSide(flags.b, flags, temp, "B");
  if (!b.ok()) return ReportError(b.status());
  CompareRunsOptions runs;
  runs.a = *a;
  runs.b = *b;
  runs.run_a = flags.run_a;
  runs.run_b = flags.run_b;
  runs.compare = options;
  StatusOr<CompareReport> report = CompareRuns(runs);
  if (!report.ok()) return ReportError(report.status());
  // Label the sides as the user named them, not the temporary stores.
  report->a = flags.a;
  report->b = flags.b;
  std::string text =
      flags.format == "json"
          ? encoders::EncodeJson(*report, encoders::JsonStyle::kPretty)
          : Tables(*report, flags);
  if (!flags.out.empty()) {
    if (Status w = WriteFileAtomically(flags.out, text); !w.ok()) {
      std::fprintf(stderr, "model-inspector: error: %s\n",
                   EscapeForTerminal(w.ToString()).c_str());
      return 6;
    }
  } else {
    std::fputs(text.c_str(), stdout);
  }
  return report->pass ? 0 : 1;
}

}  // namespace

void RegisterCompareCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "tensor by tensor: two runs of a model, two inputs, or a model and its "
      "compiled form (matched through fused_from); cosine, max abs / rel "
      "error, RMSE, error ratios, fp16 overflow, msprobe's pass/fail rule, "
      "the first divergent node (docs/guides/compare.md)");
  cmd->add_option("a", flags->a,
                  "side A, the reference: a run directory with a probe store, "
                  "an .onnx model (run once through model_inspector.runner) "
                  "or an msprobe dump")
      ->required();
  cmd->add_option("b", flags->b, "side B, the one under test (as A)")
      ->required();
  cmd->add_option("--inputs", flags->inputs,
                  "inputs for model sides: one .npy per model input, "
                  "name=x.npy, or one .npz (default: the runner's "
                  "deterministic input)");
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"table", "json", "md"}));
  cmd->add_option("--match", flags->match,
                  "auto (fused_from when B is a compiled form of A's model, "
                  "else by name), name, fused_from")
      ->check(CLI::IsMember({"auto", "name", "fused_from"}));
  cmd->add_option("--rule", flags->rule,
                  "pass/fail defaults: msprobe's accuracy standard or msit's "
                  "analyser limits")
      ->check(CLI::IsMember({"msprobe", "msit"}));
  cmd->add_option("--threshold", flags->thresholds,
                  "NAME=VALUE overriding a limit of the rule (repeatable): "
                  "cosine_min, max_abs_err_max, cosine_floor, "
                  "max_abs_err_ceiling, stats_rel_err_max, "
                  "one_thousandth_min, max_rel_err_max, mean_rel_err_max, "
                  "relative_euclidean_max, rmse_max, fp16_overflow_fails");
  cmd->add_option("--run-a", flags->run_a,
                  "the run of A's probe store (default: the newest)");
  cmd->add_option("--run-b", flags->run_b,
                  "the run of B's probe store (default: the newest)");
  cmd->add_option("--max-rows", flags->max_rows,
                  "pairs listed in table / md output (0: all; the first "
                  "divergent one is always listed)");
  cmd->add_option("--out", flags->out, "write the report to FILE");
  cmd->callback([flags, exit_code]() { *exit_code = RunCompare(*flags); });
}

}  // namespace mi::cli
