#include "cli/export_model_explorer_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "cli/common.h"
#include "model_inspector/session.h"

namespace mi::cli {
namespace {

struct ExportModelExplorerFlags {
  InputFlags input;
  std::string level = "compiled";
  std::string out_graph;
  std::string out_node_data;
};

}  // namespace

void RegisterExportModelExplorerCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ExportModelExplorerFlags>();
  CLI::App* cmd = app.add_subcommand(
      "export-model-explorer",
      "write one graph level as Model Explorer's graph JSON and the per-node "
      "times as its node-data JSON");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_option("--level", flags->level,
                  "graph level (default: compiled, else framework when the "
                  "run has no compiled graph)")
      ->check(LevelValidator());
  cmd->add_option("--out-graph", flags->out_graph,
                  "the graph JSON to write (open it in Model Explorer)")
      ->required();
  cmd->add_option("--out-node-data", flags->out_node_data,
                  "the node-data JSON to write (load it in Model Explorer's "
                  "node data panel)");
  cmd->callback([flags, cmd, exit_code]() {
    if (flags->input.empty()) {
      throw CLI::ValidationError("export-model-explorer",
                                 "give at least one PATH");
    }
    std::unique_ptr<Session> session = OpenOrReport(flags->input, exit_code);
    if (!session) return;
    std::string level = flags->level;
    if (cmd->count("--level") == 0) {
      // Default: the compiled graph when there is one.
      bool compiled = false;
      for (const std::string& l : session->Levels()) {
        compiled = compiled || l == "compiled";
      }
      if (!compiled) level = "framework";
    }
    auto graph = session->ModelExplorerGraphJson(level);
    if (!graph.ok()) {
      *exit_code = ReportError(graph.status().WithContext("--level"));
      return;
    }
    std::string node_data;
    if (!flags->out_node_data.empty()) {
      auto data = session->ModelExplorerNodeDataJson(level);
      if (!data.ok()) {
        *exit_code = ReportError(data.status());
        return;
      }
      node_data = std::move(data).value();
    }
    // Both files are written in full before either is renamed into place.
    std::vector<FileContent> files = {{flags->out_graph, *graph}};
    if (!flags->out_node_data.empty()) {
      files.push_back({flags->out_node_data, node_data});
    }
    Status written = WriteFilesAtomically(files);
    if (!written.ok()) {
      *exit_code = ReportError(written);
      return;
    }
    std::printf("wrote %s%s%s (%s level)\n",
                EscapeForTerminal(flags->out_graph).c_str(),
                flags->out_node_data.empty() ? "" : ", ",
                EscapeForTerminal(flags->out_node_data).c_str(),
                EscapeForTerminal(level).c_str());
  });
}

}  // namespace mi::cli
