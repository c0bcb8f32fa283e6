#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `summary PATH...`: the per-op-type, stream, node and run tables, and the
// whole-trace analyses beside them.
void RegisterSummaryCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
