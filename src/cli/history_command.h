#pragma once

// `history list|show|add|baseline set|baseline list|trend`: the run history
// (include/model_inspector/history.h), and the pieces other commands use to
// record a run into it (`export --record`, `diff --record`) or to read a
// baseline's digest (`diff --baseline`).

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model_inspector/diff.h"
#include "model_inspector/history.h"
#include "model_inspector/status.h"

namespace mi::cli {

void RegisterHistoryCommand(CLI::App& app, int* exit_code);

// `--history PATH`.
void AddHistoryPathOption(CLI::App* command, std::string* path);
// The flag's path, else DefaultHistoryPath().
std::string HistoryPathOrDefault(const std::string& flag);

// What a recording command adds to a run's metadata.
struct RecordFlags {
  bool record = false;  // --record (export, diff)
  std::string history;  // --history
  std::string model;    // --model-name
  std::string label;    // --label
  std::string commit;   // --commit
};
// --record (when `with_record_flag`), --history, --label, --commit and the
// model name option (`model_option`: "--model" where the command has no
// --model of its own, else e.g. "--model-name").
void AddRecordFlags(CLI::App* command, RecordFlags* flags,
                    bool with_record_flag, const std::string& model_option);
// The metadata a digest is made with: model, label and commit from the
// flags.
DigestOptions DigestOptionsFor(const RecordFlags& flags);
// Fills what the digest lacks: the flags' model / label / commit (they
// win over a digest file's own), the tool version, host, creation time and
// inputs, and a model name from the inputs when none is known (the
// framework model's file name; a run directory's name).
void CompleteRunMeta(const RecordFlags& flags,
                     const std::vector<std::string>& paths, RunDigest* digest);
// Records the digest (creating the history when needed); prints
// "recorded run N (model M) in PATH" on `out`. Returns the run's id.
StatusOr<int64_t> RecordRun(const RecordFlags& flags, const RunDigest& digest,
                            std::FILE* out = stdout);

// The digest of baseline `name` in the history at `history_path`; `run`
// (when given) receives the run's summary.
StatusOr<RunDigest> LoadBaselineDigest(const std::string& history_path,
                                       const std::string& name,
                                       HistoryRun* run = nullptr);

}  // namespace mi::cli
