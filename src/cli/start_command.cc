#include "cli/start_command.h"

#include <cstdio>
#include <memory>

#include "cli/common.h"

namespace mi::cli {

void RegisterStartCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<StartOptions>();
  CLI::App* cmd = app.add_subcommand(
      "start",
      "prepare a run directory and print what to set so ONNX Runtime and "
      "PyTorch write into it");
  cmd->add_option("--output-dir", flags->output_dir,
                  "the run directory to create")
      ->required();
  cmd->add_flag("--enable-graph", flags->enable_graph,
                "save the compiled (optimized) graph");
  cmd->add_flag("--enable-runtime", flags->enable_runtime,
                "record execution traces (profiles)");
  cmd->add_option("--backend", flags->backend,
                  "onnxruntime (ONNX Runtime and PyTorch; default) or cann "
                  "(GE graph dumps, msprof / torch_npu; prints `export` "
                  "lines for eval)")
      ->check(CLI::IsMember({"onnxruntime", "cann"}));
  cmd->callback([flags, exit_code]() {
    auto text = StartRunDirectory(*flags);
    if (!text.ok()) {
      *exit_code = ReportError(text.status());
      return;
    }
    std::fputs(text->c_str(), stdout);
  });
}

}  // namespace mi::cli
