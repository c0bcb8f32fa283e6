#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `analyze ID PATH... [--param NAME=VALUE] [--format ...]` runs any
// registered analysis; `analyze --list` lists them
// (docs/reference/analyses.md).
void RegisterAnalyzeCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
