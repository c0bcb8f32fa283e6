#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `open [PATH...] [--run FILE...]... [--host H] [--port P] [--token T]`:
// serves the web UI and its HTTP API (docs/reference/http-api.md) for the
// runs until SIGINT/SIGTERM. No PATH: the bundled demo run.
void RegisterOpenCommand(CLI::App& app, int* exit_code);

// The command line without a subcommand: `model-inspector --model M
// [--compare C] [--port N] [--host H] [--token T] [--log-level L]` is `open`
// (same loopback and token rules for --host). With --compare, two models of
// one format are two runs, an ONNX model and its .om one run, linked.
void RegisterSeedOptions(CLI::App& app, int* exit_code);

}  // namespace mi::cli
