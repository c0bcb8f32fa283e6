// model-inspector: one binary, one subcommand per capability.

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/analyze_command.h"
#include "cli/check_command.h"
#include "cli/cluster_command.h"
#include "cli/common.h"
#include "cli/compare_command.h"
#include "cli/diagnose_command.h"
#include "cli/diff_command.h"
#include "cli/export_command.h"
#include "cli/export_model_explorer_command.h"
#include "cli/history_command.h"
#include "cli/list_diagnostics_command.h"
#include "cli/open_command.h"
#include "cli/path_command.h"
#include "cli/probes_command.h"
#include "cli/render_command.h"
#include "cli/report_command.h"
#include "cli/start_command.h"
#include "cli/summary_command.h"
#include "cli/trace_command.h"
#include "model_inspector/session.h"

int main(int argc, char** argv) {
  CLI::App app{
      "model-inspector: see what a model is, what the compiler made of it "
      "and what the device ran, linked."};
  app.set_version_flag("--version",
                       "model-inspector " + std::string(mi::Version()));
  // No subcommand: `--model FILE` opens it in the web UI (open_command.h).
  app.require_subcommand(0, 1);
  int exit_code = 0;
  mi::cli::RegisterSummaryCommand(app, &exit_code);
  mi::cli::RegisterExportCommand(app, &exit_code);
  mi::cli::RegisterExportModelExplorerCommand(app, &exit_code);
  mi::cli::RegisterStartCommand(app, &exit_code);
  mi::cli::RegisterRenderCommand(app, &exit_code);
  mi::cli::RegisterListDiagnosticsCommand(app, &exit_code);
  mi::cli::RegisterOpenCommand(app, &exit_code);
  mi::cli::RegisterDiagnoseCommand(app, &exit_code);
  mi::cli::RegisterPathCommand(app, &exit_code);
  mi::cli::RegisterCheckCommand(app, &exit_code);
  mi::cli::RegisterAnalyzeCommand(app, &exit_code);
  mi::cli::RegisterClusterCommand(app, &exit_code);
  mi::cli::RegisterHistoryCommand(app, &exit_code);
  mi::cli::RegisterProbesCommand(app, &exit_code);
  mi::cli::RegisterDiffCommand(app, &exit_code);
  mi::cli::RegisterCompareCommand(app, &exit_code);
  mi::cli::RegisterReportCommand(app, &exit_code);
  mi::cli::RegisterTraceCommand(app, &exit_code);
  mi::cli::RegisterSeedOptions(app, &exit_code);
  mi::cli::AddMemoryLimitOption(&app);
  if (int rc = mi::cli::CheckMemoryLimitEnvironment(); rc != 0) return rc;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2 (CLI11's --help/--version exit 0).
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
