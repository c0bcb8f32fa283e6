#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `export PATH... --out DIR` / `export --input-dir D`: graph.json,
// trace.json, summary.json (I2, I4).
void RegisterExportCommand(CLI::App& app, int* exit_code);
// `start --output-dir D`: prepares a run directory (I4).
void RegisterStartCommand(CLI::App& app, int* exit_code);
// `list-diagnostics`: the diagnostic codes as Markdown.
void RegisterListDiagnosticsCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
