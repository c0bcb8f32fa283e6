#pragma once

// The public C++ API of model-inspector. Every front end (CLI, server,
// Python) goes through Session: detect -> import -> link -> analyse.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"
#include "model_inspector/summary.h"

namespace mi {

std::string_view Version();

struct OpenOptions {
  // Files or run directories. In a directory, files are detected by
  // content; a manifest.json (written by `start`) names their roles.
  std::vector<std::string> paths;
  // Explicit roles, overriding detection.
  std::string framework_model;
  std::string compiled_model;
  // Error-severity diagnostics (dangling inputs, cycles) normally fail
  // Open(); with keep_going they are reported and loading continues.
  bool keep_going = false;
  // (file, bytes done, bytes total) during long reads.
  std::function<void(const std::string&, uint64_t, uint64_t)> progress;
};

struct InputFile {
  std::string path;
  std::string format;  // importer name: "onnx", "chrome_trace", ...
  std::string role;    // "framework" | "compiled" | "trace"
};

struct DiagnosticInfo {
  std::string code;      // "unescaped_string"
  std::string severity;  // "info" | "data_loss" | "error"
  uint64_t count = 0;
  std::string description;
  std::vector<std::string> examples;  // "file:line:col: message"
};

struct LayoutViewOptions {
  std::string level = "framework";  // "framework" | "compiled"
  bool left_to_right = false;
  // "scopes" (module paths), "fusion" (scopes, plus on the framework level
  // the nodes fused into one compiled node as a group) or "none" (flat; huge
  // graphs still fold into repeated blocks and chunks).
  std::string grouping = "scopes";
  // Default view: groups are collapsed until at most this many items are
  // visible; 0 = everything expanded.
  size_t max_visible_items = 2000;
};

class LayoutView {
 public:
  virtual ~LayoutView() = default;
  virtual size_t group_count() const = 0;
  // Group 0 is the whole graph. A group's path is its labels from the root
  // joined by '/', e.g. "layer1/0".
  virtual StatusOr<uint32_t> FindGroup(std::string_view path) const = 0;
  virtual Status SetExpanded(uint32_t group, bool expanded) = 0;
  // Layout of one group: later Binary/Json/Svg hold only what lies inside
  // its frame, with the frame's corner at the origin (the group and the
  // groups above it are expanded). 0 = the whole level again.
  virtual Status SetFocus(uint32_t group) = 0;
  // Expands every group on the path to a node (its model NodeId; a node in
  // a subgraph body is revealed through the node owning the body), so that
  // the node itself is drawn. Read the resulting state back from the
  // layout's group flags. NotFound if the node is not on this level.
  virtual Status Reveal(uint32_t model_node) = 0;
  // Incremental: only groups whose contents changed are laid out again.
  virtual std::string Binary() = 0;
  virtual std::string Json() = 0;
  virtual std::string Svg() = 0;
};

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Open(const OpenOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<InputFile>& inputs() const;
  SummaryReport Summary(const SummaryOptions& options) const;
  std::string SummaryJson(const SummaryOptions& options) const;
  // Writes graph.json, trace.json and summary.json into `out_dir`
  // (created if needed), each atomically.
  Status ExportDumps(const std::string& out_dir) const;
  std::vector<DiagnosticInfo> Diagnostics() const;

  // An SVG drawing of one graph level laid out by the layered layout engine
  // (for documents, reviews and tests).
  struct RenderOptions {
    std::string level = "framework";  // "framework" | "compiled"
    bool left_to_right = false;
  };
  StatusOr<std::string> RenderSvg(const RenderOptions& options) const;

  // A live, hierarchical layout of one graph level (what the UI server
  // holds per open graph): fold and unfold groups, then fetch the layout
  // as compact binary (docs/reference/layout-binary.md), JSON or SVG.
  // It reads this session's model: it must not outlive the Session.
  StatusOr<std::unique_ptr<LayoutView>> OpenLayoutView(
      const LayoutViewOptions& options) const;

  // Node queries for the UI server (src/session/node_queries.cc). Levels
  // present among the inputs: "framework" and/or "compiled".
  std::vector<std::string> Levels() const;
  // One node of a level as JSON (docs/reference/http-api.md, "nodes"): op
  // type, attributes, inputs/outputs with dtypes and shapes, scope, status,
  // fused_from / fused_into and linked tasks. NotFound for an absent level
  // or a node that is not on it.
  StatusOr<std::string> NodeDetailsJson(std::string_view level,
                                        uint32_t node) const;
  // Nodes of a level whose name (or op type, attribute) matches `query` as
  // JSON {"matches": [...], "total": N}, at most `limit` matches. `mode`:
  // "text" (case-insensitive substring), "glob" ('*' within one '/'
  // segment, '**' across, '?'), "regex" (ECMAScript search), "op" (op type,
  // case-insensitive) or "attr" ("name" or "name=value").
  // InvalidArgument for an unknown mode or a regex that does not compile.
  StatusOr<std::string> SearchJson(std::string_view level,
                                   std::string_view query,
                                   std::string_view mode, size_t limit) const;

  // One level as Google AI Edge Model Explorer input
  // (docs/reference/http-api.md): the graph JSON (a GraphCollection
  // with one graph; node namespaces are our scope paths) and the node-data
  // JSON (per node id, the total time of its linked tasks in microseconds).
  // Node ids are the same in both. NotFound for an absent level.
  StatusOr<std::string> ModelExplorerGraphJson(std::string_view level) const;
  StatusOr<std::string> ModelExplorerNodeDataJson(std::string_view level) const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `start`: prepares a run directory and returns what to set so that the
// runtimes write into it.
struct StartOptions {
  std::string output_dir;
  bool enable_graph = false;    // save compiled graphs
  bool enable_runtime = false;  // record execution traces
  // "onnxruntime" (ONNX Runtime and PyTorch; the default) or "cann" (GE
  // graph dumps and msprof / torch_npu profiles). For "cann" the returned
  // text is shell `export` lines and `#` comments, for `eval`.
  std::string backend = "onnxruntime";
};
StatusOr<std::string> StartRunDirectory(const StartOptions& options);

// The list of diagnostic codes as Markdown (docs/reference/errors.md).
std::string DiagnosticsReferenceMarkdown();

}  // namespace mi
