#pragma once

// Tensor probes: statistics of the tensors a model computed, and the store
// that keeps them per run (docs/reference/probe-store.md).
//
// The statistics kernel reads a tensor once (whatever its element type) and
// gives element counts (NaN, +Inf, -Inf, zero) and min / max / mean / std /
// L2 norm / largest magnitude over the finite values. The probe store is
// `<run_dir>/probes/probes.db` (SQLite, WAL) plus full tensors as NumPy
// .npy files under `<run_dir>/probes/arrays/<run id>/`; it keeps the last N
// runs. A run's rows become visible at once when the run ends (one
// transaction): a writer that dies mid-run leaves no half-written run.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"

namespace mi {

// Element types the kernel reads. bfloat16 arrives as 16-bit integers
// (NumPy has no bfloat16) with the type given by the caller.
enum class ProbeDType : uint8_t {
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
};

// NumPy's name ("float32", "bfloat16", "bool", ...).
std::string_view ProbeDTypeName(ProbeDType dtype);
std::optional<ProbeDType> ParseProbeDType(std::string_view name);
size_t ProbeDTypeSize(ProbeDType dtype);
bool ProbeDTypeIsFloat(ProbeDType dtype);

// The statistics of one tensor. Counts are over all elements (-1: not
// known, e.g. statistics imported from a dump that does not say); min, max,
// mean, std (population, as numpy.std), l2 (sqrt of the sum of squares) and
// abs_max (largest |x|) are over the finite elements, absent when there is
// none (or when the source does not say).
struct TensorStats {
  int64_t count = 0;
  int64_t nan = 0;
  int64_t pos_inf = 0;
  int64_t neg_inf = 0;
  int64_t zero = 0;
  std::optional<double> min;
  std::optional<double> max;
  std::optional<double> mean;
  std::optional<double> std;
  std::optional<double> l2;
  std::optional<double> abs_max;
  std::string dtype;           // NumPy name
  std::vector<int64_t> shape;  // empty for a scalar
};

// The statistics names, in the order tables and the HTTP API list them.
const std::vector<std::string>& TensorStatsNames();

// One contiguous tensor in memory (C or Fortran order: statistics do not
// depend on the order; a kept tensor is written as C order, so the caller
// passes C order when it keeps the tensor).
struct TensorView {
  const void* data = nullptr;
  ProbeDType dtype = ProbeDType::kFloat32;
  std::vector<int64_t> shape;
};

// Element count of a shape (1 for a scalar); InvalidArgument for a
// negative dimension or an overflow.
StatusOr<uint64_t> ShapeElementCount(const std::vector<int64_t>& shape);

// One pass over `count` elements (internally chunked: each chunk is read
// from memory once and a second time from cache for an exact variance).
TensorStats ComputeTensorStats(const void* data, uint64_t count,
                               ProbeDType dtype);
StatusOr<TensorStats> ComputeTensorStats(const TensorView& tensor);

// Tensors kept in full ("keep tensor") above this many elements are kept as
// an evenly strided sample: the elements at flat (C order) indices 0, k,
// 2k, ... with k = ceil(count / kProbeSampleLimit), as a 1-D array of at
// most kProbeSampleLimit elements. Statistics are always of the whole
// tensor.
inline constexpr uint64_t kProbeSampleLimit = uint64_t{1} << 20;

struct ProbeRunInfo {
  int64_t id = 0;
  std::string created;  // UTC, ISO 8601, when the run began
  std::string backend;  // "torch", "onnxruntime-node", "msprobe", ...
  std::string model;    // model file or name
  std::string level = "framework";  // "framework" | "compiled"
  std::string label;
  std::string inputs;      // what was fed (a path, or a description)
  std::string status;      // "running" | "complete" | "stopped"
  std::string stopped_at;  // probe where a trigger stopped the run
  int64_t elapsed_ns = 0;
  int64_t probe_rows = 0;  // rows the run holds (reads only)
};

// One probed tensor of one run.
struct ProbeRecord {
  int64_t run = 0;
  std::string probe;  // "<node>:<k>", "<node>:in<k>", "<node>:grad<k>"
  std::string node;
  std::string kind = "output";  // "output" | "input" | "grad"
  int64_t index = 0;
  std::optional<int64_t> step;  // time step of a recurrent op
  int64_t order = 0;            // position of the node in execution order
  TensorStats stats;
  // Statistics other than TensorStats' (e.g. from an imported dump), as a
  // JSON object; "{}" when none.
  std::string extra_json = "{}";
  // The kept tensor, relative to the probes folder ("arrays/3/7.npy"), or
  // empty; its element type as stored, and the sampling applied.
  std::string array_file;
  std::string array_dtype;
  bool sampled = false;
  int64_t sample_stride = 1;
};

struct ProbePluginMetrics {
  int64_t run = 0;
  std::string probe;  // empty for a plugin's whole-run result
  std::string plugin;
  std::string metrics_json;  // a JSON object
};

struct ProbeTriggerHit {
  int64_t run = 0;
  std::string trigger;  // "nan", "inf", "range:0:1", ...
  std::string probe;
  std::string node;
  std::string role;  // "producer" | "propagator"
  std::string detail;
  int64_t order = 0;
};

struct ProbeKeep {
  bool tensor = false;  // keep the tensor (sampled above kProbeSampleLimit)
  bool fp16 = false;    // store floating-point tensors as float16
};

class ProbeStore {
 public:
  static constexpr int kDefaultKeepRuns = 10;

  // "<run_dir>/probes/probes.db".
  static std::string DbPath(const std::string& run_dir);
  // Whether `run_dir` holds a probe store.
  static bool Exists(const std::string& run_dir);

  // Opens the store of `run_dir`, creating folders, file and tables when
  // `create`; otherwise NotFound when there is none. `keep_runs` (>= 1):
  // finished runs kept when a run ends (older ones are deleted with their
  // arrays).
  static StatusOr<std::unique_ptr<ProbeStore>> Open(
      const std::string& run_dir, bool create,
      int keep_runs = kDefaultKeepRuns);
  ~ProbeStore();
  ProbeStore(const ProbeStore&) = delete;
  ProbeStore& operator=(const ProbeStore&) = delete;

  const std::string& run_dir() const;
  const std::string& probes_dir() const;

  // Writing. Calls on one store are serialised (thread-safe); rows of a run
  // are held in memory and written in one transaction by EndRun.
  StatusOr<int64_t> BeginRun(const ProbeRunInfo& info);
  // Computes the statistics of `tensor`, keeps the tensor as asked, queues
  // the row and returns the statistics. `record.stats` is ignored.
  StatusOr<TensorStats> Add(ProbeRecord record, const TensorView& tensor,
                            const ProbeKeep& keep);
  // Queues a row whose statistics were computed elsewhere.
  Status AddStats(ProbeRecord record);
  Status AddPluginMetrics(ProbePluginMetrics metrics);
  Status AddTriggerHit(ProbeTriggerHit hit);
  // Writes the run's rows, marks it `status` ("complete" | "stopped"), and
  // deletes runs beyond the last `keep_runs`.
  Status EndRun(int64_t run, std::string_view status,
                std::string_view stopped_at, int64_t elapsed_ns);

  // Reading (finished runs only).
  // Oldest first.
  StatusOr<std::vector<ProbeRunInfo>> Runs() const;
  // The newest finished run, optionally of one level; nullopt when none.
  StatusOr<std::optional<ProbeRunInfo>> LatestRun(
      std::string_view level = "") const;
  // Rows of a run in execution order (order, then as added).
  StatusOr<std::vector<ProbeRecord>> Probes(int64_t run) const;
  // The rows of one probe: of one run (`run` > 0) or of the last `last`
  // finished runs (`run` == 0), oldest first; steps included.
  StatusOr<std::vector<ProbeRecord>> ProbeRows(std::string_view probe,
                                               int64_t run, size_t last) const;
  StatusOr<std::vector<ProbePluginMetrics>> PluginMetrics(int64_t run) const;
  StatusOr<std::vector<ProbeTriggerHit>> TriggerHits(int64_t run) const;

  class Impl;

 private:
  explicit ProbeStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// JSON encodings shared by the Python package, the server and the CLI
// (docs/reference/probe-store.md, schemas/probes.schema.json).
std::string TensorStatsJson(const TensorStats& stats);
std::string ProbeRunJson(const ProbeRunInfo& run);
std::string ProbeRecordJson(const ProbeRecord& record);
std::string ProbePluginMetricsJson(const ProbePluginMetrics& metrics);
std::string ProbeTriggerHitJson(const ProbeTriggerHit& hit);
// Statistics from a JSON object with TensorStats' field names (absent or
// null fields: unknown); other fields are returned in `extra_json`.
StatusOr<TensorStats> ParseTensorStatsJson(std::string_view json,
                                           std::string* extra_json);

// Writes a NumPy .npy (format 1.0, little-endian, C order) file.
Status WriteNpy(const std::string& path, const TensorView& tensor);

}  // namespace mi
