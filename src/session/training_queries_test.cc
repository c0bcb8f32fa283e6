// A training snapshot opened as a run (Session::Open) and its views
// (training_queries.cc): the snapshot is written here with libsqlite3 and
// the monitor's schema (importers/training_snapshot/snapshot_test_util.h),
// so every expected value is one the test wrote; the attention tensor is a
// .npy written by hand.

#include <cmath>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "importers/training_snapshot/snapshot_test_util.h"
#include "model_inspector/session.h"

namespace mi {
namespace {

using Json = nlohmann::json;
using training_test::SnapshotFile;
using training_test::WriteTinySnapshot;

std::unique_ptr<Session> OpenRun(const std::string& path) {
  OpenOptions options;
  options.paths = {path};
  auto session = Session::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().message();
  return session.ok() ? std::move(*session) : nullptr;
}

Json Parse(const StatusOr<std::string>& text) {
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? Json::parse(*text) : Json();
}

class TrainingQueries : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteTinySnapshot(file_);
    file_.Close();
    session_ = OpenRun(file_.path());
    ASSERT_NE(session_, nullptr);
  }
  SnapshotFile file_;
  std::unique_ptr<Session> session_;
};

TEST_F(TrainingQueries, OpensAsARunWithAGraphAndNoTrace) {
  EXPECT_EQ(session_->TrainingSnapshotPath(), file_.path());
  ASSERT_EQ(session_->inputs().size(), 1u);
  EXPECT_EQ(session_->inputs()[0].format, "training_snapshot");
  EXPECT_EQ(session_->inputs()[0].role, "framework");
  SummaryOptions options;
  SummaryReport summary = session_->Summary(options);
  (void)summary;
}

TEST_F(TrainingQueries, Overview) {
  Json o = Parse(session_->TrainingOverviewJson());
  EXPECT_EQ(o["path"], file_.path());
  EXPECT_EQ(o["anomaly_step"], 2);
  EXPECT_EQ(o["captured_steps"], Json::array({1, 2}));
  ASSERT_EQ(o["layers"].size(), 7u);
  const Json& enc0 = o["layers"][2];
  EXPECT_EQ(enc0["id"], 2);
  EXPECT_EQ(enc0["name"], "encoder.0");
  EXPECT_EQ(enc0["type"], "Linear");
  EXPECT_EQ(enc0["parent"], 1);
  EXPECT_EQ(enc0["forward_order"], 2);
  EXPECT_EQ(enc0["param_count"], 12);
  EXPECT_EQ(enc0["attributes"]["out_features"], "3");
  EXPECT_TRUE(enc0["node"].is_number_integer());
  EXPECT_TRUE(o["layers"][0]["node"].is_null());  // the root: a scope
  EXPECT_TRUE(o["layers"][0]["parent"].is_null());
  EXPECT_TRUE(o["layers"][5]["forward_order"].is_null());
  EXPECT_EQ(o["histograms"],
            Json::parse(R"([{"step": 1, "layer": 2, "kind": "activation"},
                            {"step": 2, "layer": 2, "kind": "grad"},
                            {"step": 2, "layer": 4, "kind": "activation"}])"));
  EXPECT_EQ(o["attention"],
            Json::parse(R"([{"step": 2, "layer": 4, "heads": 2}])"));
  EXPECT_EQ(o["projections"],
            Json::parse(R"([{"step": 2, "layer": 2, "method": "pca"}])"));
  EXPECT_EQ(o["samples"], Json::array({2}));
}

TEST_F(TrainingQueries, LayerSeries) {
  Json s = Parse(session_->TrainingLayerSeriesJson(2));
  EXPECT_EQ(s["layer"], 2);
  EXPECT_EQ(s["name"], "encoder.0");
  EXPECT_EQ(s["steps"], Json::array({0, 1, 2}));
  EXPECT_EQ(s["grad_norm"], Json::parse("[1.5, null, null]"));
  EXPECT_EQ(s["weight_norm"], Json::parse("[3.0, null, 3.5]"));
  EXPECT_EQ(s["grad_nan"], Json::parse("[0, 0, 3]"));
  EXPECT_EQ(s["dead_fraction"], Json::parse("[0.0, null, 0.5]"));
  EXPECT_EQ(s["act_dtype"], Json::parse(R"(["float32", null, "float16"])"));
  // Every layer_steps column is there, one value per step.
  for (const char* column :
       {"update_norm", "update_ratio", "grad_zero_fraction", "grad_inf",
        "act_abs_max", "act_rms", "act_mean", "act_std", "act_zero_fraction",
        "act_nan", "act_inf", "in_abs_max", "in_rms", "in_nan", "in_inf",
        "gout_norm", "gout_abs_max", "gout_nan", "gout_inf"}) {
    ASSERT_TRUE(s.contains(column)) << column;
    EXPECT_EQ(s[column].size(), 3u) << column;
  }
  EXPECT_FALSE(session_->TrainingLayerSeriesJson(7).ok());
  EXPECT_EQ(session_->TrainingLayerSeriesJson(-1).status().code(),
            StatusCode::kNotFound);
}

TEST_F(TrainingQueries, Histograms) {
  Json all = Parse(session_->TrainingHistogramsJson(2, -1));
  EXPECT_EQ(all["step"], 2);
  EXPECT_EQ(all["histograms"], Json::parse(R"([
  {"layer": 2, "kind": "grad", "lo": 0.0, "hi": 0.5, "counts": [4, 0],
   "nan": 5, "inf": 1},
  {"layer": 4, "kind": "activation", "lo": -2.0, "hi": 2.0, "counts": [6],
   "nan": 0, "inf": 0}])"));
  Json one = Parse(session_->TrainingHistogramsJson(2, 4));
  ASSERT_EQ(one["histograms"].size(), 1u);
  EXPECT_EQ(one["histograms"][0]["layer"], 4);
  // Step 0 was not captured.
  auto not_captured = session_->TrainingHistogramsJson(0, -1);
  EXPECT_EQ(not_captured.status().code(), StatusCode::kNotFound);
  EXPECT_NE(not_captured.status().message().find("captured: 1, 2"),
            std::string::npos)
      << not_captured.status().message();
}

TEST_F(TrainingQueries, Attention) {
  Json a = Parse(session_->TrainingAttentionJson(2, 4));
  EXPECT_EQ(a["step"], 2);
  EXPECT_EQ(a["layer"], 4);
  EXPECT_EQ(a["heads"], 2);
  EXPECT_EQ(a["queries"], 1);
  EXPECT_EQ(a["keys"], 3);
  ASSERT_EQ(a["weights"].size(), 2u);
  // float32 values as written, widened to double.
  EXPECT_DOUBLE_EQ(a["weights"][0][0][2].get<double>(),
                   static_cast<double>(0.7f));
  EXPECT_DOUBLE_EQ(a["weights"][1][0][0].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(a["weights"][1][0][1].get<double>(), 0.25);
  // No attention at layer 2; a sampled tensor is refused, not reshaped.
  EXPECT_EQ(session_->TrainingAttentionJson(2, 2).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(session_->TrainingAttentionJson(0, 4).status().code(),
            StatusCode::kNotFound);
}

TEST_F(TrainingQueries, ProjectionAndSamples) {
  Json p = Parse(session_->TrainingProjectionJson(2, 2, "pca"));
  EXPECT_EQ(p["method"], "pca");
  EXPECT_EQ(p["points"], Json::parse(R"([
    {"sample": 3, "x": 0.1, "y": 0.2, "anomalous": false},
    {"sample": 7, "x": 5.0, "y": -1.0, "anomalous": true}])"));
  EXPECT_EQ(session_->TrainingProjectionJson(2, 2, "tsne").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(session_->TrainingProjectionJson(2, 2, "umap").status().code(),
            StatusCode::kInvalidArgument);

  Json s = Parse(session_->TrainingSamplesJson(2));
  EXPECT_EQ(s["step"], 2);
  EXPECT_EQ(s["samples"], Json::parse(R"([
    {"sample": 7, "role": "anomalous", "score": 12.5, "layers": [
      {"layer": 2, "abs_max": 100.0, "rms": 10.0, "nonfinite": 2},
      {"layer": 4, "abs_max": 50.0, "rms": 5.0, "nonfinite": 0}]},
    {"sample": 3, "role": "normal", "score": 0.5, "layers": [
      {"layer": 2, "abs_max": 1.0, "rms": 0.5, "nonfinite": 0}]}])"));
}

TEST(TrainingQueriesOtherRun, NotATrainingRun) {
  OpenOptions options;
  options.paths = {std::string(MI_SOURCE_DIR) +
                   "/test/fixtures/resnet18/model.onnx"};
  auto session = Session::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_EQ((*session)->TrainingSnapshotPath(), "");
  EXPECT_EQ((*session)->TrainingOverviewJson().status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ((*session)->TrainingSamplesJson(0).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mi
