#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `render PATH... --out FILE`: one graph level laid out by the hierarchical
// layout engine (groups folded to --max-items, --expand / --collapse by
// group path) as SVG, JSON or the compact binary the UI reads.
void RegisterRenderCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
