#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `open [PATH...] [--run FILE...]... [--host H] [--port P] [--token T]`:
// serves the web UI and its HTTP API (docs/reference/http-api.md) for the
// runs until SIGINT/SIGTERM. No PATH: the bundled demo run.
void RegisterOpenCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
