#pragma once

// Compare: the tensors of two runs side by side, probe by probe
// (docs/design/compare.md, docs/guides/compare.md).
//
//   two probe sets (a run's probes: name, node, execution order, dtype,
//   shape, statistics, the tensor's .npy file when kept) -> matching (by
//   probe name; or a framework run against a compiled run through the
//   compiled graph's fused_from) -> per pair the metrics of the two tensors
//   (CompareTensors: one pass) or of their statistics -> the pass/fail rule
//   (CompareThresholds, msprobe's defaults) -> the report: every pair in
//   execution order, every fused group matched or why not, the first
//   divergent node.
//
// Side A is the reference ("bench" in msprobe's words: the framework
// model, the first run), side B the one under test ("NPU": the compiled
// model, the second run). Relative errors are taken against A.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/status.h"

namespace mi {

// ---------------------------------------------------------------------------
// The metrics kernel

// Element types a probed tensor may have (NumPy's names: "float32",
// "float16", "bfloat16" (raw 16-bit words), "float64", "int8".."uint64",
// "bool").
enum class TensorDtype : uint8_t {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kBool,
};
StatusOr<TensorDtype> ParseTensorDtype(std::string_view name);
std::string_view TensorDtypeName(TensorDtype dtype);
size_t TensorDtypeSize(TensorDtype dtype);

// A tensor's elements in C order (not owned).
struct TensorSpan {
  TensorDtype dtype = TensorDtype::kFloat32;
  const void* data = nullptr;
  uint64_t count = 0;
};
// Elements [begin, begin + n) of `t` widened to double (float16 and
// bfloat16 exactly, NaN and Inf kept).
void WidenElements(const TensorSpan& t, uint64_t begin, size_t n, double* out);

// What two tensors of the same element count differ by. Errors are over
// the positions where both values are finite; NaN and ±Inf are compared by
// position (a NaN where the other side has none, an Inf of another sign or
// none, is a mismatch).
struct TensorMetrics {
  uint64_t count = 0;     // elements of each side
  uint64_t compared = 0;  // positions where both are finite
  // Cosine similarity of the finite positions (msprobe: 1 when both sides
  // are all zero; absent when only one side is, or nothing is compared).
  std::optional<double> cosine;
  double max_abs_err = 0;
  double mean_abs_err = 0;
  double rmse = 0;  // sqrt(mean((b - a)^2))
  // |b - a| / |a|, with a zero reference taken as machine epsilon (so 0
  // when b is 0 too), as msprobe's get_relative_err does.
  double max_rel_err = 0;
  double mean_rel_err = 0;
  // msprobe's error ratios: the share of compared elements whose relative
  // error is below 0.001 ("One Thousandth Err Ratio"), 0.005 ("Five
  // Thousandths") and 0.0001 (ten-thousandth); 1 = all within.
  double one_thousandth_ratio = 1;
  double five_thousandths_ratio = 1;
  double ten_thousandth_ratio = 1;
  // msit's relative Euclidean distance: ||b - a|| / ||a|| (0 when a is 0).
  double relative_euclidean = 0;
  // Position mismatches of non-finite values.
  uint64_t nan_mismatch = 0;
  uint64_t inf_mismatch = 0;
  uint64_t nan_a = 0, nan_b = 0, inf_a = 0, inf_b = 0;
  // Finite values beyond float16's range (|x| > 65504) on each side.
  uint64_t fp16_overflow_a = 0;
  uint64_t fp16_overflow_b = 0;
};

// InvalidArgument when the element counts differ.
StatusOr<TensorMetrics> CompareTensors(const TensorSpan& a,
                                       const TensorSpan& b);

// Statistics of one tensor as a probe keeps them (a store's stats, an
// msprobe dump.json entry's Max / Min / Mean / Norm).
struct TensorStatsView {
  std::optional<double> min, max, mean, l2;
  uint64_t nan = 0, pos_inf = 0, neg_inf = 0;
  bool has_counts = false;  // nan / inf counts known
};

// msprobe's statistics compare ("summary" mode): the difference of each
// statistic (b - a) and its relative error |b - a| / |a|.
struct StatsMetrics {
  std::optional<double> max_diff, min_diff, mean_diff, l2_diff;
  std::optional<double> max_rel_err, min_rel_err, mean_rel_err, l2_rel_err;
  bool nonfinite_mismatch = false;  // NaN / Inf counts differ
};
StatsMetrics CompareStats(const TensorStatsView& a, const TensorStatsView& b);

// ---------------------------------------------------------------------------
// The pass/fail rule

// Defaults are msprobe's published accuracy standard (CompareConst:
// COS_THRESHOLD 0.99, MAX_ABS_ERR_THRESHOLD 0.001, COS_MAX_THRESHOLD 0.9,
// MAX_ABS_ERR_MAX_THRESHOLD 1; get_accuracy_result): a pair fails when
//   cosine < cosine_min AND max_abs_err > max_abs_err_max, or
//   cosine < cosine_floor, or max_abs_err > max_abs_err_ceiling,
// and when NaN / Inf positions differ (msprobe: "N/A" -> No). Statistics
// alone: a relative error of max, min, mean or L2 norm above
// stats_rel_err_max fails (msprobe's diff_analyze_threshold.yaml, 0.5).
// Optional gates, off (negative) by default, each failing a pair above
// (below, for the ratio) its limit: the one-thousandth error ratio, max
// and mean relative error, relative Euclidean distance, RMSE. fp16
// overflow on B fails only with fp16_overflow_fails (else a warning).
// Msit() is msit's analyser: cosine > 0.99, relative Euclidean distance
// < 0.05, RMSE < 1.0, mean relative error < 1.0.
struct CompareThresholds {
  double cosine_min = 0.99;
  double max_abs_err_max = 0.001;
  double cosine_floor = 0.9;
  double max_abs_err_ceiling = 1.0;
  double stats_rel_err_max = 0.5;
  double one_thousandth_min = -1;
  double max_rel_err_max = -1;
  double mean_rel_err_max = -1;
  double relative_euclidean_max = -1;
  double rmse_max = -1;
  bool fp16_overflow_fails = false;

  static CompareThresholds Msprobe() { return CompareThresholds(); }
  static CompareThresholds Msit() {
    CompareThresholds t;
    t.cosine_min = 0.99;
    t.max_abs_err_max = -1;  // cosine alone decides
    t.cosine_floor = 0.99;
    t.max_abs_err_ceiling = 1e300;
    t.mean_rel_err_max = 1.0;
    t.relative_euclidean_max = 0.05;
    t.rmse_max = 1.0;
    return t;
  }
};

// "pass" | "fail", with the reasons of a fail (and warnings of a pass:
// fp16 overflow) in words with the figures.
struct CompareJudgement {
  bool pass = true;
  std::vector<std::string> reasons;
};
CompareJudgement JudgeTensors(const TensorMetrics& m,
                              const CompareThresholds& t);
CompareJudgement JudgeStats(const StatsMetrics& m, const CompareThresholds& t);

// ---------------------------------------------------------------------------
// Probe sets and matching

// One probed tensor of a run.
struct ProbeTensor {
  std::string probe;  // "<node>:<k>", "<node>:in<k>", "<node>:grad<k>"
  std::string node;
  std::string kind = "output";  // "output" | "input" | "grad"
  int32_t index = 0;
  std::optional<int64_t> step;  // recurrent ops' time step
  int64_t order = 0;            // the node's place in execution order
  std::string dtype;            // NumPy name
  std::vector<int64_t> shape;
  TensorStatsView stats;
  bool has_stats = false;
  std::string array_path;  // the kept tensor (.npy), "" when stats only
  std::string array_note;  // e.g. the sampling rule of a sampled tensor
};

// A node of a graph level as the matching needs it (framework nodes in
// execution order; compiled nodes with the framework nodes they replaced).
struct LevelNode {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;      // tensor names
  std::vector<std::string> outputs;     // tensor names
  std::vector<std::string> fused_from;  // framework node names
};

struct ProbeSet {
  std::string label;  // the run directory, model or dump it came from
  std::string level;  // "framework" | "compiled" | "" (not known)
  // The model file of the run ("" when not known), and an optimized graph
  // of it kept in the run directory (ort/model.optimized.onnx, written by
  // the runner's --level compiled and by capture), "" when none.
  std::string model;
  std::string compiled_model;
  std::vector<ProbeTensor> probes;
  // The level's graph, in execution order; empty when not known.
  std::vector<LevelNode> nodes;
};

struct CompareOptions {
  // "auto": "fused_from" when B's nodes carry fused_from and A's level is
  // the framework one, else "name". "name": probes of the same name.
  // "fused_from": a compiled node's output against the framework tensor
  // it computes (docs/design/compare.md "Matching").
  std::string match = "auto";
  CompareThresholds thresholds;
};

// One compared pair (or a probe of one side without a partner).
struct CompareEntry {
  std::string probe_a, probe_b;
  std::string node_a, node_b;
  std::string kind;
  std::optional<int64_t> step;
  int64_t order = -1;  // execution order on the side that sets the order
  std::string dtype_a, dtype_b;
  std::vector<int64_t> shape_a, shape_b;
  // "name" | "fused_from" (a fused node against the last framework node of
  // its group) | "tensor_name" (the same tensor name on both levels) |
  // "layout" (a layout-converted tensor, e.g. ReorderOutput's NCHW output,
  // against the framework tensor of its shape).
  std::string matched_by;
  // "" | "nchwc<N>" (B's blocked [N, C/b, H, W, b] un-blocked to NCHW) |
  // "reshape" (same elements, other shape: compared flat).
  std::string layout;
  std::string mode;     // "tensor" | "statistics" | "" (not compared)
  std::string verdict;  // "pass" | "fail" | "not_compared"
  std::vector<std::string> reasons;
  std::optional<TensorMetrics> metrics;
  std::optional<StatsMetrics> stats;
};

// A compiled node that replaced framework nodes, and whether its result
// was compared.
struct CompareGroup {
  std::string compiled_node;
  std::string op_type;
  std::vector<std::string> fused_from;
  std::string compared_with;  // the framework node its output was set against
  std::string status;         // "matched" | "unmatched"
  std::string reason;         // why unmatched, or how matched
  int64_t entry = -1;         // index into CompareReport::entries
};

struct CompareReport : AnalysisResult {
  std::string a, b;  // labels
  std::string level_a, level_b;
  std::string match;  // the matching applied
  CompareThresholds thresholds;
  std::vector<CompareEntry> entries;   // in execution order
  std::vector<CompareGroup> groups;    // fused_from matching only
  std::vector<std::string> only_in_a;  // probes with no partner
  std::vector<std::string> only_in_b;
  int64_t compared = 0, passed = 0, failed = 0, not_compared = 0;
  int64_t groups_matched = 0, groups_unmatched = 0;
  // The first failing pair in execution order (-1: none) and its node.
  int64_t first_divergent = -1;
  std::string first_divergent_node;
  bool pass = true;  // no pair failed

  std::string_view analysis_id() const override { return "compare"; }
  // {"schema": "model-inspector/compare/1", ...}
  // (docs/reference/schemas/compare.schema.json)
  void Write(ResultWriter& w) const override;
};

// Matches, loads the kept tensors, measures and judges. NotFound / Malformed
// for a tensor file that cannot be read (naming it); InvalidArgument for an
// unknown match mode, or "fused_from" without B's compiled nodes.
StatusOr<CompareReport> CompareProbeSets(const ProbeSet& a, const ProbeSet& b,
                                         const CompareOptions& options);

// ---------------------------------------------------------------------------
// Runs on disk

// One run of a run directory's probe store (probes/probes.db) as a probe
// set: run `run`, or the newest when 0. Kept tensors are the store's .npy
// files. NotFound for no store or no such run.
StatusOr<ProbeSet> ReadProbeSet(const std::string& run_dir, int64_t run = 0);

// Whether `compiled` replaced framework nodes other than itself (the mark
// of a compiled form of the framework graph, not another copy of it).
bool IsCompiledForm(const std::vector<LevelNode>& compiled);

struct CompareRunsOptions {
  std::string a, b;              // run directories with probe stores
  int64_t run_a = 0, run_b = 0;  // 0: the newest
  CompareOptions compare;
};

// Reads both runs; when B probed a compiled form of A's model, attaches
// both levels' graphs so that "auto" matches through fused_from; then
// CompareProbeSets. B's graph is the optimized graph kept in its run
// directory or its run's model, whichever holds most of B's probed nodes,
// and a compiled form of A's when a Session over the two finds compiled
// nodes that replaced framework nodes other than themselves.
StatusOr<CompareReport> CompareRuns(const CompareRunsOptions& options);

// ---------------------------------------------------------------------------
// Tensors on disk

// A NumPy .npy file (format 1.0 / 2.0 / 3.0, C order, little-endian or
// byte-order-free types) read whole.
struct NpyArray {
  TensorDtype dtype = TensorDtype::kFloat32;
  std::vector<int64_t> shape;
  std::string data;  // the raw elements
  uint64_t count() const;
  TensorSpan view() const;
};
StatusOr<NpyArray> ReadNpy(const std::string& path);
// The same from the file's bytes; `path` names them in errors.
StatusOr<NpyArray> ParseNpy(std::string_view bytes, const std::string& path);

// ---------------------------------------------------------------------------
// Levels from a session

class Session;

// The framework and compiled levels of a Session opened with both models
// (OpenOptions::framework_model / compiled_model), each in execution order
// (the file's node order), compiled nodes with fused_from as the linker
// found it. A level the session lacks is empty.
struct LevelGraphs {
  std::vector<LevelNode> framework;
  std::vector<LevelNode> compiled;
};
StatusOr<LevelGraphs> ReadLevelGraphs(const Session& session);

}  // namespace mi
