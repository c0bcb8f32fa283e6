#pragma once

// The public C++ API of model-inspector. Every front end (CLI, server,
// Python) goes through Session: detect -> import -> link -> analyse.
// Analyses return typed results (analysis_result.h, results/*.h); the
// front ends encode them (src/encoders/: JSON, tables).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/cluster.h"
#include "model_inspector/diagnosis.h"
#include "model_inspector/diff.h"
#include "model_inspector/results/calibration.h"
#include "model_inspector/results/critical_path.h"
#include "model_inspector/results/diagnosis.h"
#include "model_inspector/results/idle_overlap.h"
#include "model_inspector/results/memory.h"
#include "model_inspector/results/node_details.h"
#include "model_inspector/results/node_paths.h"
#include "model_inspector/results/validation.h"
#include "model_inspector/status.h"
#include "model_inspector/summary.h"

namespace mi {

std::string_view Version();

// The format a file would be read as ("onnx", "om", "atc_json", ...),
// detected by content as Session::Open detects it; empty when the file
// cannot be read or no format recognises it.
std::string DetectInputFormat(const std::string& path);

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
  // Faults of a graph itself (a node input or graph output nothing
  // provides, a cycle) do not fail Open(): a viewer (`open`, `render`) shows
  // the graph with the fault marked, while `summary` / `export` keep the
  // strict default. Other errors still need keep_going.
  bool allow_graph_faults = false;
  // Clock calibration (src/analysis/timing/calibration.h): after
  // linking, each device's clock offset is estimated from ordering anchors
  // and set on its tracks (calibrated time = raw + offset). Off: offsets
  // stay 0 and no calibration report is made.
  bool calibrate_clocks = true;
  // (file, bytes done, bytes total) during long reads.
  std::function<void(const std::string&, uint64_t, uint64_t)> progress;
  // The memory the load may use, in bytes (docs/reference/cli.md
  // "--memory-limit"). 0: the process's budget, shared by every open session
  // (its limit is --memory-limit / MI_MEMORY_LIMIT, by default 75% of the
  // machine's memory). A load that would pass it fails with a memory-limit
  // error naming the file, the place and the limit. The session holds the
  // charge of its model and trace until it is destroyed.
  uint64_t memory_limit = 0;
};

struct InputFile {
  std::string path;
  std::string format;  // importer name: "onnx", "chrome_trace", ...
  // "framework" | "compiled" | "trace" | "unplaced" (a model placed
  // neither as the framework nor as the compiled graph: loaded, not linked;
  // a model_unplaced diagnostic says why)
  std::string role;
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
  // Default view for a first screen instead: the top-level groups folded
  // (HierarchicalLayout::CollapseToOverview), within the same budget.
  bool overview = false;
  // Folded group boxes sized for the lines the web UI draws in them (the op
  // mix as "Conv ×4, Add ×2", and "12 nodes · 985 µs" when the level has
  // node times) rather than for the SVG renderer's shorter ones.
  bool ui_summaries = false;
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

struct TimelineRequest {
  TraceClock clock = TraceClock::kRaw;
};

// The most pixel columns a window request may ask for.
inline constexpr uint32_t kMaxTimelinePixels = 20000;

struct TimelineWindowRequest {
  int64_t start_ns = 0;  // window [start_ns, end_ns), in `clock`
  int64_t end_ns = 0;
  uint32_t pixels = 1000;  // width of the view in pixel columns
  TraceClock clock = TraceClock::kRaw;
  // Filters (empty = all): track ids, labels (op type, else task name;
  // exact), a case-insensitive substring of the task name, task kinds by
  // name ("compute", "data_movement", ...).
  std::vector<uint32_t> tracks;
  std::vector<std::string> labels;
  std::string name_contains;
  std::vector<std::string> kinds;
  bool json = false;  // JSON instead of the MITW binary
};

// The counter tracks (memory over time) in a window: each series' points
// in [start_ns, end_ns) with the last one before it and the first after,
// downsampled above 4 points per pixel column. Times are the raw clock's.
struct TimelineCountersRequest {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t pixels = 1000;
};

// Points of a counter series the timeline's metadata sends whole; above,
// it is downsampled (first, lowest, highest and last point per bucket).
inline constexpr size_t kMaxCounterPoints = 8192;

struct MappingRequest {
  size_t offset = 0;
  size_t limit = 200;
  // "total_ns" | "task_count" | "name" | "op_type" | "status" | "streams"
  std::string sort = "total_ns";
  bool descending = true;
  std::string query;  // case-insensitive substring of name, op type, kernels
  // Statuses kept (empty = all): "executed", "fused", "not_executed",
  // "inserted", "unknown", "unlinked".
  std::vector<std::string> statuses;
  // Locate the row holding a node (its own row, or the compiled node's row
  // it was fused into) or a task (its node's row, or the unlinked-name row);
  // the answer gains "found_index" in the filtered, sorted order (-1: no
  // such row or filtered out). -1 = not asked; at most one of the two.
  int64_t find_node = -1;
  int64_t find_task = -1;
};

// Timing analyses (src/analysis/timing): which run and clock they read.
struct TimingRequest {
  int run = -1;  // a run / iteration index of the trace, -1 = whole trace
  TraceClock clock = TraceClock::kCalibrated;
  // Idle gaps of at least this long are listed (idle/overlap).
  int64_t gap_threshold_ns = 100'000;
  size_t max_gaps = 100;
};

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Open(const OpenOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<InputFile>& inputs() const;
  // The summary tables (summary.json is its Write()).
  SummaryReport Summary(const SummaryOptions& options) const;
  // Writes graph.json, trace.json, summary.json and analyses.json into
  // `out_dir` (created if needed), each atomically.
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
  // One node of a level (docs/reference/http-api.md, "nodes"): op type,
  // attributes, inputs/outputs with dtypes and shapes, scope, status,
  // fused_from / fused_into and linked tasks. NotFound for an absent level
  // or a node that is not on it.
  StatusOr<NodeDetailsResult> NodeDetails(std::string_view level,
                                          uint32_t node) const;
  // Nodes of a level whose name (or op type, attribute) matches `query` as
  // JSON {"matches": [...], "total": N, "mode", "read_as"}, at most
  // `limit` matches. `mode`: "text" (case-insensitive substring), "glob"
  // (on trailing segments of the node's or its scope's path: '*' within
  // one '/' segment, '**' across, '?'; a leading '/' anchors at the root),
  // "auto" (glob when the query has '*' or '?', else text), "regex"
  // (ECMAScript search), "op" (op type, case-insensitive) or "attr"
  // ("name" or "name=value"). "mode" in the answer is the mode used and
  // "read_as" says how the query was read, in words.
  // InvalidArgument for an unknown mode or a regex that does not compile.
  StatusOr<std::string> SearchJson(std::string_view level,
                                   std::string_view query,
                                   std::string_view mode, size_t limit) const;

  // Tensor probes (src/session/probe_queries.cc; docs/reference/http-api.md
  // "Probes", docs/reference/probe-store.md): the probe store of a run
  // directory opened with the run (<dir>/probes/probes.db, written by the
  // Python package's Inspector). Probes go to the nodes of a level whose
  // name is the probe's node name. The store is read at each call.
  //
  // The run directory holding the store, or "" when none was opened.
  const std::string& ProbeRunDirectory() const;
  // For colouring a level: {"store", "level", "runs": [...], "run": the
  // latest finished probe run of that level (else of any level) or null,
  // "stats_names", "nodes": {"<node id>": {"probe", "kind", "index",
  // "stats", "plugin": {name: metrics}}}, "unmatched": probes of no node
  // of the level, "trigger_hits": [... with "node_id"]}. Without a store:
  // the same shape, empty. NotFound for an absent level.
  StatusOr<std::string> ProbesJson(std::string_view level) const;
  // One node's probes in the latest run: {"node", "name", "level", "run",
  // "probes": [{"probe", "kind", "index", "stats", "series": [{"run",
  // "stats"}] over the last `last_runs` runs, "steps": [{"step", "stats"}],
  // "plugin": {name: metrics}, "array"}]}. NotFound for an absent level or
  // node.
  StatusOr<std::string> NodeProbesJson(std::string_view level, uint32_t node,
                                       size_t last_runs = 10) const;

  // Training snapshots (src/session/training_queries.cc;
  // docs/reference/training-snapshot.md, docs/reference/http-api.md
  // "Training"). A snapshot written by model_inspector.train opens as a run
  // whose framework graph is its layers (one node per layer, named by the
  // module path); its diagnosis is the registered analysis
  // "training_diagnosis" (results/training.h). The tensor-level views read
  // the snapshot file at each call. Each is FailedPrecondition when the run
  // is not a training snapshot, NotFound for a step that was not captured
  // or a layer id out of range.
  //
  // The snapshot file, or "" when this run is not one.
  const std::string& TrainingSnapshotPath() const;
  // What the views can show: {"path", "anomaly_step", "captured_steps",
  // "layers": [{"id", "name", "type", "node", "parent", "forward_order",
  // "param_count", "attributes"}], "histograms": [{"step", "layer",
  // "kind"}], "attention": [{"step", "layer", "heads"}], "projections":
  // [{"step", "layer", "method"}], "samples": [steps with samples]}.
  StatusOr<std::string> TrainingOverviewJson() const;
  // One layer's per-step metrics (sparklines): {"layer", "name", "steps":
  // [...], "<metric>": [... one per step, null when not measured] for every
  // layer_steps column}.
  StatusOr<std::string> TrainingLayerSeriesJson(int32_t layer) const;
  // Histograms of a captured step: {"step", "histograms": [{"layer",
  // "kind", "lo", "hi", "counts", "nan", "inf"}]}; layer -1: every layer.
  StatusOr<std::string> TrainingHistogramsJson(int64_t step,
                                               int32_t layer) const;
  // Attention weights of a multi-head attention layer at a captured step:
  // {"step", "layer", "heads", "queries", "keys", "weights": [head][q][k]}.
  StatusOr<std::string> TrainingAttentionJson(int64_t step,
                                              int32_t layer) const;
  // A 2-D projection of per-sample activations: {"step", "layer",
  // "method", "points": [{"sample", "x", "y", "anomalous"}]}.
  StatusOr<std::string> TrainingProjectionJson(int64_t step, int32_t layer,
                                               std::string_view method) const;
  // The anomalous and the normal sample of a captured step side by side:
  // {"step", "samples": [{"sample", "role", "score", "layers": [{"layer",
  // "abs_max", "rms", "nonfinite"}]}]}.
  StatusOr<std::string> TrainingSamplesJson(int64_t step) const;

  // One level as Google AI Edge Model Explorer input
  // (docs/reference/http-api.md): the graph JSON (a GraphCollection
  // with one graph; node namespaces are our scope paths) and the node-data
  // JSON (per node id, the total time of its linked tasks in microseconds).
  // Node ids are the same in both. NotFound for an absent level.
  StatusOr<std::string> ModelExplorerGraphJson(std::string_view level) const;
  StatusOr<std::string> ModelExplorerNodeDataJson(std::string_view level) const;

  // What a level's main graph says about itself (src/session/
  // model_properties.cc; docs/reference/http-api.md "properties"): file,
  // format, producer, opsets, inputs / outputs with types, initializers
  // with shapes and sizes, the format's metadata (an ONNX file's IR
  // version, model version, doc string and metadata_props, read from the
  // file's header fields). NotFound for an absent level.
  StatusOr<std::string> ModelPropertiesJson(std::string_view level) const;
  // The first `limit` values of one initializer of a level's main graph and
  // min / max / mean over at most kValueStatsLimit elements, read from the
  // binary ONNX file (or its external data) when asked. NotFound for no
  // such initializer; InvalidArgument when the level is not a binary ONNX
  // file or the element type is not numeric.
  static constexpr uint64_t kValueStatsLimit = uint64_t{1} << 20;
  StatusOr<std::string> TensorValuesJson(std::string_view level,
                                         std::string_view name,
                                         size_t limit) const;

  // Timeline queries for the UI server (src/session/timeline_queries.cc;
  // docs/reference/http-api.md "timeline"). The index behind them (tracks
  // in display order, nesting rows, per-row start order) is built on the
  // first call and shared by all threads.
  //
  // Tracks, rows, extents, runs and op types as JSON.
  StatusOr<std::string> TimelineJson(const TimelineRequest& request) const;
  // One window at a level of detail: tasks at least one pixel wide alone,
  // narrower ones merged per pixel column. Binary (MITW,
  // docs/reference/timeline-binary.md) or JSON. InvalidArgument for an
  // empty window, a pixel count out of 1..kMaxTimelinePixels, or a filter
  // naming an unknown track.
  StatusOr<std::string> TimelineWindow(
      const TimelineWindowRequest& request) const;
  // The counter tracks in a window at a level of detail (JSON: "counters"
  // as in TimelineJson's, with "points" and "downsampled"). InvalidArgument
  // for an empty window or a pixel count out of 1..kMaxTimelinePixels.
  StatusOr<std::string> TimelineCounters(
      const TimelineCountersRequest& request) const;
  // One task with its node, launch and flows; NotFound for no such task.
  StatusOr<std::string> TaskDetailsJson(uint32_t task,
                                        const TimelineRequest& request) const;
  // The tasks of a node (a framework node fused into a compiled node: the
  // compiled node's tasks) and their extent; NotFound for no such node.
  StatusOr<std::string> NodeTasksJson(uint32_t node,
                                      const TimelineRequest& request) const;
  // The mapping table (src/session/mapping_queries.cc): one row per
  // compiled node (framework nodes without a compiled graph) plus one per
  // distinct unlinked task name, filtered, sorted and paged.
  // InvalidArgument for an unknown sort key or status.
  StatusOr<std::string> MappingJson(const MappingRequest& request) const;

  // The analysis registry (src/analysis/registry,
  // docs/reference/analyses.md): every registered analysis, with whether it
  // applies to this run (what it needs is loaded).
  std::vector<AnalysisInfo> Analyses() const;
  // Runs one registered analysis with parameters given as text by name.
  // NotFound for an unknown id; InvalidArgument (naming the parameter) for
  // an unknown parameter or a bad value, or when it does not apply.
  StatusOr<std::unique_ptr<AnalysisResult>> RunAnalysis(
      std::string_view id, const AnalysisParams& params) const;
  // Everything analysed for the whole run: every in_export analysis that
  // applies, with default parameters (analyses.json, GET /analyses).
  AnalysesDocument ExportedAnalyses() const;

  // The analyses the front ends also use by type (each is a registered
  // analysis too, except node paths and node details).
  //
  // Memory of one level (src/analysis/memory): tensor lifetimes in
  // execution order, the peak and the tensors alive at it, per-node and
  // per-scope footprints, and the trace's allocator figures against the
  // estimate (docs/reference/schemas/memory.schema.json). NotFound for an
  // absent level.
  StatusOr<MemoryResult> Memory(std::string_view level) const;
  // Validation findings (src/analysis/validation) of every graph level
  // (docs/reference/schemas/check.schema.json).
  ValidationResult Validation() const;

  // Timing analyses (src/analysis/timing; JSON shapes in
  // docs/reference/http-api.md "Analyses" and
  // docs/reference/schemas/analyses.schema.json).
  // The clock calibration applied at Open (computed = false when
  // OpenOptions::calibrate_clocks was off).
  CalibrationResult Calibration() const;
  // The critical path of a run. InvalidArgument for a run the trace
  // does not have.
  StatusOr<CriticalPathResult> CriticalPath(const TimingRequest& request) const;
  // Per-stream busy/idle with the idle breakdown, long gaps, copy/compute
  // overlap per device and host synchronize waits.
  StatusOr<IdleOverlapResult> IdleOverlap(const TimingRequest& request) const;
  // A node's ancestors and descendants in its graph and their tasks.
  // NotFound for an absent level or a node not on it.
  StatusOr<NodePathsResult> NodePaths(std::string_view level,
                                      uint32_t node) const;
  // The id of the node named `name` on a level (exact name), or of node
  // N given as "#N"; NotFound otherwise, InvalidArgument when several
  // nodes of the level share the name (the message lists them as "#N").
  StatusOr<uint32_t> FindNodeId(std::string_view level,
                                std::string_view name) const;

  // Diagnosis, frequent sequences and per-block time
  // (docs/reference/diagnosis-rules.md,
  // docs/reference/schemas/findings.schema.json).
  // Findings of every enabled rule (diagnosis and timing rules), sorted by
  // severity, then time at stake. InvalidArgument for an unknown rule id or
  // a threshold out of range.
  StatusOr<FindingsResult> Findings(const DiagnoseOptions& options) const;
  // The most time-consuming recurring task sequences per stream.
  // InvalidArgument for `by` other than op_type / name, lengths outside
  // 2 <= min <= max <= 32, or top outside 1..10000.
  StatusOr<SequencesResult> Sequences(const SequenceOptions& options) const;
  // Families of repeated blocks with per-instance time (framework level
  // when loaded, else compiled), by total time; empty without a graph.
  BlocksResult Blocks() const;

  // The run as a cluster (model_inspector/cluster.h): one rank summary
  // per trace source, plus msprof-analyze's cluster tables when read.
  ClusterSummary ClusterRanks() const;
  // Whether the trace holds two or more sources that name their rank
  // (`export` then also writes cluster.json).
  bool HasSeveralRanks() const;

  // The run's digest for the regression gate (model_inspector/diff.h):
  // its graph levels and per-run timing, compact and self-contained.
  RunDigest Digest(const DigestOptions& options) const;

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

// The registered analyses (applies = false: no run is given) and
// docs/reference/analyses.md, generated from them.
std::vector<AnalysisInfo> RegisteredAnalyses();
std::string AnalysesReferenceMarkdown();

// The list of diagnostic codes as Markdown (docs/reference/errors.md).
std::string DiagnosticsReferenceMarkdown();

// Whether a node-search glob matches a '/'-separated node or scope name, as
// SearchJson's "glob" mode reads it (trailing whole segments,
// case-insensitive; '*' within a segment, '**' across, '?'; a leading '/'
// anchors at the root). The Python Inspector reads probe patterns with it.
bool ScopeGlobMatches(std::string_view pattern, std::string_view path);

}  // namespace mi
