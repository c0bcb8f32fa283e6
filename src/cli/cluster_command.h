#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `cluster DIR|PATHS...` (the ranks of a distributed job side by side:
// rank x step table, slow ranks with reasons, collectives ranked by exposed
// time, findings), `cluster reduce PATHS... --out FILE` (a rank summary)
// and `cluster merge FILES... --out FILE` (docs/design/clusters.md).
void RegisterClusterCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
