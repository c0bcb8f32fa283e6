#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `compare A B [--inputs X]... [--format table|json|md]`: two runs tensor by
// tensor (docs/guides/compare.md, docs/reference/cli.md). Exit codes as
// `diff`: 0 every pair passes, 1 a pair fails, 2 usage, 3 a side not
// found, 4 a malformed input, 6 the report could not be written.
void RegisterCompareCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
