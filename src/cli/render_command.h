#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `render PATH... --out graph.svg`: an SVG of a graph level, laid out by
// the layered layout engine.
void RegisterRenderCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
