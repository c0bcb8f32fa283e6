#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `list-diagnostics`: the diagnostic codes as Markdown
// (docs/reference/errors.md).
void RegisterListDiagnosticsCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
