#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `export PATH... --out DIR` / `export --input-dir D`: graph.json,
// trace.json, summary.json.
void RegisterExportCommand(CLI::App& app, int* exit_code);
}  // namespace mi::cli
