#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `summary PATH...`: the per-op-type table (E5) and friends.
void RegisterSummaryCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
