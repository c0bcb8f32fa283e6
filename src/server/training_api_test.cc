// GET /api/runs/{run}/training/...: the routes of training_api.cc through
// the router, on a small snapshot written here row by row with SQLite from
// the snapshot schema (python/model_inspector/train/snapshot_schema.sql),
// so every expected number below is one this file put in; the C++ reader
// (importers/training_snapshot, session/training_queries.cc) and the router
// are the code under test.

#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model_inspector/session.h"
#include "server/api.h"

namespace mi::server {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A NumPy .npy (format 1.0) of little-endian float32 values.
std::string Npy(const std::vector<float>& values, const std::string& shape) {
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(dict.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>(len >> 8));
  out += dict;
  std::string data(values.size() * 4, '\0');
  std::memcpy(data.data(), values.data(), data.size());
  return out + data;
}

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "") << "\n"
      << sql;
}

// The attention weights stored for layer 2 at step 2: [2 heads][2 q][3 k].
const std::vector<float> kAttention = {0.5f,  0.25f, 0.25f, 0.f,  1.f,  0.f,
                                       0.75f, 0.f,   0.25f, 0.1f, 0.2f, 0.7f};

// Layers: 0 the root "Net", 1 "embed" (Linear), 2 "attn"
// (MultiheadAttention), 3 "head" (Linear). Steps 0..4, step 2 the anomaly
// (a loss spike), steps 1..3 captured.
std::string WriteSnapshot(const fs::path& dir) {
  std::string path = (dir / "snapshot.db").string();
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, ReadFile(std::string(MI_SOURCE_DIR) +
                    "/python/model_inspector/train/snapshot_schema.sql"));
  Exec(db, R"(
    INSERT INTO meta VALUES ('format', 'model-inspector/training-snapshot'),
      ('version', '1'), ('created', '2026-12-02T12:00:00Z'), ('model', 'Net'),
      ('optimizer', 'SGD'), ('capture_window', '1'), ('anomaly_step', '2'),
      ('window_first', '1'), ('window_last', '3'), ('status', 'complete'),
      ('triggers', '["loss_spike:3:10"]');
    INSERT INTO layers VALUES (0, '', 'Net', NULL, 0, 0, '{}'),
      (1, 'embed', 'Linear', 0, 1, 12, '{"in_features": 3, "out_features": 4}'),
      (2, 'attn', 'MultiheadAttention', 0, 2, 80, '{"num_heads": 2}'),
      (3, 'head', 'Linear', 0, 3, 10, '{}');
    INSERT INTO edges VALUES (1, 2), (2, 3);
    INSERT INTO steps (step, loss, grad_norm, lr, captured) VALUES
      (0, 1.0, 0.5, 0.1, 0), (1, 0.9, 0.4, 0.1, 1), (2, 8.5, 120.0, 0.1, 1),
      (3, 2.0, 3.0, 0.1, 1), (4, 1.5, 1.0, 0.1, 0);
    INSERT INTO triggers (step, trigger, layer, value, threshold, detail)
      VALUES (2, 'loss_spike', NULL, 8.5, 2.85, 'loss 8.5 > 3 x mean 0.95');
    INSERT INTO histograms VALUES
      (2, 1, 'activation', -1.0, 1.0, '[1, 2, 3]', 0, 0),
      (2, 3, 'activation', 0.0, 4.0, '[5, 0, 1, 1]', 2, 1),
      (2, 3, 'grad', -0.5, 0.5, '[2, 2]', 0, 0);
    INSERT INTO samples VALUES (2, 0, 'normal', 0.1), (2, 5, 'anomalous', 9.0);
    INSERT INTO sample_stats VALUES (2, 0, 1, 1.5, 0.5, 0), (2, 0, 3, 2.0, 1.0, 0),
      (2, 5, 1, 40.0, 12.0, 0), (2, 5, 3, 900.0, 300.0, 3);
    INSERT INTO projections VALUES (2, 3, 'pca', 0, 0.25, -1.0, 0),
      (2, 3, 'pca', 5, 3.5, 2.0, 1);
  )");
  for (int step = 0; step < 5; ++step) {
    for (int layer = 0; layer < 4; ++layer) {
      // grad_norm = step + layer / 10, act_rms = 10 * layer + step: easy to
      // read back; the root has no parameters (NULL grad norm).
      std::string grad =
          layer == 0 ? "NULL" : std::to_string(step + layer / 10.0);
      Exec(db,
           "INSERT INTO layer_steps (step, layer, grad_norm, act_rms, "
           "update_ratio, dead_fraction) VALUES (" +
               std::to_string(step) + ", " + std::to_string(layer) + ", " +
               grad + ", " + std::to_string(10 * layer + step) +
               ", 0.001, 0.0)");
    }
  }
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(
                db,
                "INSERT INTO tensors (step, layer, kind, name, dtype, shape, "
                "data) VALUES (2, 2, 'attention', 'sample0', 'float32', "
                "'[2, 2, 3]', ?)",
                -1, &st, nullptr),
            SQLITE_OK);
  std::string blob = Npy(kAttention, "(2, 2, 3)");
  sqlite3_bind_blob(st, 1, blob.data(), static_cast<int>(blob.size()),
                    SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return path;
}

HttpRequest Get(std::string path,
                std::vector<std::pair<std::string, std::string>> params = {}) {
  HttpRequest r;
  r.path = std::move(path);
  r.params = std::move(params);
  return r;
}

nlohmann::json ParseJson(const HttpResponse& r) {
  auto j = nlohmann::json::parse(r.content(), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.content();
  return j;
}

void ExpectJsonError(const HttpResponse& r, int status) {
  EXPECT_EQ(r.status, status) << r.content();
  nlohmann::json j = ParseJson(r);
  ASSERT_TRUE(j.contains("error")) << r.content();
  EXPECT_EQ(j["error"]["status"], status);
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
}

class TrainingApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("mi_training_api_test_" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    std::string snapshot = WriteSnapshot(*dir_);
    std::vector<ServedRun> runs;
    OpenOptions options;
    options.paths = {snapshot};
    auto session = Session::Open(options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    runs.push_back({"snapshot", {snapshot}, std::move(session).value()});
    // A run that is not a training snapshot.
    OpenOptions demo;
    demo.paths = {std::string(MI_SOURCE_DIR) +
                  "/test/fixtures/resnet18/model.onnx"};
    auto other = Session::Open(demo);
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    runs.push_back({"onnx", demo.paths, std::move(other).value()});
    api_ = new Api(std::move(runs), ApiOptions{});
  }
  static void TearDownTestSuite() {
    delete api_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  static nlohmann::json Ok(HttpRequest r) {
    HttpResponse resp = api_->Handle(r);
    EXPECT_EQ(resp.status, 200) << r.path << ": " << resp.content();
    EXPECT_EQ(resp.content_type, "application/json; charset=utf-8");
    return ParseJson(resp);
  }
  static Api* api_;
  static fs::path* dir_;
};
Api* TrainingApiTest::api_ = nullptr;
fs::path* TrainingApiTest::dir_ = nullptr;

TEST_F(TrainingApiTest, RunsSayWhichRunIsASnapshot) {
  nlohmann::json j = Ok(Get("/api/runs"));
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["training"], true);
  EXPECT_EQ(j["runs"][1]["training"], false);
}

TEST_F(TrainingApiTest, Overview) {
  nlohmann::json j = Ok(Get("/api/runs/0/training/overview"));
  EXPECT_EQ(j["anomaly_step"], 2);
  EXPECT_EQ(j["captured_steps"], nlohmann::json::parse("[1, 2, 3]"));
  ASSERT_EQ(j["layers"].size(), 4u);
  EXPECT_EQ(j["layers"][2]["name"], "attn");
  EXPECT_EQ(j["layers"][2]["type"], "MultiheadAttention");
  // Each layer's graph node is a framework node of the run named like it.
  for (int layer : {1, 2, 3}) {
    ASSERT_TRUE(j["layers"][layer]["node"].is_number()) << j["layers"][layer];
    int64_t node = j["layers"][layer]["node"];
    nlohmann::json n =
        Ok(Get("/api/runs/0/levels/framework/nodes/" + std::to_string(node)));
    EXPECT_EQ(n["name"], j["layers"][layer]["name"]);
  }
  ASSERT_EQ(j["attention"].size(), 1u);
  EXPECT_EQ(j["attention"][0]["layer"], 2);
  EXPECT_EQ(j["attention"][0]["heads"], 2);
  EXPECT_EQ(j["histograms"].size(), 3u);
  ASSERT_EQ(j["projections"].size(), 1u);
  EXPECT_EQ(j["projections"][0]["method"], "pca");
  EXPECT_EQ(j["samples"], nlohmann::json::parse("[2]"));
}

TEST_F(TrainingApiTest, LayerSeries) {
  nlohmann::json j = Ok(Get("/api/runs/0/training/layers/3/series"));
  EXPECT_EQ(j["name"], "head");
  EXPECT_EQ(j["steps"], nlohmann::json::parse("[0, 1, 2, 3, 4]"));
  for (int step = 0; step < 5; ++step) {
    EXPECT_DOUBLE_EQ(j["grad_norm"][step].get<double>(), step + 0.3);
    EXPECT_DOUBLE_EQ(j["act_rms"][step].get<double>(), 30 + step);
  }
  // Not measured: null.
  nlohmann::json root = Ok(Get("/api/runs/0/training/layers/0/series"));
  EXPECT_TRUE(root["grad_norm"][0].is_null());
  EXPECT_TRUE(root["weight_norm"][0].is_null());
}

TEST_F(TrainingApiTest, Histograms) {
  nlohmann::json all =
      Ok(Get("/api/runs/0/training/histograms", {{"step", "2"}}));
  EXPECT_EQ(all["step"], 2);
  EXPECT_EQ(all["histograms"].size(), 3u);
  nlohmann::json one = Ok(
      Get("/api/runs/0/training/histograms", {{"step", "2"}, {"layer", "3"}}));
  ASSERT_EQ(one["histograms"].size(), 2u);
  for (const auto& h : one["histograms"]) {
    EXPECT_EQ(h["layer"], 3);
    if (h["kind"] == "activation") {
      EXPECT_EQ(h["counts"], nlohmann::json::parse("[5, 0, 1, 1]"));
      EXPECT_DOUBLE_EQ(h["hi"].get<double>(), 4.0);
      EXPECT_EQ(h["nan"], 2);
      EXPECT_EQ(h["inf"], 1);
    }
  }
}

TEST_F(TrainingApiTest, Attention) {
  nlohmann::json j = Ok(
      Get("/api/runs/0/training/attention", {{"step", "2"}, {"layer", "2"}}));
  EXPECT_EQ(j["heads"], 2);
  EXPECT_EQ(j["queries"], 2);
  EXPECT_EQ(j["keys"], 3);
  size_t k = 0;
  for (int h = 0; h < 2; ++h) {
    for (int q = 0; q < 2; ++q) {
      for (int key = 0; key < 3; ++key) {
        EXPECT_NEAR(j["weights"][h][q][key].get<double>(), kAttention[k++],
                    1e-6);
      }
    }
  }
}

TEST_F(TrainingApiTest, ProjectionAndSamples) {
  nlohmann::json p = Ok(
      Get("/api/runs/0/training/projection", {{"step", "2"}, {"layer", "3"}}));
  EXPECT_EQ(p["method"], "pca");
  ASSERT_EQ(p["points"].size(), 2u);
  EXPECT_EQ(p["points"][1]["sample"], 5);
  EXPECT_DOUBLE_EQ(p["points"][1]["x"].get<double>(), 3.5);
  EXPECT_EQ(p["points"][1]["anomalous"], true);
  EXPECT_EQ(p["points"][0]["anomalous"], false);

  nlohmann::json s = Ok(Get("/api/runs/0/training/samples", {{"step", "2"}}));
  ASSERT_EQ(s["samples"].size(), 2u);
  for (const auto& sample : s["samples"]) {
    if (sample["role"] == "anomalous") {
      EXPECT_EQ(sample["sample"], 5);
      ASSERT_EQ(sample["layers"].size(), 2u);
      EXPECT_DOUBLE_EQ(sample["layers"][1]["abs_max"].get<double>(), 900.0);
      EXPECT_EQ(sample["layers"][1]["nonfinite"], 3);
    } else {
      EXPECT_EQ(sample["role"], "normal");
      EXPECT_DOUBLE_EQ(sample["layers"][0]["rms"].get<double>(), 0.5);
    }
  }
}

TEST_F(TrainingApiTest, BadRequestsAreClearErrors) {
  // Parameters the route checks itself.
  ExpectJsonError(api_->Handle(Get("/api/runs/0/training/histograms")), 400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/training/histograms", {{"step", "two"}})),
      400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/training/histograms", {{"step", "-1"}})),
      400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/training/attention", {{"step", "2"}})),
      400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/training/projection",
                       {{"step", "2"}, {"layer", "3"}, {"method", "umap"}})),
      400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/training/layers/x/series")),
                  400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/training/nothing")), 404);
  // What the snapshot lacks: a step not captured, a layer out of range, an
  // attention of a layer that has none.
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/training/histograms", {{"step", "4"}})),
      404);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/training/layers/9/series")),
                  404);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/training/attention",
                                   {{"step", "2"}, {"layer", "3"}})),
                  404);
  // A run that is not a snapshot.
  HttpResponse r = api_->Handle(Get("/api/runs/1/training/overview"));
  ExpectJsonError(r, 404);
  EXPECT_NE(ParseJson(r)["error"]["message"].get<std::string>().find(
                "not a training snapshot"),
            std::string::npos);
}

}  // namespace
}  // namespace mi::server
