#include "cli/analyze_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/common.h"
#include "encoders/json_encoder.h"
#include "encoders/table_encoder.h"
#include "encoders/table_printer.h"
#include "model_inspector/session.h"

namespace mi::cli {
namespace {

struct AnalyzeFlags {
  InputFlags input;
  std::string id;
  bool list = false;
  std::vector<std::string> params;  // NAME=VALUE
  std::string format = "text";
};

encoders::TableFormat TableFormatOf(const std::string& format) {
  if (format == "csv") return encoders::TableFormat::kCsv;
  if (format == "markdown") return encoders::TableFormat::kMarkdown;
  return encoders::TableFormat::kText;
}

std::string Needs(const AnalysisInfo& a) {
  std::string out;
  for (auto [need, name] :
       {std::pair{a.needs_trace, "trace"}, std::pair{a.needs_graph, "graph"},
        std::pair{a.needs_training, "training"}}) {
    if (!need) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out.empty() ? "-" : out;
}

int List(const AnalyzeFlags& flags) {
  std::vector<AnalysisInfo> analyses = RegisteredAnalyses();
  if (flags.format == "markdown") {
    std::fputs(AnalysesReferenceMarkdown().c_str(), stdout);
    return 0;
  }
  if (flags.format == "json") {
    AnalysisListResult list;
    list.analyses = std::move(analyses);
    std::fputs(encoders::EncodeJson(list).c_str(), stdout);
    return 0;
  }
  encoders::Table t{"Analyses (model-inspector analyze ID PATH...)",
                    {"id", "title", "needs", "in export", "parameters"},
                    {}};
  for (const AnalysisInfo& a : analyses) {
    std::string params;
    for (const AnalysisParameterInfo& p : a.parameters) {
      params += (params.empty() ? "" : ", ") + p.name + "=" +
                (p.default_value.empty() ? "''" : p.default_value);
    }
    t.rows.push_back({a.id, a.title, Needs(a), a.in_export ? "yes" : "no",
                      params.empty() ? "-" : params});
  }
  t.full_last_column = true;
  std::fputs(
      (flags.format == "csv" ? encoders::RenderCsv(t) : encoders::RenderText(t))
          .c_str(),
      stdout);
  return 0;
}

int Run(const AnalyzeFlags& flags) {
  AnalysisParams params;
  for (const std::string& p : flags.params) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr,
                   "error: --param: expected NAME=VALUE (e.g. "
                   "gap_threshold_ns=50000), found '%s'\n",
                   EscapeForTerminal(p).c_str());
      return 2;
    }
    if (!params.emplace(p.substr(0, eq), p.substr(eq + 1)).second) {
      std::fprintf(stderr, "error: --param: '%s' is given twice\n",
                   EscapeForTerminal(p.substr(0, eq)).c_str());
      return 2;
    }
  }
  int exit_code = 0;
  std::unique_ptr<Session> session = OpenOrReport(flags.input, &exit_code);
  if (!session) return exit_code;
  auto result = session->RunAnalysis(flags.id, params);
  if (!result.ok()) return ReportError(result.status());
  std::string title = flags.id;
  for (const AnalysisInfo& a : session->Analyses()) {
    if (a.id == flags.id) title = a.title;
  }
  std::fputs(
      flags.format == "json"
          ? encoders::EncodeJson(**result).c_str()
          : encoders::EncodeTables(**result, title, TableFormatOf(flags.format))
                .c_str(),
      stdout);
  return 0;
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<AnalyzeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "run any registered analysis (critical path, idle/overlap, load "
      "balance, memory, ...; --list shows them, docs/reference/analyses.md)");
  cmd->add_option("id", flags->id, "the analysis (see --list)");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_flag("--list", flags->list,
                "list the analyses with their parameters (--format markdown: "
                "docs/reference/analyses.md)");
  cmd->add_option("--param", flags->params,
                  "a parameter of the analysis: NAME=VALUE (repeatable)");
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"text", "json", "csv", "markdown"}));
  cmd->callback([flags, exit_code]() {
    if (flags->list) {
      *exit_code = List(*flags);
      return;
    }
    if (flags->id.empty() || flags->input.empty()) {
      throw CLI::ValidationError(
          "analyze", "give an analysis id and at least one PATH, or --list");
    }
    *exit_code = Run(*flags);
  });
}

}  // namespace mi::cli
