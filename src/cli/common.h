#pragma once

// Helpers shared by the subcommands: opening a session with progress on a
// terminal, printing diagnostics, and turning a Status into an exit code.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model_inspector/session.h"

namespace mi::cli {

struct InputFlags {
  std::vector<std::string> paths;
  std::string framework_model;
  std::string compiled_model;
  bool keep_going = false;
  // Set by the viewers (open, render): see OpenOptions::allow_graph_faults.
  bool allow_graph_faults = false;
  bool no_calibrate = false;
  bool verbose = false;
  bool quiet = false;

  bool empty() const {
    return paths.empty() && framework_model.empty() && compiled_model.empty();
  }
};

// Adds the input options, --memory-limit among them.
void AddInputFlags(CLI::App* command, InputFlags* flags, bool paths_required);

// `--memory-limit SIZE` (512M, 4G, 1.5GiB, bytes): sets the limit of the
// process's memory budget (base/memory_budget.h), which every read charges;
// MI_MEMORY_LIMIT when not given, else 75% of the machine's memory. Added to
// the main app and to every command that reads inputs.
void AddMemoryLimitOption(CLI::App* command);

// MI_MEMORY_LIMIT set but not a size: the error (exit code 2), else 0.
int CheckMemoryLimitEnvironment();

// Opens the inputs; on failure prints "model-inspector: error: ..." and
// returns nullptr with *exit_code set (and *error, when given, to the
// error).
// "reading FILE: 42% (120 of 285 MB)" on stderr while inputs are read:
// for people only (a terminal, not -q), never in pipes or CI. Finish()
// clears the line before anything else is printed.
class TerminalProgress {
 public:
  explicit TerminalProgress(bool quiet);
  ~TerminalProgress() { Finish(); }
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;
  // The callback for OpenOptions / DiffInputOptions::progress; empty when
  // no progress is shown. Valid while this object lives.
  std::function<void(const std::string&, uint64_t, uint64_t)> Callback();
  void Finish();

 private:
  bool show_ = false;
  bool printed_ = false;
  std::chrono::steady_clock::time_point last_;
};

std::unique_ptr<Session> OpenOrReport(const InputFlags& flags, int* exit_code,
                                      Status* error = nullptr);

// Prints data-loss and error diagnostics (and info ones with --verbose).
void PrintDiagnostics(const Session& session, bool verbose);

int ReportError(const Status& status);

// --level: framework, compiled, or a GE graph-dump stage (stage:<Stage>).
CLI::Validator LevelValidator();

}  // namespace mi::cli
