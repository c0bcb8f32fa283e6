#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `export-model-explorer PATH... --level L --out-graph G.json
// --out-node-data D.json`: one graph level as Google AI Edge Model
// Explorer's graph JSON, and our per-node times as its node-data JSON
// (docs/reference/cli.md).
void RegisterExportModelExplorerCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
