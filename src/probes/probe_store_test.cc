#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "model_inspector/probes.h"
#include "probes/half.h"
#include "probes/stats_kernel.h"

namespace mi {
namespace {

namespace fs = std::filesystem;

class ProbeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mi_probe_store_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ProbeStore> Open(int keep = 10) {
    auto store = ProbeStore::Open(dir_.string(), true, keep);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  }

  fs::path dir_;
};

ProbeRecord Rec(int64_t run, std::string probe, int64_t order = 0) {
  ProbeRecord r;
  r.run = run;
  r.node = probe.substr(0, probe.rfind(':'));
  r.probe = std::move(probe);
  r.order = order;
  return r;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The .npy 1.0 layout, read by hand: magic, version, header length, a
// Python dict literal padded to 64 bytes, then the raw elements.
struct Npy {
  std::string header;
  std::string data;
};
Npy ParseNpy(const std::string& bytes) {
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t len = static_cast<uint8_t>(bytes[8]) |
                     (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
  EXPECT_EQ((10 + len) % 64, 0u);
  return {bytes.substr(10, len), bytes.substr(10 + len)};
}

TEST_F(ProbeStoreTest, WritesARunAndReadsItBack) {
  auto store = Open();
  ProbeRunInfo info;
  info.backend = "torch";
  info.model = "m.onnx";
  const int64_t run = *store->BeginRun(info);
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  auto stats = store->Add(Rec(run, "/conv/Conv:0", 1),
                          TensorView{a.data(), ProbeDType::kFloat32, {2, 3}},
                          ProbeKeep{true, false});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_DOUBLE_EQ(*stats->mean, 3.5);  // (1+...+6) / 6
  const std::vector<int64_t> b = {0, 0, 7};
  ASSERT_TRUE(store
                  ->Add(Rec(run, "/relu/Relu:0", 2),
                        TensorView{b.data(), ProbeDType::kInt64, {3}},
                        ProbeKeep{})
                  .ok());
  ASSERT_TRUE(store
                  ->AddTriggerHit({run, "nan", "/relu/Relu:0", "/relu/Relu",
                                   "producer", "1 NaN", 2})
                  .ok());
  ASSERT_TRUE(
      store->AddPluginMetrics({run, "/relu/Relu:0", "sparsity", "{\"z\":0.5}"})
          .ok());
  // Nothing is visible before the run ends.
  EXPECT_TRUE(store->Runs()->empty());
  ASSERT_TRUE(store->EndRun(run, "stopped", "/relu/Relu:0", 1234).ok());

  auto runs = *store->Runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "stopped");
  EXPECT_EQ(runs[0].stopped_at, "/relu/Relu:0");
  EXPECT_EQ(runs[0].elapsed_ns, 1234);
  EXPECT_EQ(runs[0].probe_rows, 2);
  auto rows = *store->Probes(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].probe, "/conv/Conv:0");
  EXPECT_EQ(rows[0].array_file, "arrays/" + std::to_string(run) + "/0.npy");
  EXPECT_EQ(rows[0].stats.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(rows[1].stats.zero, 2);
  EXPECT_EQ(*rows[1].stats.max, 7);
  EXPECT_TRUE(rows[1].array_file.empty());

  Npy npy = ParseNpy(ReadFile(dir_ / "probes" / rows[0].array_file));
  EXPECT_NE(npy.header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(npy.header.find("'shape': (2, 3)"), std::string::npos);
  EXPECT_EQ(npy.data,
            std::string(reinterpret_cast<const char*>(a.data()), 6 * 4));

  auto hits = *store->TriggerHits(run);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].role, "producer");
  auto metrics = *store->PluginMetrics(run);
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].metrics_json, "{\"z\":0.5}");

  // A second handle (another process would do the same) sees the run.
  auto reader = ProbeStore::Open(dir_.string(), false);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Runs()->size(), 1u);
}

TEST_F(ProbeStoreTest, KeepsTheLastRunsAndTheirArrays) {
  auto store = Open(2);
  std::vector<int64_t> ids;
  for (int i = 0; i < 4; ++i) {
    const int64_t run = *store->BeginRun({});
    const std::vector<double> x = {static_cast<double>(i)};
    ASSERT_TRUE(store
                    ->Add(Rec(run, "n:0"),
                          TensorView{x.data(), ProbeDType::kFloat64, {1}},
                          ProbeKeep{true, false})
                    .ok());
    ASSERT_TRUE(store->EndRun(run, "complete", "", 0).ok());
    ids.push_back(run);
  }
  auto runs = *store->Runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, ids[2]);
  EXPECT_EQ(runs[1].id, ids[3]);
  EXPECT_FALSE(fs::exists(dir_ / "probes/arrays" / std::to_string(ids[0])));
  EXPECT_FALSE(fs::exists(dir_ / "probes/arrays" / std::to_string(ids[1])));
  EXPECT_TRUE(fs::exists(dir_ / "probes/arrays" / std::to_string(ids[3])));
  // Series over the kept runs, oldest first: values 2 and 3.
  auto series = *store->ProbeRows("n:0", 0, 10);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(*series[0].stats.mean, 2);
  EXPECT_EQ(*series[1].stats.mean, 3);
}

// A writer that stops without ending its run (a crash) leaves nothing a
// reader sees; its row and files go once later runs push it out.
TEST_F(ProbeStoreTest, AnUnfinishedRunIsNeverVisible) {
  int64_t dead = 0;
  {
    auto store = Open(1);
    dead = *store->BeginRun({});
    const std::vector<float> x = {1};
    ASSERT_TRUE(store
                    ->Add(Rec(dead, "n:0"),
                          TensorView{x.data(), ProbeDType::kFloat32, {1}},
                          ProbeKeep{true, false})
                    .ok());
  }
  EXPECT_TRUE(fs::exists(dir_ / "probes/arrays" / std::to_string(dead)));
  auto store = Open(1);
  EXPECT_TRUE(store->Runs()->empty());
  EXPECT_FALSE(store->LatestRun()->has_value());
  const int64_t run = *store->BeginRun({});
  EXPECT_GT(run, dead);
  EXPECT_FALSE(store->EndRun(dead, "complete", "", 0).ok());
  ASSERT_TRUE(store->EndRun(run, "complete", "", 0).ok());
  EXPECT_EQ(store->Runs()->size(), 1u);
  EXPECT_FALSE(fs::exists(dir_ / "probes/arrays" / std::to_string(dead)));
}

// 2^20 + 5 elements: stride ceil((2^20 + 5) / 2^20) = 2, so the kept
// sample is elements 0, 2, 4, ..., 2^20 + 4: (2^20 + 6) / 2 = 524291.
TEST_F(ProbeStoreTest, LargeTensorsAreKeptAsAStridedSample) {
  auto store = Open();
  const int64_t run = *store->BeginRun({});
  std::vector<int32_t> x((1u << 20) + 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i);
  auto stats = store->Add(
      Rec(run, "big:0"),
      TensorView{
          x.data(), ProbeDType::kInt32, {static_cast<int64_t>(x.size())}},
      ProbeKeep{true, false});
  ASSERT_TRUE(stats.ok());
  // Statistics of the whole tensor: mean of 0..N-1 is (N-1)/2.
  EXPECT_DOUBLE_EQ(*stats->mean, (static_cast<double>(x.size()) - 1) / 2);
  ASSERT_TRUE(store->EndRun(run, "complete", "", 0).ok());
  ProbeRecord row = store->Probes(run)->at(0);
  EXPECT_TRUE(row.sampled);
  EXPECT_EQ(row.sample_stride, 2);
  Npy npy = ParseNpy(ReadFile(dir_ / "probes" / row.array_file));
  EXPECT_NE(npy.header.find("'shape': (524291,)"), std::string::npos);
  ASSERT_EQ(npy.data.size(), 524291u * 4);
  int32_t last;
  std::memcpy(&last, npy.data.data() + npy.data.size() - 4, 4);
  EXPECT_EQ(last, (1 << 20) + 4);
}

// float16 by IEEE 754 binary16: 1 -> 0x3c00, 65504 -> 0x7bff (largest),
// 70000 -> +Inf 0x7c00, 1e-8 (below half of 2^-24) -> 0, -2.5 -> 0xc100,
// 2^-24 -> 0x0001.
TEST_F(ProbeStoreTest, Float16Storage) {
  auto store = Open();
  const int64_t run = *store->BeginRun({});
  const std::vector<float> x = {1,     65504, 70000,
                                1e-8f, -2.5f, std::ldexp(1.0f, -24)};
  ASSERT_TRUE(store
                  ->Add(Rec(run, "h:0"),
                        TensorView{x.data(), ProbeDType::kFloat32, {6}},
                        ProbeKeep{true, true})
                  .ok());
  ASSERT_TRUE(store->EndRun(run, "complete", "", 0).ok());
  ProbeRecord row = store->Probes(run)->at(0);
  EXPECT_EQ(row.array_dtype, "float16");
  Npy npy = ParseNpy(ReadFile(dir_ / "probes" / row.array_file));
  EXPECT_NE(npy.header.find("'<f2'"), std::string::npos);
  std::vector<uint16_t> h(6);
  std::memcpy(h.data(), npy.data.data(), 12);
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3c00, 0x7bff, 0x7c00, 0x0000, 0xc100,
                                      0x0001}));
  // Round to nearest even at a tie: 1 + 2^-11 lies halfway between 1
  // (0x3c00, even) and 1 + 2^-10 (0x3c01).
  EXPECT_EQ(probes::FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(probes::FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

TEST_F(ProbeStoreTest, ImportedStatisticsAndErrors) {
  auto store = Open();
  const int64_t run = *store->BeginRun({});
  ProbeRecord r = Rec(run, "x:0");
  auto parsed = ParseTensorStatsJson(
      R"({"max": 3.5, "min": -1, "mean": 0.25, "Norm": 7.0})", &r.extra_json);
  ASSERT_TRUE(parsed.ok());
  r.stats = *parsed;
  ASSERT_TRUE(store->AddStats(r).ok());
  EXPECT_FALSE(
      store->AddTriggerHit({run, "nan", "x:0", "x", "maker", "", 0}).ok());
  EXPECT_FALSE(store->AddPluginMetrics({run, "x:0", "p", "[1]"}).ok());
  EXPECT_FALSE(store->EndRun(run, "done", "", 0).ok());
  ASSERT_TRUE(store->EndRun(run, "complete", "", 0).ok());
  ProbeRecord row = store->Probes(run)->at(0);
  EXPECT_EQ(*row.stats.max, 3.5);
  EXPECT_EQ(row.stats.count, -1);  // not said: unknown
  EXPECT_FALSE(row.stats.std.has_value());
  EXPECT_EQ(row.extra_json, "{\"Norm\":7.0}");
  EXPECT_NE(ProbeRecordJson(row).find("\"count\":null"), std::string::npos);
}

TEST_F(ProbeStoreTest, AForeignFileIsNamed) {
  fs::create_directories(dir_ / "probes");
  std::ofstream(dir_ / "probes/probes.db") << "not a database at all, really";
  auto store = ProbeStore::Open(dir_.string(), false);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("probes.db"), std::string::npos);
  EXPECT_FALSE(ProbeStore::Open((dir_ / "absent").string(), false).ok());
}

// The two compiled kernels give the same answer: the baseline against what
// ComputeTensorStats dispatches to on this processor (the AVX2 kernel where
// it runs, else the baseline itself), and against the AVX2 kernel directly
// where the processor can execute it.
TEST(StatsKernel, BaselineAndAvx2Agree) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(1.0f, 3.0f);
  std::vector<float> x(100000);
  for (float& v : x) v = normal(rng);
  x[777] = NAN;
  probes::KernelState a;
  probes::StatsKernelBaseline(x.data(), x.size(), ProbeDType::kFloat32, &a);
  EXPECT_EQ(a.nan, 1);
  const TensorStats dispatched =
      ComputeTensorStats(x.data(), x.size(), ProbeDType::kFloat32);
  EXPECT_EQ(dispatched.nan, 1);
  ASSERT_TRUE(dispatched.min && dispatched.max && dispatched.mean);
  EXPECT_EQ(*dispatched.min, a.min);
  EXPECT_EQ(*dispatched.max, a.max);
  EXPECT_NEAR(*dispatched.mean, a.mean, 1e-6);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    probes::KernelState b;
    probes::StatsKernelAvx2(x.data(), x.size(), ProbeDType::kFloat32, &b);
    EXPECT_EQ(a.n, b.n);
    EXPECT_EQ(b.nan, 1);
    EXPECT_EQ(a.min, b.min);
    EXPECT_EQ(a.max, b.max);
    EXPECT_NEAR(a.mean, b.mean, 1e-6);
    EXPECT_NEAR(a.m2, b.m2, 1e-6 * a.m2);
  }
}

}  // namespace
}  // namespace mi
