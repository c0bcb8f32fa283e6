#include "cli/report_command.h"

#include <memory>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "cli/common.h"
#include "model_inspector/diff.h"
#include "report/pdf.h"
#include "report/report.h"

namespace mi::cli {
namespace {

struct ReportFlags {
  std::vector<std::string> paths;
  std::string out;
  std::string pdf;
  std::string model;
  std::string label;
  size_t max_drawn_nodes = 2000;
};

int RunReport(const ReportFlags& flags) {
  DiffInputOptions options;
  options.paths = flags.paths;
  options.digest.meta.model = flags.model;
  options.digest.meta.label = flags.label;
  TerminalProgress progress(/*quiet=*/false);
  options.progress = progress.Callback();
  StatusOr<RunDigest> run = LoadDiffInput(options);
  progress.Finish();
  if (!run.ok()) return ReportError(run.status());
  report::RunReportOptions report_options;
  report_options.max_drawn_nodes = flags.max_drawn_nodes;
  std::string html = report::RenderRunHtml(*run, report_options);
  if (!flags.out.empty()) {
    if (Status s = WriteFileAtomically(flags.out, html).WithContext(flags.out);
        !s.ok()) {
      return ReportError(s);
    }
  }
  if (!flags.pdf.empty()) {
    if (Status s = report::PrintHtmlToPdf(html, flags.pdf); !s.ok()) {
      return ReportError(s);
    }
  }
  return 0;
}

}  // namespace

void RegisterReportCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "one run as a self-contained HTML page (what was read, time per op "
      "type as a table and a bar chart, streams, slowest nodes, each graph "
      "drawn); --pdf prints it through headless Chromium");
  cmd->add_option("paths", flags->paths,
                  "a run directory, the run's files, or a digest file")
      ->required();
  cmd->add_option("--out", flags->out, "the HTML file (written atomically)");
  cmd->add_option("--pdf", flags->pdf,
                  "also print the page to this PDF file (needs Chromium: "
                  "MI_CHROMIUM, else /usr/bin/chromium)");
  cmd->add_option("--model-name", flags->model, "the model's name");
  cmd->add_option("--label", flags->label, "a label for the run");
  cmd->add_option("--max-drawn-nodes", flags->max_drawn_nodes,
                  "graphs with more nodes are not drawn");
  AddMemoryLimitOption(cmd);
  cmd->callback([flags, exit_code]() {
    if (flags->out.empty() && flags->pdf.empty()) {
      throw CLI::ValidationError("report",
                                 "give --out FILE.html, --pdf "
                                 "FILE.pdf or both");
    }
    *exit_code = RunReport(*flags);
  });
}

}  // namespace mi::cli
