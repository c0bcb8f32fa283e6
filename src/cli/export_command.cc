#include "cli/export_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/strings.h"
#include "cli/common.h"
#include "cli/history_command.h"

namespace mi::cli {
namespace {

struct ExportFlags {
  InputFlags input;
  std::string input_dir;
  std::string out;
  std::string format = "json";
  RecordFlags record;
};

}  // namespace

void RegisterExportCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "write graph.json, trace.json, summary.json and analyses.json "
      "(schemas in "
      "docs/reference/schemas)");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_option("--input-dir", flags->input_dir,
                  "a run directory (see `start`); files are detected by "
                  "content");
  cmd->add_option("--out", flags->out,
                  "output directory (default with --input-dir: "
                  "<dir>/model-inspector-export)");
  cmd->add_option("--format", flags->format, "dump format")
      ->check(CLI::IsMember({"json"}));
  // --model names the framework model file here, so the history's model
  // name is --model-name.
  AddRecordFlags(cmd, &flags->record, /*with_record_flag=*/true,
                 "--model-name");
  cmd->callback([flags, exit_code]() {
    InputFlags input = flags->input;
    std::string out = flags->out;
    if (!flags->input_dir.empty()) {
      input.paths.push_back(flags->input_dir);
      if (out.empty()) {
        out =
            (std::filesystem::path(flags->input_dir) / "model-inspector-export")
                .string();
      }
    }
    if (input.empty()) {
      throw CLI::ValidationError("export", "give PATHs or --input-dir");
    }
    const RecordFlags& record = flags->record;
    if (!record.record && (!record.history.empty() || !record.model.empty() ||
                           !record.label.empty() || !record.commit.empty())) {
      throw CLI::ValidationError(
          "export",
          "--history, --model-name, --label and --commit go with "
          "--record");
    }
    if (out.empty()) {
      throw CLI::ValidationError("--out", "required unless --input-dir");
    }
    std::unique_ptr<Session> session = OpenOrReport(input, exit_code);
    if (!session) return;
    Status s = session->ExportDumps(out);
    if (!s.ok()) {
      *exit_code = ReportError(s);
      return;
    }
    std::printf(
        "wrote %s/graph.json, trace.json, summary.json, analyses.json%s\n",
        EscapeForTerminal(out).c_str(),
        session->HasSeveralRanks() ? ", cluster.json" : "");
    if (flags->record.record) {
      RunDigest digest = session->Digest(DigestOptionsFor(flags->record));
      std::vector<std::string> inputs = input.paths;
      for (const std::string* model :
           {&input.framework_model, &input.compiled_model}) {
        if (!model->empty()) inputs.push_back(*model);
      }
      CompleteRunMeta(flags->record, inputs, &digest);
      StatusOr<int64_t> id = RecordRun(flags->record, digest);
      if (!id.ok()) *exit_code = ReportError(id.status());
    }
  });
}

}  // namespace mi::cli
