#pragma once

// Training snapshots written by tests with libsqlite3 and the schema file
// the monitor uses (python/model_inspector/train/snapshot_schema.sql): real
// SQLite files whose contents the tests know because they wrote them.

#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mi::training_test {

inline std::string SchemaSql() {
  std::ifstream in(std::filesystem::path(MI_SOURCE_DIR) /
                   "python/model_inspector/train/snapshot_schema.sql");
  EXPECT_TRUE(in.good()) << "the snapshot schema file is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A .npy (format 1.0) of little-endian float32 values, written by hand
// from NumPy's format description (numpy/lib/format.py), not by the reader
// under test.
inline std::string NpyFloat32(const std::vector<int64_t>& shape,
                              const std::vector<float>& values) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += std::to_string(shape[i]) +
            (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    if (i + 1 < shape.size()) dims += " ";
  }
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()),
             values.size() * sizeof(float));
  return out;
}

class SnapshotFile {
 public:
  // A new snapshot at a fresh temporary path holding the schema's tables.
  explicit SnapshotFile(const std::string& stem = "snapshot") {
    static int counter = 0;
    path_ = (std::filesystem::temp_directory_path() /
             ("mi_training_" + stem + "_" + std::to_string(getpid()) + "_" +
              std::to_string(counter++) + ".db"))
                .string();
    std::filesystem::remove(path_);
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    // No fsync per statement: the file is whole once Close() returns.
    Exec("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY;");
    Exec(SchemaSql());
  }
  ~SnapshotFile() {
    Close();
    std::filesystem::remove(path_);
  }
  SnapshotFile(const SnapshotFile&) = delete;
  SnapshotFile& operator=(const SnapshotFile&) = delete;

  const std::string& path() const { return path_; }

  void Exec(const std::string& sql) {
    ASSERT_NE(db_, nullptr);
    char* error = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "") << "\n" << sql;
    sqlite3_free(error);
  }

  // Inserts one tensors row whose data is `blob`.
  void AddTensor(int64_t step, int64_t layer, const std::string& kind,
                 const std::string& name, const std::string& shape,
                 const std::string& blob, int sampled = 0) {
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(
                  db_,
                  "INSERT INTO tensors (step, layer, kind, name, dtype, shape, "
                  "sampled, data) VALUES (?, ?, ?, ?, 'float32', ?, ?, ?)",
                  -1, &stmt, nullptr),
              SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, step);
    sqlite3_bind_int64(stmt, 2, layer);
    sqlite3_bind_text(stmt, 3, kind.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 4, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 5, shape.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(stmt, 6, sampled);
    sqlite3_bind_blob(stmt, 7, blob.data(), static_cast<int>(blob.size()),
                      SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
    sqlite3_finalize(stmt);
  }

  // Closes the connection so that the file is whole on disk.
  void Close() {
    if (db_ != nullptr) sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// The snapshot the tests share: 7 layers (a root, a container, two called
// leaves, a head, a Linear never called and a LayerNorm never called
// without parameters), 3 steps written out of order, per-layer rows,
// two trigger hits, and tensor-level rows of the captured steps 1 and 2.
inline void WriteTinySnapshot(SnapshotFile& f) {
  f.Exec(R"sql(
INSERT INTO meta VALUES
  ('format', 'model-inspector/training-snapshot'), ('version', '1'),
  ('created', '2026-12-02T12:00:00Z'), ('torch', '1.13.1'),
  ('model', 'TinyNet'), ('optimizer', 'SGD'),
  ('optimizer_config', '[{"lr": 0.1, "momentum": 0.9, "weight_decay": 0.0, "layers": ["encoder.0", "head"]}]'),
  ('triggers', '["loss_spike:3:10", "nan"]'),
  ('thresholds', '{"vanishing": 1e-6, "exploding": 40, "dead": 0.25, "grad_norm": 100, "loss_spike_factor": 3, "loss_spike_window": 5, "act_range": 10000}'),
  ('capture_window', '1'), ('anomaly_step', '2'),
  ('window_first', '1'), ('window_last', '2'), ('status', 'ended'),
  ('sample_limit', '65536');
INSERT INTO layers VALUES
  (0, '', 'TinyNet', NULL, 0, 0, '{}'),
  (1, 'encoder', 'Sequential', 0, 1, 0, '{}'),
  (2, 'encoder.0', 'Linear', 1, 2, 12, '{"in_features": 3, "out_features": 3, "init_std": 0.5}'),
  (3, 'encoder.1', 'ReLU', 1, 3, 0, '{}'),
  (4, 'head', 'MultiheadAttention', 0, 4, 4, '{"num_heads": 2}'),
  (5, 'unused', 'Linear', 0, NULL, 6, '{}'),
  (6, 'norm', 'LayerNorm', 0, NULL, 0, '{}');
INSERT INTO edges VALUES (2, 3), (3, 4), (1, 4), (4, 2);
INSERT INTO steps (step, loss, loss_nonfinite, grad_norm, grad_nonfinite, lr,
                   loss_scale, clipped, elapsed_ns, captured) VALUES
  (2, NULL, 1, NULL, 7, 0.1, NULL, NULL, 3000, 1),
  (0, 0.5, 0, 1.25, 0, 0.1, NULL, 0, 1000, 0),
  (1, 0.4, 0, 2.5, 0, 0.1, 1024.0, 1, 2000, 1);
INSERT INTO layer_steps (step, layer, weight_norm, grad_norm, grad_nan,
                         act_abs_max, act_dtype, dead_fraction) VALUES
  (0, 2, 3.0, 1.5, 0, 4.0, 'float32', 0.0),
  (2, 2, 3.5, NULL, 3, NULL, 'float16', 0.5),
  (1, 4, 2.0, 0.75, 0, 9.5, 'float32', NULL);
INSERT INTO triggers VALUES
  (1, 2, 'nan', 2, NULL, NULL, 'gradients of encoder.0 hold NaN'),
  (2, 2, 'loss_spike', NULL, 9.0, 3.0, '');
INSERT INTO histograms VALUES
  (1, 2, 'activation', -1.0, 1.0, '[1, 2, 3]', 0, 0),
  (2, 2, 'grad', 0.0, 0.5, '[4, 0]', 5, 1),
  (2, 4, 'activation', -2.0, 2.0, '[6]', 0, 0);
INSERT INTO samples VALUES (2, 7, 'anomalous', 12.5), (2, 3, 'normal', 0.5);
INSERT INTO sample_stats VALUES
  (2, 7, 2, 100.0, 10.0, 2), (2, 7, 4, 50.0, 5.0, 0),
  (2, 3, 2, 1.0, 0.5, 0);
INSERT INTO projections VALUES
  (2, 2, 'pca', 7, 5.0, -1.0, 1), (2, 2, 'pca', 3, 0.1, 0.2, 0);
)sql");
  f.AddTensor(2, 4, "attention", "sample0", "[2, 1, 3]",
              NpyFloat32({2, 1, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f}));
  f.AddTensor(2, 2, "activation", "0", "[4, 3]", NpyFloat32({4}, {1, 2, 3, 4}),
              1);
}

}  // namespace mi::training_test
