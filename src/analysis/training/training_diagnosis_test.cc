// The training diagnosis on records built in memory: every expected score
// is worked out by hand from the formula in docs/design/training-diagnosis.md
// in the comment beside it; the causes' expectations follow from how the
// record was built (which layer's metric was made anomalous, at which step).

#include "analysis/training/training_diagnosis.h"

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/registry/registry.h"
#include "analysis/training/training_rules.h"
#include "encoders/json_encoder.h"

namespace mi::analysis {
namespace {

using training::TrainingLayer;
using training::TrainingRecord;
using training::TrainingStep;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A record of `steps` steps over the given layers (name, type, params),
// every metric healthy: grad 1, weight 10, update ratio 1e-3 (update 0.01,
// lr 0.01 so update/grad = 0.01), activations rms 1, inputs rms 1, dead 0.
TrainingRecord Healthy(
    const std::vector<std::tuple<std::string, std::string, int64_t>>& layers,
    size_t steps) {
  TrainingRecord r;
  r.path = "mem.db";
  r.model = "Net";
  r.optimizer = "SGD";
  for (size_t i = 0; i < layers.size(); ++i) {
    TrainingLayer l;
    l.name = std::get<0>(layers[i]);
    l.type = std::get<1>(layers[i]);
    l.param_count = std::get<2>(layers[i]);
    l.forward_order = static_cast<int32_t>(i);
    l.node = 100 + static_cast<int64_t>(i);
    r.layers.push_back(l);
    if (i > 0) {
      r.edges.emplace_back(static_cast<int32_t>(i - 1),
                           static_cast<int32_t>(i));
    }
  }
  for (size_t s = 0; s < steps; ++s) {
    TrainingStep st;
    st.step = static_cast<int64_t>(s);
    st.loss = 1;
    st.grad_norm = 1;
    st.lr = 0.01;
    st.clipped = 0;
    r.steps.push_back(st);
  }
  size_t n = layers.size() * steps;
  auto& m = r.metrics;
  auto fill = [&](std::vector<double>& c, double v) { c.assign(n, v); };
  fill(m.weight_norm, 10);
  fill(m.grad_norm, 1);
  fill(m.update_norm, 0.01);
  fill(m.update_ratio, 1e-3);
  fill(m.grad_zero_fraction, 0);
  fill(m.dead_fraction, 0);
  fill(m.act_abs_max, 3);
  fill(m.act_rms, 1);
  fill(m.act_mean, 0);
  fill(m.act_std, 1);
  fill(m.act_zero_fraction, 0);
  fill(m.in_abs_max, 3);
  fill(m.in_rms, 1);
  fill(m.gout_norm, 1);
  fill(m.gout_abs_max, 1);
  for (auto* c : {&m.grad_nan, &m.grad_inf, &m.act_nan, &m.act_inf, &m.in_nan,
                  &m.in_inf, &m.gout_nan, &m.gout_inf}) {
    c->assign(n, 0);
  }
  m.act_dtype.assign(n, "float32");
  // Parameter-free layers have no parameter metrics.
  for (size_t s = 0; s < steps; ++s) {
    for (size_t l = 0; l < layers.size(); ++l) {
      if (std::get<2>(layers[l]) > 0) continue;
      size_t i = r.at(s, l);
      for (auto* c :
           {&m.weight_norm, &m.grad_norm, &m.update_norm, &m.update_ratio,
            &m.grad_zero_fraction, &m.dead_fraction}) {
        (*c)[i] = kNaN;
      }
    }
  }
  return r;
}

TrainingRecord Mlp(size_t steps) {
  return Healthy({{"fc1", "Linear", 80},
                  {"act1", "ReLU", 0},
                  {"fc2", "Linear", 80},
                  {"act2", "ReLU", 0},
                  {"head", "Linear", 9}},
                 steps);
}

TEST(TrainingScoreTest, PenaltiesAsDocumented) {
  TrainingRecord r = Mlp(1);
  TrainingHealthOptions o = HealthOptionsOf(r);  // 1e-5, 50, 0.3, 0.1, 1e4
  auto& m = r.metrics;
  // Healthy cell: nothing flagged, ratio 1e-3 below the 1e-2 band: 100.
  EXPECT_DOUBLE_EQ(ScoreCell(r, 0, 0, o).score, 100);
  // Exploding 500 = 10x the ceiling: 30 + 15 log10(10) = 45 -> 55.
  m.grad_norm[0] = 500;
  CellHealth c = ScoreCell(r, 0, 0, o);
  EXPECT_NEAR(c.score, 55, 1e-9);
  EXPECT_EQ(c.flags, kFlagExploding);
  m.grad_norm[0] = 1;
  // Dead 0.65 with alert 0.3: 20 + 40 (0.35 / 0.7) = 40 -> 60.
  m.dead_fraction[0] = 0.65;
  EXPECT_NEAR(ScoreCell(r, 0, 0, o).score, 60, 1e-9);
  m.dead_fraction[0] = 0;
  // Update ratio 1.0 with alert 0.1: 20 + 15 log10(10) = 35 -> 65.
  m.update_ratio[0] = 1.0;
  EXPECT_NEAR(ScoreCell(r, 0, 0, o).score, 65, 1e-9);
  EXPECT_EQ(ScoreCell(r, 0, 0, o).flags, kFlagUpdateRatio);
  // 0.05, in the 1e-2..1e-1 band: 10 log10(5) = 6.9897 -> 93.0103, no flag.
  m.update_ratio[0] = 0.05;
  EXPECT_NEAR(ScoreCell(r, 0, 0, o).score, 100 - 10 * std::log10(5.0), 1e-9);
  EXPECT_EQ(ScoreCell(r, 0, 0, o).flags, 0u);
  m.update_ratio[0] = 1e-3;
  // Vanishing 1e-6 < 1e-5: 30 -> 70.
  m.grad_norm[0] = 1e-6;
  EXPECT_NEAR(ScoreCell(r, 0, 0, o).score, 70, 1e-9);
  m.grad_norm[0] = 1;
  // |act| 1e6 = 100x the range: 30 + 10 log10(100) = 50 -> 50.
  m.act_abs_max[0] = 1e6;
  EXPECT_NEAR(ScoreCell(r, 0, 0, o).score, 50, 1e-9);
  m.act_abs_max[0] = 3;
  // float16 at 40000 >= 65504 / 2: 40 -> 60 (and 4e4 > 1e4: 30 + 10 log10(4)
  // = 36.02 more -> 23.98).
  m.act_dtype[0] = "float16";
  m.act_abs_max[0] = 40000;
  c = ScoreCell(r, 0, 0, o);
  EXPECT_NEAR(c.score, 100 - 40 - (30 + 10 * std::log10(4.0)), 1e-9);
  EXPECT_EQ(c.flags, kFlagFp16Range | kFlagActivationRange);
  // A NaN anywhere: 0.
  m.act_nan[0] = 3;
  EXPECT_EQ(ScoreCell(r, 0, 0, o).score, 0);
  // Nothing measured: NaN.
  TrainingRecord empty = Mlp(1);
  size_t i = empty.at(0, 1);  // act1: parameter-free
  empty.metrics.act_rms[i] = kNaN;
  empty.metrics.act_abs_max[i] = kNaN;
  EXPECT_TRUE(std::isnan(ScoreCell(empty, 0, 1, o).score));
}

TEST(TrainingDiagnosisTest, HealthyRunHasNoCauses) {
  TrainingRecord r = Mlp(8);
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  EXPECT_DOUBLE_EQ(d.score, 100);
  EXPECT_EQ(d.anomaly_step, -1);
  EXPECT_TRUE(d.causes.empty());
  EXPECT_TRUE(d.chain.empty());
  EXPECT_TRUE(d.problem_layers.empty());
  ASSERT_EQ(d.layers.size(), 5u);
  ASSERT_EQ(d.heatmap.size(), 5u);
  EXPECT_EQ(d.heatmap[0].size(), 8u);
  EXPECT_EQ(d.layers[2].name, "fc2");
  EXPECT_EQ(d.layers[2].node, 102);
}

TEST(TrainingDiagnosisTest, ModelScoreIsHalfWorstHalfMean) {
  TrainingRecord r = Mlp(2);
  // fc2 at step 1 exploding 500: 55 (as above). Layers at step 1: 100, 100,
  // 55, 100, 100 -> mean 91, min 55 -> 0.5 * 55 + 0.5 * 91 = 73.
  r.metrics.grad_norm[r.at(1, 2)] = 500;
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  ASSERT_EQ(d.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(d.steps[0].score, 100);
  EXPECT_NEAR(d.steps[1].score, 73, 1e-9);
  EXPECT_NEAR(d.score, 73, 1e-9);  // no anomaly step: the last step
  ASSERT_EQ(d.problem_layers.size(), 1u);
  EXPECT_EQ(d.problem_layers[0], 2);
  EXPECT_EQ(d.layers[2].flags, std::vector<std::string>{"exploding"});
  EXPECT_EQ(d.layers[2].worst_step, 1);
}

// fc2's optimizer group's lr x1000 from step 5: its update per unit of
// gradient goes 0.01 -> 10 and its update ratio 1e-3 -> 1; at step 6 its
// output (and the layers after it) grows 100x.
TEST(TrainingDiagnosisTest, LearningRateJumpOnOneGroup) {
  TrainingRecord r = Mlp(8);
  auto& m = r.metrics;
  for (size_t s = 5; s < 8; ++s) {
    m.update_norm[r.at(s, 2)] = 10;
    m.update_ratio[r.at(s, 2)] = 1;
  }
  for (size_t s = 6; s < 8; ++s) {
    for (size_t l = 2; l < 5; ++l) {
      m.act_rms[r.at(s, l)] = 100;
      m.act_abs_max[r.at(s, l)] = 300;
      if (l > 2) m.in_rms[r.at(s, l)] = 100;
    }
    r.steps[s].grad_norm = 500;
    r.steps[s].loss = 9;
  }
  r.optimizer_groups = {{0.01, kNaN, kNaN, {0, 4}}, {10, kNaN, kNaN, {2}}};
  r.anomaly_step = 6;
  r.hits.push_back({6, "loss_spike", -1, 9, 3, ""});
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  ASSERT_FALSE(d.causes.empty());
  const TrainingCause& top = d.causes[0];
  EXPECT_EQ(top.cause, "learning_rate_too_high");
  EXPECT_EQ(top.layer, 2);
  EXPECT_EQ(top.layer_name, "fc2");
  EXPECT_EQ(top.step, 5);
  // 0.45 base + 0.35 (update/grad 10 / 0.01 = 1000x >= 10x) + 0.05 (group
  // lr 10 = 1000x the other group's 0.01); steps.lr did not change.
  EXPECT_NEAR(top.confidence, 0.85, 1e-9);
  EXPECT_FALSE(top.fix.snippet.empty());
  // The grad-norm 500 without clipping is ranked, below.
  bool clipping = false;
  for (const TrainingCause& c : d.causes) {
    clipping |= c.cause == "missing_gradient_clipping";
    EXPECT_LE(c.confidence, top.confidence);
  }
  EXPECT_TRUE(clipping);
  // Chain: fc2 produced it at step 5; act2 and head show it at step 6.
  ASSERT_EQ(d.chain.size(), 3u);
  EXPECT_EQ(d.chain[0].role, "producer");
  EXPECT_EQ(d.chain[0].layer, 2);
  EXPECT_EQ(d.chain[0].node, 102);
  EXPECT_EQ(d.chain[1].role, "propagator");
  EXPECT_EQ(d.chain[1].layer, 3);
  EXPECT_EQ(d.chain[1].step, 6);
  EXPECT_EQ(d.chain[2].layer, 4);
  EXPECT_EQ(d.chain[2].direction, "forward");
  ASSERT_EQ(d.steps[6].events, std::vector<std::string>{"loss_spike"});
}

// fc2's bias set very negative at step 4: act2 (its ReLU) outputs zeros,
// fc2's and fc1's gradient rows all zero (fc1 only propagates: its ReLU is
// alive); head's input is all zero.
TEST(TrainingDiagnosisTest, DeadReluAfterNegativeBias) {
  TrainingRecord r = Mlp(7);
  auto& m = r.metrics;
  for (size_t s = 4; s < 7; ++s) {
    m.dead_fraction[r.at(s, 0)] = 1;
    m.grad_norm[r.at(s, 0)] = 0;
    m.dead_fraction[r.at(s, 2)] = 1;
    m.grad_norm[r.at(s, 2)] = 0;
    m.act_mean[r.at(s, 2)] = -50;
    m.act_zero_fraction[r.at(s, 3)] = 1;
    m.act_rms[r.at(s, 3)] = 0;
    m.in_rms[r.at(s, 4)] = 0;
    m.dead_fraction[r.at(s, 4)] = 1;  // its weight's gradient is 0 too
    m.gout_norm[r.at(s, 1)] = 0;      // nothing flows back through act2
    m.gout_norm[r.at(s, 0)] = 0;
    m.gout_norm[r.at(s, 2)] = 0;
  }
  r.anomaly_step = 4;
  r.hits.push_back({4, "dead_units", 2, 1, 0.3, ""});
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  ASSERT_FALSE(d.causes.empty());
  EXPECT_EQ(d.causes[0].cause, "dead_relu");
  EXPECT_EQ(d.causes[0].layer, 2);
  EXPECT_EQ(d.causes[0].step, 4);
  // 0.5 + 0.2 (dead median 0 before < 0.15) + 0.15 (act2 zeros 1 >= 0.9)
  // + 0.05 (fc2's mean -50 below minus its std 1).
  EXPECT_NEAR(d.causes[0].confidence, 0.9, 1e-9);
  // fc1 (no dead ReLU after it) and head (its input died) are not causes.
  for (const TrainingCause& c : d.causes) {
    if (c.cause == "dead_relu") {
      EXPECT_EQ(c.layer, 2);
    }
  }
  // Backward: fc2 -> act1 -> fc1 (fc1 vanishing / dead at step 4).
  ASSERT_GE(d.chain.size(), 2u);
  EXPECT_EQ(d.chain[0].layer, 2);
  EXPECT_EQ(d.chain.back().layer, 0);
  EXPECT_EQ(d.chain.back().direction, "backward");
}

TEST(TrainingDiagnosisTest, BadInitialisationAtTheFirstStep) {
  TrainingRecord r = Mlp(4);
  // fc2: fan_in 8, expected std 1/sqrt(8) = 0.354; init_std 35.4 = 100x.
  r.layers[2].attributes = {{"fan_in", "8"}, {"init_std", "35.36"}};
  r.layers[0].attributes = {{"fan_in", "8"}, {"init_std", "0.2"}};
  auto& m = r.metrics;
  for (size_t s = 0; s < 4; ++s) {
    m.act_rms[r.at(s, 2)] = 60;  // gain 60 over its input's rms 1
    m.in_rms[r.at(s, 3)] = 60;
    m.act_rms[r.at(s, 3)] = 40;
    m.in_rms[r.at(s, 4)] = 40;
    m.grad_norm[r.at(s, 4)] = 200;
    m.update_ratio[r.at(s, 4)] = 0.2;
    m.update_norm[r.at(s, 4)] = 2;
    r.steps[s].grad_norm = 200;
  }
  r.anomaly_step = 0;
  r.hits.push_back({0, "grad_norm", -1, 200, 100, ""});
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  ASSERT_FALSE(d.causes.empty());
  EXPECT_EQ(d.causes[0].cause, "bad_initialization");
  EXPECT_EQ(d.causes[0].layer, 2);
  EXPECT_EQ(d.causes[0].step, 0);
  // 0.6 + 0.2 log10(100 / 10) = 0.8 (capped at +0.2) + 0.15 (gain 60 >= 10).
  EXPECT_NEAR(d.causes[0].confidence, 0.95, 1e-3);
  ASSERT_GE(d.causes[0].evidence.size(), 2u);
  EXPECT_EQ(d.causes[0].evidence[0].metric, "init_std");
  EXPECT_NEAR(d.causes[0].evidence[0].expected, 1 / std::sqrt(8.0), 1e-12);
}

// Raw features from step 5 (x1e4): the entry layer's input rms 1 -> 1e4,
// its output 1 -> 5e3 feeding a LayerNorm.
TEST(TrainingDiagnosisTest, InputOutOfRangeBeforeLayerNorm) {
  TrainingRecord r = Healthy({{"embed", "Linear", 40},
                              {"norm", "LayerNorm", 16},
                              {"fc", "Linear", 72},
                              {"head", "Linear", 9}},
                             8);
  auto& m = r.metrics;
  for (size_t s = 5; s < 8; ++s) {
    m.in_rms[r.at(s, 0)] = 1e4;
    m.in_abs_max[r.at(s, 0)] = 3e4;
    m.act_rms[r.at(s, 0)] = 5e3;
    m.act_abs_max[r.at(s, 0)] = 2e4;
    m.in_rms[r.at(s, 1)] = 5e3;
    m.in_abs_max[r.at(s, 1)] = 2e4;
  }
  r.anomaly_step = 5;
  r.hits.push_back({5, "act_range", 0, 2e4, 1e4, ""});
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  ASSERT_FALSE(d.causes.empty());
  EXPECT_EQ(d.causes[0].cause, "input_out_of_range");
  EXPECT_EQ(d.causes[0].layer, 0);
  EXPECT_EQ(d.causes[0].step, 5);
  // 0.55 + 0.15 (entry) + 0.1 (output 5e3x its median, a norm after) + 0.1
  // (|act| 2e4 > 1e4) = 0.9.
  EXPECT_NEAR(d.causes[0].confidence, 0.9, 1e-9);
  // The LayerNorm's input jumped too, but what feeds it did not stay
  // healthy: not a cause of its own.
  for (const TrainingCause& c : d.causes) EXPECT_NE(c.layer, 1);
}

TEST(TrainingDiagnosisTest, Fp16OverflowOutranksTheInputsGrowth) {
  TrainingRecord r = Healthy(
      {{"proj", "HalfScale", 8}, {"fc", "Linear", 72}, {"head", "Linear", 9}},
      6);
  auto& m = r.metrics;
  for (size_t s = 0; s < 6; ++s) m.act_dtype[r.at(s, 0)] = "float16";
  m.act_abs_max[r.at(3, 0)] = 30000;
  m.act_abs_max[r.at(4, 0)] = kNaN;
  m.act_inf[r.at(4, 0)] = 12;
  m.act_rms[r.at(4, 0)] = kNaN;
  m.act_inf[r.at(4, 1)] = 40;  // propagated: fc's input was inf
  m.in_inf[r.at(4, 1)] = 12;
  r.steps[4].loss = kNaN;
  r.steps[4].loss_nonfinite = true;
  r.anomaly_step = 4;
  r.hits.push_back({4, "nan", -1, kNaN, kNaN, "loss"});
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  ASSERT_FALSE(d.causes.empty());
  EXPECT_EQ(d.causes[0].cause, "fp16_overflow");
  EXPECT_EQ(d.causes[0].layer, 0);
  EXPECT_EQ(d.causes[0].step, 4);
  EXPECT_DOUBLE_EQ(d.causes[0].confidence, 0.95);
  EXPECT_DOUBLE_EQ(d.score, 0);  // the loss is not finite
  ASSERT_GE(d.chain.size(), 2u);
  EXPECT_EQ(d.chain[1].layer, 1);
}

TEST(TrainingDiagnosisTest, JsonHasTheSchemaAndNullForNaN) {
  TrainingRecord r = Mlp(3);
  r.meta["command"] = R"(["train.py", "--lr", "0.1"])";
  r.metrics.act_rms[r.at(1, 1)] = kNaN;
  r.metrics.act_abs_max[r.at(1, 1)] = kNaN;
  TrainingDiagnosisResult d = DiagnoseTraining(r, HealthOptionsOf(r));
  nlohmann::json j = nlohmann::json::parse(encoders::EncodeJson(d));
  EXPECT_EQ(j["schema"], "model-inspector/training-diagnosis/1");
  EXPECT_TRUE(j["anomaly_step"].is_null());
  EXPECT_EQ(j["command"],
            nlohmann::json::parse(R"(["train.py", "--lr", "0.1"])"));
  EXPECT_EQ(j["heatmap"]["layers"], nlohmann::json::parse("[0,1,2,3,4]"));
  EXPECT_EQ(j["heatmap"]["steps"], nlohmann::json::parse("[0,1,2]"));
  EXPECT_TRUE(j["heatmap"]["values"][1][1].is_null());
  EXPECT_EQ(j["heatmap"]["values"][1][0], 100);
  EXPECT_EQ(j["layers"][0]["node"], 100);
}

TEST(TrainingDiagnosisTest, RegisteredAndOnlyForTrainingRuns) {
  const AnalysisDescriptor* a = FindAnalysis("training_diagnosis");
  ASSERT_NE(a, nullptr);
  AnalysisContext none;
  EXPECT_FALSE(Applies(*a, none));
  auto refused = RunAnalysis(none, "training_diagnosis", {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("needs a training snapshot"),
            std::string::npos);
  TrainingRecord r = Mlp(3);
  r.thresholds.dead = 0.5;
  AnalysisContext ctx;
  ctx.training = &r;
  EXPECT_TRUE(Applies(*a, ctx));
  EXPECT_TRUE(InfoOf(*a, &ctx).needs_training);
  auto result = RunAnalysis(ctx, "training_diagnosis", {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto* d = dynamic_cast<const TrainingDiagnosisResult*>(result->get());
  ASSERT_NE(d, nullptr);
  EXPECT_DOUBLE_EQ(d->dead, 0.5);  // the snapshot's threshold
  auto given = RunAnalysis(ctx, "training_diagnosis", {{"dead", "0.4"}});
  ASSERT_TRUE(given.ok());
  EXPECT_DOUBLE_EQ(
      dynamic_cast<const TrainingDiagnosisResult*>(given->get())->dead, 0.4);
  auto bad = RunAnalysis(ctx, "training_diagnosis", {{"dead", "2"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("parameter 'dead'"), std::string::npos);
}

}  // namespace
}  // namespace mi::analysis
