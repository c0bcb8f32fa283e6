#pragma once

#include <CLI/CLI.hpp>

namespace mi::cli {

// `report RUN --out report.html [--pdf report.pdf]`: one run as a
// self-contained HTML page (summary tables, op-type chart, graph
// drawings), printed to PDF through headless Chromium with --pdf.
void RegisterReportCommand(CLI::App& app, int* exit_code);

}  // namespace mi::cli
