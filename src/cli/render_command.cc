#include "cli/render_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "cli/common.h"
#include "model_inspector/session.h"

namespace mi::cli {
namespace {

struct RenderFlags {
  InputFlags input;
  std::string out;
  std::string format;  // "" = from the --out extension
  std::string level = "framework";
  std::string direction = "tb";
  std::string groups = "scopes";
  size_t max_items = 2000;
  std::vector<std::string> expand;
  std::vector<std::string> collapse;
  std::string focus;
  std::vector<uint32_t> reveal;
};

std::string FormatFromPath(std::string_view path) {
  if (path.ends_with(".json")) return "json";
  if (path.ends_with(".bin") || path.ends_with(".mily")) return "binary";
  return "svg";
}

// Expands `path` and every group above it, so the group shows.
Status ExpandPath(LayoutView& view, std::string_view path) {
  uint32_t group = 0;
  MI_ASSIGN_OR_RETURN(group, view.FindGroup(path));
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    // A label holding '/' makes a prefix that names no group: skip it.
    auto above = view.FindGroup(path.substr(0, slash));
    if (above.ok()) MI_RETURN_IF_ERROR(view.SetExpanded(*above, true));
  }
  return view.SetExpanded(group, true);
}

StatusOr<std::string> Render(const Session& session, const RenderFlags& f) {
  LayoutViewOptions options;
  options.level = f.level;
  options.left_to_right = f.direction == "lr";
  options.grouping = f.groups;
  options.max_visible_items = f.max_items;
  std::unique_ptr<LayoutView> view;
  MI_ASSIGN_OR_RETURN(view, session.OpenLayoutView(options));
  for (const std::string& path : f.expand) {
    MI_RETURN_IF_ERROR(ExpandPath(*view, path).WithContext("--expand"));
  }
  for (const std::string& path : f.collapse) {
    auto group = view->FindGroup(path);
    if (!group.ok()) return group.status().WithContext("--collapse");
    MI_RETURN_IF_ERROR(
        view->SetExpanded(*group, false).WithContext("--collapse"));
  }
  for (uint32_t node : f.reveal) {
    MI_RETURN_IF_ERROR(view->Reveal(node).WithContext("--reveal"));
  }
  if (!f.focus.empty()) {
    auto group = view->FindGroup(f.focus);
    if (!group.ok()) return group.status().WithContext("--focus");
    MI_RETURN_IF_ERROR(view->SetFocus(*group).WithContext("--focus"));
  }
  std::string format = f.format.empty() ? FormatFromPath(f.out) : f.format;
  if (format == "json") return view->Json();
  if (format == "binary") return view->Binary();
  return view->Svg();
}

}  // namespace

void RegisterRenderCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<RenderFlags>();
  CLI::App* cmd = app.add_subcommand(
      "render",
      "lay out a graph level (groups folded to a budget) and write it as SVG, "
      "JSON or the compact binary the UI reads");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_option("--out", flags->out, "the file to write")->required();
  cmd->add_option("--format", flags->format,
                  "svg, json or binary (default: from the --out extension: "
                  ".json, .bin, else svg)")
      ->check(CLI::IsMember({"svg", "json", "binary"}));
  cmd->add_option("--level", flags->level, "graph level to draw")
      ->check(LevelValidator());
  cmd->add_option("--direction", flags->direction,
                  "tb (top to bottom) or lr (left to right)")
      ->check(CLI::IsMember({"tb", "lr"}));
  cmd->add_option("--groups", flags->groups,
                  "scopes (module paths), fusion (scopes plus the framework "
                  "nodes fused into one compiled node; needs a compiled "
                  "graph) or none")
      ->check(CLI::IsMember({"scopes", "fusion", "none"}));
  cmd->add_option("--max-items", flags->max_items,
                  "fold groups until at most N items are visible (0 = "
                  "expand everything)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--expand", flags->expand,
                  "expand the group at this path of labels joined by '/' "
                  "(e.g. layer1/layer1.0) and the groups above it; repeatable");
  cmd->add_option("--collapse", flags->collapse,
                  "collapse the group at this path (after --expand); "
                  "repeatable");
  cmd->add_option("--reveal", flags->reveal,
                  "expand every group on the path to this node (its node "
                  "id, as in the JSON's model_id), after --expand / "
                  "--collapse; repeatable");
  cmd->add_option("--focus", flags->focus,
                  "draw only the group at this path (expanded, with the "
                  "groups above it), its frame's corner at the origin");
  cmd->callback([flags, exit_code]() {
    if (flags->input.empty()) {
      throw CLI::ValidationError("render", "give at least one PATH");
    }
    // A viewer: a graph with a fault is drawn, the fault marked.
    InputFlags input = flags->input;
    input.allow_graph_faults = true;
    std::unique_ptr<Session> session = OpenOrReport(input, exit_code);
    if (!session) return;
    auto data = Render(*session, *flags);
    if (!data.ok()) {
      *exit_code = ReportError(data.status());
      return;
    }
    Status written = WriteFileAtomically(flags->out, *data);
    if (!written.ok()) {
      *exit_code = ReportError(written);
      return;
    }
    std::printf("wrote %s\n", EscapeForTerminal(flags->out).c_str());
  });
}

}  // namespace mi::cli
