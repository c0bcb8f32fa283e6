#pragma once

// `model-inspector probes RUN_DIR [--run ID] [--probe P] [--format
// table|json]`: the tensor probes a run directory's probe store holds
// (include/model_inspector/probes.h; docs/reference/probe-store.md): its
// runs, one run's probes with their statistics, trigger hits and plugin
// metrics, and with --probe a probe's statistics over the kept runs.

#include <CLI/CLI.hpp>

namespace mi::cli {

void RegisterProbesCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
