#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `path RUN --critical | --node NAME`: the critical path of a run, or a
// node's ancestors and descendants with their tasks.
void RegisterPathCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
