#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `diff BASE NEW` (what changed between two runs, the `--fail-on` gate and
// its reports: text, md, json, junit, html), `diff --levels RUN`
// (framework vs compiled within one run) and `digest RUN --out FILE` (a
// run's digest, what a later diff or the run history reads);
// docs/design/diff.md, docs/reference/cli.md.
void RegisterDiffCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
