#include "cli/list_diagnostics_command.h"

#include <cstdio>

#include "model_inspector/session.h"

namespace mi::cli {

void RegisterListDiagnosticsCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "list-diagnostics",
      "print the diagnostic codes (docs/reference/errors.md)");
  cmd->callback([exit_code]() {
    std::fputs(DiagnosticsReferenceMarkdown().c_str(), stdout);
    *exit_code = 0;
  });
}

}  // namespace mi::cli
