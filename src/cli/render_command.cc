#include "cli/render_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "cli/common.h"
#include "model_inspector/session.h"

namespace mi::cli {
namespace {

struct RenderFlags {
  InputFlags input;
  std::string out;
  std::string level = "framework";
  std::string direction = "tb";
};

}  // namespace

void RegisterRenderCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<RenderFlags>();
  CLI::App* cmd = app.add_subcommand(
      "render", "draw a graph level as SVG (layered layout)");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_option("--out", flags->out, "the SVG file to write")->required();
  cmd->add_option("--level", flags->level, "graph level to draw")
      ->check(CLI::IsMember({"framework", "compiled"}));
  cmd->add_option("--direction", flags->direction,
                  "tb (top to bottom) or lr (left to right)")
      ->check(CLI::IsMember({"tb", "lr"}));
  cmd->callback([flags, exit_code]() {
    if (flags->input.empty()) {
      throw CLI::ValidationError("render", "give at least one PATH");
    }
    std::unique_ptr<Session> session = OpenOrReport(flags->input, exit_code);
    if (!session) return;
    Session::RenderOptions options;
    options.level = flags->level;
    options.left_to_right = flags->direction == "lr";
    auto svg = session->RenderSvg(options);
    if (!svg.ok()) {
      *exit_code = ReportError(svg.status());
      return;
    }
    Status written = WriteFileAtomically(flags->out, *svg);
    if (!written.ok()) {
      *exit_code = ReportError(written);
      return;
    }
    std::printf("wrote %s\n", flags->out.c_str());
  });
}

}  // namespace mi::cli
