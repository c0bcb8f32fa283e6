#pragma once

// `model-inspector trace [--trigger SPEC]... [--window K] [--output FILE]
// [--python PY] -- CMD ARGS...`: runs an unmodified PyTorch training script
// with the Python package's training monitor attached
// (python/model_inspector/train/attach.py; docs/guides/training-monitor.md,
// docs/reference/cli.md). Exit code: the script's; 2 for usage errors (a
// bad trigger spec included), 3 when the script could not be started or it
// succeeded but no snapshot was written (no optimizer, no package).
#include <CLI/CLI.hpp>

namespace mi::cli {

void RegisterTraceCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
