#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `diagnose PATH...`: the diagnosis findings with evidence and
// suggestions, optionally the frequent task sequences and per-block time;
// `diagnose --list-rules` prints the rule table
// (docs/reference/diagnosis-rules.md).
void RegisterDiagnoseCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
