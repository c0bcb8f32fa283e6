#pragma once

// The regression gate: what changed between two runs of a model (two
// versions of a graph level, two traces), and whether it matters.
// Data flow (docs/design/diff.md):
//
//   a run (files / run directory, as `summary` opens them) -> Session ->
//   DigestRun: a RunDigest, compact and self-contained (graph levels with
//   node names, op types, attributes, tensors, fused_from; per run /
//   iteration the time of the total, each op type, stream, node and
//   unlinked task name, and their overlap with other streams; no events)
//   -> RunDigestJson / ParseRunDigest (a digest file `*.midigest.json`, and
//   what the run history stores) -> DiffRuns(base, new): the DiffReport
//   (structure, fusion, timing with medians and spreads, concurrency) ->
//   ApplyDiffRules (`--fail-on`) -> front ends (`model-inspector diff`,
//   its reports: table, Markdown, JSON, JUnit XML, HTML; GET /api/diff).
//
// Times are nanoseconds. Per-run series hold one value per run / iteration
// of the trace, in run order; a key absent from a run has 0 there.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/status.h"

namespace mi {

class Session;

// ---------------------------------------------------------------------------
// Run digest (schema "model-inspector/run-digest/1";
// docs/reference/schemas/run-digest.schema.json)

struct DigestTensor {
  std::string name;
  std::string dtype;  // "float32", ""
  // Dimensions as text: "224", a symbolic name, "?" when unknown; empty
  // vector with has_shape = false when no shape is known.
  std::vector<std::string> shape;
  bool has_shape = false;
  std::string layout;  // "NCHW", "NC1HWC0", "" when the format does not say
};

struct DigestNode {
  // The session's node id (valid for the session the digest was made from;
  // the UI uses it to colour nodes); -1 in a digest read from a file.
  int64_t node_id = -1;
  // Unique within its level: a node in a subgraph body is
  // "<owner name>/<body name>/<node name>".
  std::string name;
  std::string op_type;
  std::string domain;
  std::string scope;
  // Attributes as (name, canonical text), sorted by name. The text is
  // what a change report prints ("[1, 1, 1, 1]", "3", "\"NOTSET\"");
  // large tensors are a digest "tensor float32[64,3,7,7] #<hash>".
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<DigestTensor> inputs;
  std::vector<DigestTensor> outputs;
  // Compiled level: the framework node names it was made from (sorted).
  std::vector<std::string> fused_from;
  std::string status;  // as graph.json: "executed", "fused", ...
  // Timing (empty when the run has no trace linked to this level): per run,
  // the summed duration of the node's linked tasks, and the part of it that
  // ran while work on another stream of the same device ran.
  std::vector<int64_t> run_ns;
  std::vector<int64_t> overlapped_ns;
  std::vector<std::string> streams;  // stream keys its tasks ran on
};

struct DigestLevel {
  std::string level;  // "framework" | "compiled"
  std::string source_file;
  std::string format;  // importer name
  std::string producer;
  // Hash of the canonical structure (op types, attributes, tensor
  // shapes/dtypes, edges by tensor, names excluded), hex: equal graphs
  // that only renamed nodes have equal fingerprints.
  std::string fingerprint;
  std::vector<DigestNode> nodes;  // in graph order
};

// One timed key (an op type, a stream, an unlinked task name, the total).
struct DigestSeries {
  std::string key;
  std::vector<int64_t> run_ns;         // time per run
  std::vector<int64_t> overlapped_ns;  // of it, overlapped with other streams
  std::vector<int64_t> count;          // tasks per run
};

// Two streams' overlap per run (keys ordered a < b).
struct DigestStreamPair {
  std::string stream_a;
  std::string stream_b;
  std::vector<int64_t> overlap_ns;
};

struct RunDigestMeta {
  std::string model;  // the model's name (history groups runs by it)
  std::string label;  // free text, e.g. "baseline" or a CI job id
  std::vector<std::string> inputs;  // file paths as given
  std::vector<std::string> formats;
  std::string tool_version;  // model-inspector's
  std::string producers;     // the files' producers/tool versions, joined
  std::string host;
  std::string created_utc;  // ISO 8601, when the digest was made
  std::string git_commit;   // when given
};

struct RunDigest {
  RunDigestMeta meta;
  std::vector<DigestLevel> levels;  // framework first
  // Timing: how the runs were found ("model_run", "ProfilerStep",
  // "whole trace" when the trace has no runs), their number, and per run
  // its wall time (first task start to last task end, calibrated clock).
  std::string runs_from;
  int64_t run_count = 0;
  DigestSeries total;  // key "total"
  std::vector<DigestSeries> op_types;
  std::vector<DigestSeries> streams;  // key: stable across runs of a model
  // Tasks linked to no node, by name (kernel / op name).
  std::vector<DigestSeries> unlinked_tasks;
  std::vector<DigestStreamPair> stream_pairs;
  bool has_trace() const { return run_count > 0; }
};

struct DigestOptions {
  RunDigestMeta meta;  // model / label / git_commit from the caller; the
                       // rest is filled in when empty
};

// The digest of an open run.
StatusOr<RunDigest> DigestRun(const Session& session,
                              const DigestOptions& options);
std::string RunDigestJson(const RunDigest& digest);
// `name` is used in error messages ("base.midigest.json:3:14: ...").
StatusOr<RunDigest> ParseRunDigest(std::string_view json,
                                   std::string_view name);
// True when the file's content is a run digest (by its schema field).
bool IsRunDigestFile(const std::string& path);

// One side of a diff: a digest file, or files / a run directory opened as
// `summary` opens them and digested.
struct DiffInputOptions {
  std::vector<std::string> paths;
  DigestOptions digest;
  uint64_t memory_limit = 0;
  // (file, bytes done, bytes total) while run files are read, as
  // OpenOptions::progress; not called for a digest file.
  std::function<void(const std::string&, uint64_t, uint64_t)> progress;
};
StatusOr<RunDigest> LoadDiffInput(const DiffInputOptions& options);

// ---------------------------------------------------------------------------
// The diff report (schema "model-inspector/diff/1";
// docs/reference/schemas/diff.schema.json)

struct DiffRunInfo {
  RunDigestMeta meta;
  std::string runs_from;
  int64_t run_count = 0;
  std::vector<std::pair<std::string, std::string>> fingerprints;  // level, fp
};

struct NodeChange {
  // "added" | "removed" | "changed" (matched, something differs) |
  // "renamed" (matched by structure, nothing else differs)
  std::string kind;
  std::string base_name;  // "" when added
  std::string new_name;   // "" when removed
  int64_t base_node_id = -1;
  int64_t new_node_id = -1;
  std::string base_op_type;
  std::string new_op_type;
  std::string matched_by;  // "name" | "structure" | ""
  // What differs, one line each: "op_type: Conv -> ConvTranspose",
  // "attribute pads: [0, 0, 0, 0] -> [1, 1, 1, 1]",
  // "output 0 shape: [1, 8, 56, 56] -> [1, 16, 56, 56]", "input 1 dtype:
  // float32 -> float16", "output 0 layout: NCHW -> NC1HWC0".
  std::vector<std::string> changes;
};

struct FusionChange {
  // "lost": a group of framework nodes fused into one compiled node in the
  // base is not fused (or fused differently) in the new run; "gained": the
  // reverse; "changed": same group leader, different members.
  std::string kind;
  std::vector<std::string> base_group;  // framework names, sorted
  std::vector<std::string> new_group;
  std::string base_compiled;  // compiled node name and op type
  std::string base_compiled_op_type;
  std::string new_compiled;
  std::string new_compiled_op_type;
  int64_t base_compiled_id = -1;
  int64_t new_compiled_id = -1;
};

struct OpTypeShift {
  std::string op_type;
  int64_t base_count = 0;
  int64_t new_count = 0;
};

struct LevelDiff {
  // "framework" | "compiled" (same level in both runs) or
  // "framework->compiled" (one run's two levels against each other).
  std::string level;
  std::string base_fingerprint;
  std::string new_fingerprint;
  int64_t base_nodes = 0;
  int64_t new_nodes = 0;
  int64_t matched_by_name = 0;
  int64_t matched_by_structure = 0;
  int64_t added = 0;
  int64_t removed = 0;
  int64_t changed = 0;
  int64_t renamed = 0;
  std::vector<NodeChange> changes;  // every node not equal, graph order
  // Every matched pair, equal or not: (index into the base digest level's
  // nodes, index into the new one's), in base graph order. For
  // "framework->compiled" the base side is the framework level. The timing
  // diff compares matched nodes through it.
  std::vector<std::pair<int64_t, int64_t>> matches;
  int64_t fusions_lost = 0;
  int64_t fusions_gained = 0;
  int64_t fusions_changed = 0;
  std::vector<FusionChange> fusions;
  std::vector<OpTypeShift> op_types;  // every op type whose count changed
};

// Median and spread of a per-run series.
struct TimingStat {
  int64_t samples = 0;  // runs
  int64_t median_ns = 0;
  // Spread: (p75 - p25) over the runs, interpolated; 0 with one run.
  int64_t spread_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
};

struct TimingDelta {
  std::string key;            // "total", an op type, a stream key, a node name
  std::string level;          // nodes: their level; others ""
  int64_t base_node_id = -1;  // nodes
  int64_t new_node_id = -1;
  TimingStat base;
  TimingStat next;
  int64_t delta_ns = 0;  // next.median - base.median
  double delta_pct = 0;  // delta / base.median * 100 (0 when base is 0)
  // The change below which a difference is noise (docs/design/diff.md):
  // derived from the two spreads and a floor.
  int64_t noise_ns = 0;
  // "slower" | "faster" (beyond the noise) | "same" | "added" | "removed"
  std::string verdict;
};

struct OverlapChange {
  // "op" (an op type or a node: `key`), or "streams" (`key` is
  // "A <-> B").
  std::string scope;
  std::string key;
  int64_t base_busy_ns = 0;  // median time of the op / pair
  int64_t new_busy_ns = 0;
  int64_t base_overlap_ns = 0;  // median overlapped time
  int64_t new_overlap_ns = 0;
  double base_fraction = 0;  // overlap / busy
  double new_fraction = 0;
  // "parallel_to_serial" (ran overlapped, now (nearly) serial),
  // "serial_to_parallel", "less_overlap", "more_overlap".
  std::string verdict;
  // The overlap lost (base - new overlapped time, never below 0): the time
  // it would cost the wall clock if nothing else moved.
  int64_t cost_ns = 0;
};

// A `--fail-on` rule, parsed: "total>+5%", "op:Conv>+10%", "nodes!=0",
// "fusions-lost>0", "overlap-lost>0", "stream:NAME>+2ms", "node:NAME>+20%",
// "added>0", "removed>0", "changed>0".
struct DiffRule {
  std::string text;        // as written
  std::string metric;      // "total", "op", "stream", "node", "nodes", ...
  std::string subject;     // "Conv" for op:Conv; "" otherwise; "*" any
  std::string comparison;  // ">", ">=", "<", "<=", "==", "!="
  double threshold = 0;
  // "percent" (relative change), "ns" (a time change), "count"
  std::string unit;
};

struct RuleOutcome {
  DiffRule rule;
  bool crossed = false;
  // What the rule measured, in the rule's unit, and the subject it was
  // measured on (the worst one for a "*" subject).
  double value = 0;
  std::string measured_on;
  // One line with the numbers: "total +12.3% (+1.20 ms: 9.75 -> 10.95 ms,
  // noise 0.08 ms) > +5%".
  std::string message;
  // A time rule is not crossed by a change within the noise; "noise" says
  // so here when that kept it from crossing.
  std::string note;
};

struct DiffOptions {
  // Time changes below this fraction of the base are never called slower
  // or faster, whatever the spreads (the noise floor).
  double noise_floor_fraction = 0.01;
  int64_t noise_floor_ns = 1000;
  // Spread multiplier: a change must exceed k * combined spread.
  double noise_spread_factor = 2.0;
  // An op / pair "ran in parallel" when at least this fraction of it
  // overlapped; "serial" when at most the low fraction.
  double parallel_fraction = 0.3;
  double serial_fraction = 0.05;
  // Also diff framework -> compiled within the new run (one run given).
  bool levels_within_run = false;
  // Nodes listed in timing.nodes (by |delta|; all are compared).
  size_t max_nodes = 200;
};

struct DiffReport : AnalysisResult {
  DiffRunInfo base;
  DiffRunInfo next;
  std::vector<LevelDiff> structure;
  // Timing (absent when either run has no trace: has_timing false).
  bool has_timing = false;
  TimingDelta total;
  std::vector<TimingDelta> op_types;  // by |delta|
  std::vector<TimingDelta> streams;
  std::vector<TimingDelta> nodes;                 // matched nodes, by |delta|
  std::vector<TimingDelta> unlinked_tasks;        // by name, both runs
  std::vector<std::string> unmatched_base_tasks;  // names only in base
  std::vector<std::string> unmatched_new_tasks;
  std::vector<OverlapChange> overlap;  // changes past the options' fractions
  int64_t overlap_lost = 0;            // count of parallel_to_serial
  std::vector<RuleOutcome> rules;      // after ApplyDiffRules
  bool failed = false;                 // any rule crossed

  std::string_view analysis_id() const override { return "diff"; }
  void Write(ResultWriter& w) const override;
};

StatusOr<DiffReport> DiffRuns(const RunDigest& base, const RunDigest& next,
                              const DiffOptions& options);
// One run's framework level against its compiled level ("framework->
// compiled"): what the compiler fused, dropped, inserted.
StatusOr<DiffReport> DiffLevelsWithinRun(const RunDigest& run,
                                         const DiffOptions& options);

// The rules applied when `--fail-on` is not given.
std::string_view DefaultFailOn();
// Parses "total>+5%,op:Conv>+10%,nodes!=0": InvalidArgument naming the
// rule, its column and what was expected.
StatusOr<std::vector<DiffRule>> ParseFailOn(std::string_view spec);
// Evaluates the rules on the report: fills rules and failed.
void ApplyDiffRules(const std::vector<DiffRule>& rules, DiffReport& report);

}  // namespace mi
