#pragma once

// Run history: an embedded SQLite store of past runs' digests
// (diff.h's RunDigest) with their summary figures and metadata, named
// baselines, and the trend of total time per model (docs/design/diff.md,
// "Run history"). Path: --history PATH, else $MODEL_INSPECTOR_HISTORY,
// else $XDG_DATA_HOME/model-inspector/history.db, else
// ~/.local/share/model-inspector/history.db.
//
// Every write is one transaction (WAL journal, synchronous=FULL): a writer
// killed mid-write loses only its own unfinished write, and concurrent
// writers (two CI jobs) wait for each other (busy timeout) instead of
// failing.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model_inspector/diff.h"
#include "model_inspector/status.h"

namespace mi {

std::string DefaultHistoryPath();

struct HistoryRun {
  int64_t id = 0;  // assigned by the store, increasing
  RunDigestMeta meta;
  // Per level "level:fingerprint", joined by ' '.
  std::string fingerprint;
  int64_t framework_nodes = -1;  // -1: level absent
  int64_t compiled_nodes = -1;
  int64_t run_count = 0;
  int64_t total_median_ns = -1;  // -1: no trace
  int64_t total_spread_ns = -1;
  std::string recorded_utc;  // when the store received it
};

struct HistoryBaseline {
  std::string name;
  int64_t run_id = 0;
  std::string set_utc;
};

// A model the store holds runs of.
struct HistoryModel {
  std::string model;
  int64_t runs = 0;
  int64_t last_run_id = 0;
};

struct HistoryTrendPoint {
  int64_t run_id = 0;
  std::string created_utc;
  std::string git_commit;
  std::string label;
  int64_t total_median_ns = -1;
  int64_t total_spread_ns = -1;
};

class HistoryStore {
 public:
  // Opens (creating file, folders and schema when `create`) the store.
  // An unreadable or foreign file: an error naming it.
  static StatusOr<std::unique_ptr<HistoryStore>> Open(const std::string& path,
                                                      bool create);
  virtual ~HistoryStore() = default;

  virtual const std::string& path() const = 0;
  // Records a run; returns its id.
  virtual StatusOr<int64_t> Add(const RunDigest& digest) = 0;
  // Newest first; `model` empty = all models; limit 0 = all.
  virtual StatusOr<std::vector<HistoryRun>> List(const std::string& model,
                                                 size_t limit) const = 0;
  // NotFound naming the ids held when there is no such run.
  virtual StatusOr<HistoryRun> Get(int64_t run_id) const = 0;
  virtual StatusOr<RunDigest> Digest(int64_t run_id) const = 0;
  virtual Status SetBaseline(const std::string& name, int64_t run_id) = 0;
  virtual StatusOr<std::vector<HistoryBaseline>> Baselines() const = 0;
  // NotFound naming the known baselines when there is no such name.
  virtual StatusOr<HistoryBaseline> Baseline(const std::string& name) const = 0;
  // Oldest first (by the digest's created_utc, else when recorded; then
  // by id). NotFound naming the models held when there is no run of it.
  virtual StatusOr<std::vector<HistoryTrendPoint>> Trend(
      const std::string& model) const = 0;
  // Every model with runs, by name.
  virtual StatusOr<std::vector<HistoryModel>> Models() const = 0;
};

}  // namespace mi
