#include "cli/common.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "base/memory_budget.h"
#include "base/strings.h"

namespace mi::cli {

void AddInputFlags(CLI::App* command, InputFlags* flags, bool paths_required) {
  auto* paths = command->add_option(
      "paths", flags->paths,
      "model files (.onnx, ONNX text), traces (ONNX Runtime profile, PyTorch "
      "profiler, Chrome trace JSON, .gz) or run directories");
  if (paths_required) paths->required();
  command->add_option("--model", flags->framework_model,
                      "framework model (overrides detection)");
  command->add_option("--compiled", flags->compiled_model,
                      "compiled model, e.g. an ONNX Runtime optimized model");
  command->add_flag("--keep-going", flags->keep_going,
                    "load inputs with error diagnostics (dangling inputs, "
                    "cycles) instead of failing");
  command->add_flag("--no-calibrate", flags->no_calibrate,
                    "keep the trace's raw clocks (no clock offsets are "
                    "estimated; calibrated times equal raw times)");
  command->add_flag("-v,--verbose", flags->verbose,
                    "also print info diagnostics");
  command->add_flag("-q,--quiet", flags->quiet, "no progress output");
  AddMemoryLimitOption(command);
}

void AddMemoryLimitOption(CLI::App* command) {
  command
      ->add_option_function<std::string>(
          "--memory-limit",
          [](const std::string& value) {
            auto bytes = ParseMemorySize(value);
            if (!bytes.ok()) {
              throw CLI::ValidationError("--memory-limit",
                                         bytes.status().message());
            }
            MemoryBudget::Process().set_limit(*bytes);
          },
          "memory the inputs may take while they are read (512M, 4G, "
          "1.5GiB, bytes; default: MI_MEMORY_LIMIT, else 75% of the "
          "machine's memory); an input that would pass it fails naming "
          "file, place and limit (exit code 7)")
      ->type_name("SIZE");
}

int CheckMemoryLimitEnvironment() {
  auto from_env = MemoryLimitFromEnvironment();
  if (from_env.ok()) return 0;
  std::fprintf(stderr, "model-inspector: error: %s\n",
               from_env.status().message().c_str());
  return 2;
}

int ReportError(const Status& status) {
  // Messages quote names and text from the inputs: shown escaped.
  std::fprintf(stderr, "model-inspector: error: %s\n",
               EscapeForTerminal(status.ToString()).c_str());
  return ExitCodeFor(status.code());
}

TerminalProgress::TerminalProgress(bool quiet)
    : show_(!quiet && ::isatty(STDERR_FILENO) == 1),
      last_(std::chrono::steady_clock::now()) {}

std::function<void(const std::string&, uint64_t, uint64_t)>
TerminalProgress::Callback() {
  if (!show_) return {};
  return [this](const std::string& file, uint64_t done, uint64_t total) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200) || total == 0) return;
    last_ = now;
    printed_ = true;
    std::fprintf(stderr, "\rreading %s: %3d%% (%.0f of %.0f MB)",
                 EscapeForTerminal(file).c_str(),
                 static_cast<int>(100.0 * done / total), done / 1e6,
                 total / 1e6);
  };
}

void TerminalProgress::Finish() {
  if (printed_) std::fprintf(stderr, "\r\033[K");
  printed_ = false;
}

std::unique_ptr<Session> OpenOrReport(const InputFlags& flags, int* exit_code,
                                      Status* error) {
  OpenOptions options;
  options.paths = flags.paths;
  options.framework_model = flags.framework_model;
  options.compiled_model = flags.compiled_model;
  options.keep_going = flags.keep_going;
  options.allow_graph_faults = flags.allow_graph_faults;
  options.calibrate_clocks = !flags.no_calibrate;
  TerminalProgress progress(flags.quiet);
  options.progress = progress.Callback();
  auto session = Session::Open(options);
  progress.Finish();
  if (!session.ok()) {
    *exit_code = ReportError(session.status());
    if (error != nullptr) *error = session.status();
    return nullptr;
  }
  PrintDiagnostics(**session, flags.verbose);
  *exit_code = 0;
  return std::move(session).value();
}

void PrintDiagnostics(const Session& session, bool verbose) {
  for (const DiagnosticInfo& d : session.Diagnostics()) {
    if (d.severity == "info" && !verbose) continue;
    std::fprintf(stderr, "model-inspector: %s: %s (%llu): %s\n",
                 d.severity.c_str(), d.code.c_str(),
                 static_cast<unsigned long long>(d.count),
                 d.description.c_str());
    for (const std::string& e : d.examples) {
      std::fprintf(stderr, "  %s\n", EscapeForTerminal(e).c_str());
    }
  }
}

CLI::Validator LevelValidator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value == "framework" || value == "compiled" ||
            (value.rfind("stage:", 0) == 0 && value.size() > 6)) {
          return {};
        }
        return "expected framework, compiled or stage:<Stage>, found '" +
               value + "'";
      },
      "LEVEL");
}

}  // namespace mi::cli
