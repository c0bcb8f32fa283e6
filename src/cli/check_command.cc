#include "cli/check_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/common.h"
#include "encoders/json_encoder.h"

namespace mi::cli {
namespace {

struct CheckFlags {
  InputFlags input;
  bool json = false;
};

// The loaders' own reports of what `check` reports as findings.
bool CoveredByFindings(const DiagnosticInfo& d) {
  return d.code == "dangling_input" || d.code == "graph_cycle";
}

std::string RenderText(const ValidationResult& report) {
  std::string out;
  for (const LevelValidationInfo& level : report.levels) {
    // Graph, file and node names come from the inputs: shown escaped.
    out += fmt::format("{} graph '{}' ({}): {} nodes, {} errors, {} warnings\n",
                       level.level, EscapeForTerminal(level.graph),
                       EscapeForTerminal(level.file), level.nodes, level.errors,
                       level.warnings);
    for (const ValidationFindingInfo& f : level.findings) {
      out += fmt::format("  {} [{}] {}\n", f.severity, f.rule,
                         EscapeForTerminal(f.message));
    }
  }
  uint64_t errors = report.errors;
  uint64_t warnings = report.warnings;
  out += errors == 0 && warnings == 0
             ? std::string("ok: no findings\n")
             : fmt::format("{}: {} errors, {} warnings\n",
                           errors == 0 ? "ok" : "failed", errors, warnings);
  return out;
}

int Run(const CheckFlags& flags) {
  OpenOptions options;
  options.paths = flags.input.paths;
  options.framework_model = flags.input.framework_model;
  options.compiled_model = flags.input.compiled_model;
  // Dangling inputs and cycles are findings here, not load failures.
  options.keep_going = true;
  auto opened = Session::Open(options);
  if (!opened.ok()) return ReportError(opened.status());
  std::unique_ptr<Session> session = std::move(opened).value();
  for (const DiagnosticInfo& d : session->Diagnostics()) {
    if (CoveredByFindings(d)) continue;
    if (d.severity == "info" && !flags.input.verbose) continue;
    std::fprintf(stderr, "model-inspector: %s: %s (%llu): %s\n",
                 d.severity.c_str(), d.code.c_str(),
                 static_cast<unsigned long long>(d.count),
                 d.description.c_str());
  }
  bool has_graph = false;
  for (const std::string& level : session->Levels()) {
    has_graph |= level == "framework" || level == "compiled";
  }
  if (!has_graph) {
    return ReportError(InvalidArgumentError(
        "check needs a model (an ONNX file, ONNX text or a run directory "
        "holding one); the inputs hold none"));
  }
  ValidationResult report = session->Validation();
  std::fputs(flags.json ? encoders::EncodeJson(report).c_str()
                        : RenderText(report).c_str(),
             stdout);
  return report.errors > 0 ? 1 : 0;
}

}  // namespace

void RegisterCheckCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "validate the graphs: dangling inputs, cycles, unused outputs, "
      "shape/dtype incompatibilities, declared shapes that contradict "
      "inference (exit 1 on errors)");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_flag("--json", flags->json,
                "print the findings as JSON (docs/reference/schemas/"
                "check.schema.json)");
  cmd->callback([flags, exit_code]() {
    if (flags->input.empty()) {
      throw CLI::ValidationError("check", "give at least one PATH");
    }
    *exit_code = Run(*flags);
  });
}

}  // namespace mi::cli
