#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `check PATH... [--json]`: validates every graph level — dangling
// inputs, cycles, unused outputs, shape/dtype incompatibilities, declared
// shapes that contradict inference. Exit 0 when no error finding (warnings
// allowed), 1 with error findings, the usual input error codes (2 usage,
// 3 not found, 4 malformed, ...) when the inputs cannot be read.
void RegisterCheckCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
