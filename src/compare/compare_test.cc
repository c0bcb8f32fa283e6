#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "model_inspector/compare.h"
#include "model_inspector/session.h"

namespace mi {
namespace {

TensorSpan F32(const std::vector<float>& v) {
  return TensorSpan{TensorDtype::kFloat32, v.data(), v.size()};
}

// a = [1, 2, 3, 4], b = [1, 2, 3, 5]: one element off by 1.
//   abs errors 0 0 0 1 -> max 1, mean 0.25, rmse sqrt(1/4) = 0.5
//   rel errors 0 0 0 0.25 -> max 0.25, mean 0.0625, 3 of 4 below 0.001
//   cosine (1 + 4 + 9 + 20) / (sqrt(30) sqrt(39)) = 34 / sqrt(1170)
//   relative Euclidean distance sqrt(1 / 30)
TEST(CompareTensors, HandComputedFigures) {
  std::vector<float> a = {1, 2, 3, 4}, b = {1, 2, 3, 5};
  StatusOr<TensorMetrics> m = CompareTensors(F32(a), F32(b));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->count, 4u);
  EXPECT_EQ(m->compared, 4u);
  EXPECT_DOUBLE_EQ(m->max_abs_err, 1.0);
  EXPECT_DOUBLE_EQ(m->mean_abs_err, 0.25);
  EXPECT_DOUBLE_EQ(m->rmse, 0.5);
  EXPECT_DOUBLE_EQ(m->max_rel_err, 0.25);
  EXPECT_DOUBLE_EQ(m->mean_rel_err, 0.0625);
  EXPECT_DOUBLE_EQ(m->one_thousandth_ratio, 0.75);
  EXPECT_DOUBLE_EQ(m->ten_thousandth_ratio, 0.75);
  ASSERT_TRUE(m->cosine.has_value());
  EXPECT_NEAR(*m->cosine, 34.0 / std::sqrt(1170.0), 1e-15);
  EXPECT_NEAR(m->relative_euclidean, std::sqrt(1.0 / 30.0), 1e-15);
  // cosine 0.994 >= 0.99 and max abs err 1 is not above 1: msprobe says Yes.
  EXPECT_TRUE(JudgeTensors(*m, CompareThresholds()).pass);
}

// The same pair under msit's analyser limits: the relative Euclidean
// distance sqrt(1/30) = 0.183 is above its 0.05.
TEST(CompareTensors, MsitRule) {
  std::vector<float> a = {1, 2, 3, 4}, b = {1, 2, 3, 5};
  TensorMetrics m = *CompareTensors(F32(a), F32(b));
  CompareJudgement j = JudgeTensors(m, CompareThresholds::Msit());
  EXPECT_FALSE(j.pass);
  ASSERT_EQ(j.reasons.size(), 1u);
  EXPECT_NE(j.reasons[0].find("relative Euclidean distance 0.182574 > 0.05"),
            std::string::npos)
      << j.reasons[0];
}

// b = [1, 2, 3, 6]: cosine 38 / (sqrt(30) sqrt(50)) = 0.981 < 0.99 with
// max abs err 2 > 0.001, and 2 > 1: both of msprobe's "No" rules.
TEST(CompareTensors, MsprobeRuleFails) {
  std::vector<float> a = {1, 2, 3, 4}, b = {1, 2, 3, 6};
  TensorMetrics m = *CompareTensors(F32(a), F32(b));
  EXPECT_NEAR(*m.cosine, 38.0 / std::sqrt(1500.0), 1e-15);
  CompareJudgement j = JudgeTensors(m, CompareThresholds());
  EXPECT_FALSE(j.pass);
  ASSERT_EQ(j.reasons.size(), 2u);
  EXPECT_NE(j.reasons[0].find("cosine"), std::string::npos);
  EXPECT_NE(j.reasons[1].find("max abs err 2 > 1"), std::string::npos);
}

TEST(CompareTensors, NonFiniteByPosition) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {nan, inf, inf, 1, 2}, b = {nan, inf, -inf, nan, 2};
  TensorMetrics m = *CompareTensors(F32(a), F32(b));
  EXPECT_EQ(m.compared, 1u);  // only the last pair is finite on both sides
  EXPECT_EQ(m.nan_mismatch, 1u);
  EXPECT_EQ(m.inf_mismatch, 1u);  // +inf against -inf
  EXPECT_EQ(m.nan_a, 1u);
  EXPECT_EQ(m.nan_b, 2u);
  EXPECT_FALSE(JudgeTensors(m, CompareThresholds()).pass);
}

TEST(CompareTensors, HalfAndBFloat16Widening) {
  // float16 0x3C00 = 1, 0xC000 = -2, 0x7BFF = 65504 (its largest), 0x0001 =
  // 2^-24; bfloat16 0x3F80 = 1, 0xC000 = -2, 0x477F = 65280, 0x3380 = 2^-24.
  std::vector<uint16_t> half = {0x3C00, 0xC000, 0x7BFF, 0x0001};
  std::vector<uint16_t> bf16 = {0x3F80, 0xC000, 0x477F, 0x3380};
  std::vector<double> ref = {1, -2, 65504, std::ldexp(1.0, -24)};
  TensorSpan r{TensorDtype::kFloat64, ref.data(), ref.size()};
  TensorMetrics mh = *CompareTensors(
      r, TensorSpan{TensorDtype::kFloat16, half.data(), half.size()});
  EXPECT_EQ(mh.max_abs_err, 0.0);
  EXPECT_EQ(mh.fp16_overflow_b, 0u);  // 65504 is still in range
  TensorMetrics mb = *CompareTensors(
      r, TensorSpan{TensorDtype::kBFloat16, bf16.data(), bf16.size()});
  EXPECT_DOUBLE_EQ(mb.max_abs_err, 65504.0 - 65280.0);
}

TEST(CompareTensors, Fp16OverflowIsAWarningByDefault) {
  std::vector<float> a = {1, 70000}, b = {1, 70000};
  std::vector<float> c = {1, 1000};
  TensorMetrics same = *CompareTensors(F32(a), F32(b));
  EXPECT_EQ(same.fp16_overflow_a, 1u);
  EXPECT_EQ(same.fp16_overflow_b, 1u);
  TensorMetrics m = *CompareTensors(F32(c), F32(a));
  CompareJudgement j = JudgeTensors(m, CompareThresholds());
  EXPECT_FALSE(j.pass);  // max abs err 69000 > 1
  CompareThresholds strict;
  strict.fp16_overflow_fails = true;
  strict.max_abs_err_ceiling = 1e9;
  strict.cosine_floor = 0;
  strict.cosine_min = 0;
  CompareJudgement js = JudgeTensors(m, strict);
  EXPECT_FALSE(js.pass);
  ASSERT_EQ(js.reasons.size(), 1u);
  EXPECT_NE(js.reasons[0].find("float16"), std::string::npos);
}

TEST(CompareTensors, CountsMustAgree) {
  std::vector<float> a = {1, 2}, b = {1};
  EXPECT_FALSE(CompareTensors(F32(a), F32(b)).ok());
}

// msprobe summary mode: |b - a| / |a| per statistic, 0.5 the limit.
TEST(CompareStats, RelativeErrorsAgainstA) {
  TensorStatsView a, b;
  a.max = 4;
  a.min = -2;
  a.mean = 1;
  a.l2 = 10;
  b.max = 7;  // 3 / 4 = 0.75 > 0.5
  b.min = -2;
  b.mean = 1.25;  // 0.25
  b.l2 = 10;
  StatsMetrics m = CompareStats(a, b);
  EXPECT_DOUBLE_EQ(*m.max_diff, 3.0);
  EXPECT_DOUBLE_EQ(*m.max_rel_err, 0.75);
  EXPECT_DOUBLE_EQ(*m.mean_rel_err, 0.25);
  EXPECT_DOUBLE_EQ(*m.min_rel_err, 0.0);
  CompareJudgement j = JudgeStats(m, CompareThresholds());
  EXPECT_FALSE(j.pass);
  ASSERT_EQ(j.reasons.size(), 1u);
  EXPECT_NE(j.reasons[0].find("max relative error 0.75"), std::string::npos);
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("mi_compare_test_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const {
    return (path_ / name).string();
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// A .npy v1.0 file as NumPy writes it: magic, version, header length, the
// header dict padded with spaces to a multiple of 64 bytes, '\n', data.
void WriteNpy(const std::string& path, const std::string& shape,
              const std::vector<float>& values) {
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(dict.size());
  out.put(static_cast<char>(len & 0xff));
  out.put(static_cast<char>(len >> 8));
  out << dict;
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
}

TEST(ReadNpy, ShapeDtypeAndData) {
  TempDir dir;
  WriteNpy(dir.File("x.npy"), "(2, 3)", {0, 1, 2, 3, 4, 5});
  StatusOr<NpyArray> x = ReadNpy(dir.File("x.npy"));
  ASSERT_TRUE(x.ok()) << x.status().message();
  EXPECT_EQ(x->dtype, TensorDtype::kFloat32);
  EXPECT_EQ(x->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(x->count(), 6u);
  WriteNpy(dir.File("scalar.npy"), "()", {7});
  EXPECT_EQ(ReadNpy(dir.File("scalar.npy"))->count(), 1u);
  WriteNpy(dir.File("short.npy"), "(4, 4)", {1, 2});
  StatusOr<NpyArray> bad = ReadNpy(dir.File("short.npy"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("short.npy"), std::string::npos);
}

ProbeTensor Probe(const std::string& node, std::vector<int64_t> shape,
                  const std::string& file, int64_t order) {
  ProbeTensor r;
  r.probe = node + ":0";
  r.node = node;
  r.order = order;
  r.dtype = "float32";
  r.shape = std::move(shape);
  r.array_path = file;
  return r;
}

// A framework Conv -> Relu and its compiled form: one NCHWc Conv with the
// Relu fused (output blocked by 4: [1, 1, 1, 2, 4], channel c of pixel w at
// w * 4 + c, the 4th lane padding) and a ReorderOutput back to NCHW that
// writes the framework Relu's tensor name.
TEST(CompareProbeSets, FusedGroupThroughNchwcAndReorderOutput) {
  TempDir dir;
  // Relu output [1, 3, 1, 2]: channel c, pixel w holds 10 c + w.
  WriteNpy(dir.File("relu.npy"), "(1, 3, 1, 2)", {0, 1, 10, 11, 20, 21});
  WriteNpy(dir.File("conv.npy"), "(1, 3, 1, 2)", {0, 1, 10, 11, 20, 21});
  WriteNpy(dir.File("blocked.npy"), "(1, 1, 1, 2, 4)",
           {0, 10, 20, 99, 1, 11, 21, 99});
  // ReorderOutput's result, one value off by 0.5: within msprobe's default
  // ceiling of 1 (cosine stays above 0.99), so the test lowers the ceiling
  // to 0.25 to make it the first divergent pair.
  WriteNpy(dir.File("reordered.npy"), "(1, 3, 1, 2)", {0, 1, 10, 11, 20, 21.5});
  ProbeSet a;
  a.label = "framework run";
  a.level = "framework";
  a.nodes = {{"conv", "Conv", "", {"x", "w"}, {"conv_out"}, {}},
             {"relu", "Relu", "", {"conv_out"}, {"relu_out"}, {}}};
  a.probes = {Probe("conv", {1, 3, 1, 2}, dir.File("conv.npy"), 0),
              Probe("relu", {1, 3, 1, 2}, dir.File("relu.npy"), 1)};
  ProbeSet b;
  b.label = "compiled run";
  b.level = "compiled";
  b.nodes = {{"relu_out_nchwc",
              "Conv",
              "com.microsoft.nchwc",
              {"x"},
              {"tok"},
              {"conv", "relu"}},
             {"ReorderOutput",
              "ReorderOutput",
              "com.microsoft.nchwc",
              {"tok"},
              {"relu_out"},
              {}}};
  b.probes = {
      Probe("relu_out_nchwc", {1, 1, 1, 2, 4}, dir.File("blocked.npy"), 0),
      Probe("ReorderOutput", {1, 3, 1, 2}, dir.File("reordered.npy"), 1)};
  CompareOptions options;
  options.thresholds.max_abs_err_ceiling = 0.25;
  StatusOr<CompareReport> r = CompareProbeSets(a, b, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->match, "fused_from");
  ASSERT_EQ(r->entries.size(), 2u);
  const CompareEntry& fused = r->entries[0];
  EXPECT_EQ(fused.node_a, "relu");  // the last node of the group
  EXPECT_EQ(fused.matched_by, "fused_from");
  EXPECT_EQ(fused.layout, "nchwc4");
  EXPECT_EQ(fused.verdict, "pass");
  EXPECT_EQ(fused.metrics->max_abs_err, 0.0);
  const CompareEntry& reorder = r->entries[1];
  EXPECT_EQ(reorder.node_a, "relu");
  EXPECT_EQ(reorder.matched_by, "tensor_name");
  EXPECT_EQ(reorder.verdict, "fail");
  EXPECT_DOUBLE_EQ(reorder.metrics->max_abs_err, 0.5);
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].status, "matched");
  EXPECT_EQ(r->groups[0].compared_with, "relu");
  EXPECT_EQ(r->groups_matched, 1);
  EXPECT_EQ(r->first_divergent, 1);
  EXPECT_EQ(r->first_divergent_node, "ReorderOutput");
  EXPECT_FALSE(r->pass);
}

TEST(CompareProbeSets, ByNameFirstDivergentInExecutionOrder) {
  TempDir dir;
  WriteNpy(dir.File("ok.npy"), "(4)", {1, 2, 3, 4});
  WriteNpy(dir.File("bad.npy"), "(4)", {1, 2, 3, 9});
  ProbeSet a, b;
  a.probes = {Probe("n2", {4}, dir.File("ok.npy"), 2),
              Probe("n0", {4}, dir.File("ok.npy"), 0),
              Probe("n1", {4}, dir.File("ok.npy"), 1),
              Probe("only_a", {4}, dir.File("ok.npy"), 3)};
  b.probes = {Probe("n0", {4}, dir.File("ok.npy"), 0),
              Probe("n1", {4}, dir.File("bad.npy"), 1),
              Probe("n2", {4}, dir.File("bad.npy"), 2)};
  StatusOr<CompareReport> r = CompareProbeSets(a, b, CompareOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->match, "name");
  ASSERT_EQ(r->entries.size(), 3u);
  EXPECT_EQ(r->entries[0].node_a, "n0");
  EXPECT_EQ(r->passed, 1);
  EXPECT_EQ(r->failed, 2);
  EXPECT_EQ(r->first_divergent_node, "n1");
  EXPECT_EQ(r->only_in_a, std::vector<std::string>{"only_a:0"});
}

// The fixture's ResNet-18 and ORT's "all" graph, read through a Session:
// the first compiled node is the NCHWc Conv that replaced /conv1/Conv and
// /relu/Relu (python3-onnx: its name is /relu/Relu_output_0_nchwc, domain
// com.microsoft.nchwc, and it writes reorder_token_1, which ReorderOutput
// turns into /relu/Relu_output_0).
TEST(ReadLevelGraphs, FixtureLevelsInFileOrder) {
  OpenOptions options;
  options.framework_model =
      std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18/model.onnx";
  options.compiled_model = std::string(MI_SOURCE_DIR) +
                           "/test/fixtures/resnet18/ort_all/"
                           "model.optimized.onnx";
  auto session = Session::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  StatusOr<LevelGraphs> g = ReadLevelGraphs(**session);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->framework.size(), 49u);
  ASSERT_EQ(g->compiled.size(), 34u);
  EXPECT_EQ(g->framework[0].name, "/conv1/Conv");
  const LevelNode& c0 = g->compiled[0];
  EXPECT_EQ(c0.name, "/relu/Relu_output_0_nchwc");
  EXPECT_EQ(c0.domain, "com.microsoft.nchwc");
  EXPECT_EQ(c0.outputs, std::vector<std::string>{"reorder_token_1"});
  EXPECT_EQ(c0.fused_from,
            (std::vector<std::string>{"/conv1/Conv", "/relu/Relu"}));
  EXPECT_EQ(g->compiled[1].op_type, "ReorderOutput");
  EXPECT_EQ(g->compiled[1].outputs,
            std::vector<std::string>{"/relu/Relu_output_0"});
}

}  // namespace
}  // namespace mi
