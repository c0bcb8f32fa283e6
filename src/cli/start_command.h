#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `start --output-dir D`: prepares a run directory and prints what to
// set so ONNX Runtime and PyTorch write into it.
void RegisterStartCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
