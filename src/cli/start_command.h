#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `start --output-dir D`: prepares a run directory (I4).
void RegisterStartCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
