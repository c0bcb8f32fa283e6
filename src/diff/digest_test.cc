// Run digests of the real fixture models: what DigestLevels keeps of each
// level, the JSON round trip, and the reader's errors.
//
// Expected counts are python3-onnx's (test/fixtures/README.md, "Run
// digests"): `len(onnx.load(p).graph.node)` and the op-type Counter of
//   resnet18/model.onnx                     49 nodes: Conv 20, Relu 17,
//       Add 8, MaxPool 1, GlobalAveragePool 1, Flatten 1, Gemm 1
//   resnet18/ort_all/model.optimized.onnx   34 nodes: Conv 20,
//       ReorderOutput 6, Add 2, Relu 2, MaxPool 1, GlobalAveragePool 1,
//       Flatten 1, Gemm 1

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "model_inspector/diff.h"
#include "model_inspector/session.h"

namespace mi {
namespace {

const std::string kFixtures = std::string(MI_SOURCE_DIR) + "/test/fixtures/";

RunDigest DigestOf(const std::vector<std::string>& files) {
  DiffInputOptions options;
  for (const std::string& f : files) options.paths.push_back(kFixtures + f);
  StatusOr<RunDigest> digest = LoadDiffInput(options);
  EXPECT_TRUE(digest.ok()) << digest.status().ToString();
  return digest.ok() ? std::move(*digest) : RunDigest{};
}

const DigestLevel* LevelOf(const RunDigest& d, std::string_view level) {
  for (const DigestLevel& l : d.levels) {
    if (l.level == level) return &l;
  }
  return nullptr;
}

std::map<std::string, int> OpTypes(const DigestLevel& level) {
  std::map<std::string, int> counts;
  for (const DigestNode& n : level.nodes) ++counts[n.op_type];
  return counts;
}

const DigestNode* NodeNamed(const DigestLevel& level, std::string_view name) {
  for (const DigestNode& n : level.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

TEST(DigestTest, LevelsOfResnetFrameworkAndOrtAll) {
  RunDigest d = DigestOf(
      {"resnet18/model.onnx", "resnet18/ort_all/model.optimized.onnx"});
  ASSERT_EQ(d.levels.size(), 2u);
  const DigestLevel* fw = LevelOf(d, "framework");
  const DigestLevel* cc = LevelOf(d, "compiled");
  ASSERT_NE(fw, nullptr);
  ASSERT_NE(cc, nullptr);
  EXPECT_EQ(fw->format, "onnx");
  EXPECT_EQ(fw->nodes.size(), 49u);
  EXPECT_EQ(cc->nodes.size(), 34u);
  EXPECT_EQ(OpTypes(*fw), (std::map<std::string, int>{{"Add", 8},
                                                      {"Conv", 20},
                                                      {"Flatten", 1},
                                                      {"Gemm", 1},
                                                      {"GlobalAveragePool", 1},
                                                      {"MaxPool", 1},
                                                      {"Relu", 17}}));
  EXPECT_EQ(OpTypes(*cc)["ReorderOutput"], 6);
  EXPECT_EQ(OpTypes(*cc)["Conv"], 20);
  EXPECT_EQ(fw->fingerprint.size(), 16u);
  EXPECT_NE(fw->fingerprint, cc->fingerprint);

  // The stem convolution as torch.onnx.export wrote it (netron / python
  // onnx): kernel 7x7, stride 2, pads 3; input [1,3,224,224], output
  // [1,8,112,112] (width/8 ResNet-18).
  const DigestNode* conv = NodeNamed(*fw, "/conv1/Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op_type, "Conv");
  std::map<std::string, std::string> attrs(conv->attributes.begin(),
                                           conv->attributes.end());
  EXPECT_EQ(attrs["kernel_shape"], "[7,7]");
  EXPECT_EQ(attrs["strides"], "[2,2]");
  EXPECT_EQ(attrs["pads"], "[3,3,3,3]");
  ASSERT_GE(conv->inputs.size(), 2u);
  EXPECT_EQ(conv->inputs[0].dtype, "float32");
  EXPECT_EQ(conv->inputs[0].shape,
            (std::vector<std::string>{"1", "3", "224", "224"}));
  ASSERT_EQ(conv->outputs.size(), 1u);
  EXPECT_EQ(conv->outputs[0].shape,
            (std::vector<std::string>{"1", "8", "112", "112"}));

  // Every compiled node's fused_from names framework nodes of the digest.
  size_t with_fused_from = 0;
  for (const DigestNode& n : cc->nodes) {
    for (const std::string& f : n.fused_from) {
      EXPECT_NE(NodeNamed(*fw, f), nullptr) << n.name << " <- " << f;
    }
    with_fused_from += !n.fused_from.empty();
  }
  EXPECT_GT(with_fused_from, 0u);
}

TEST(DigestTest, JsonRoundTripKeepsEverything) {
  RunDigest d =
      DigestOf({"resnet18/model.onnx", "resnet18/ort_all/model.optimized.onnx",
                "resnet18/ort_all/onnxruntime_profile.json"});
  // The trace's own digest (3 model runs) round-trips as it is.
  {
    std::string real = RunDigestJson(d);
    StatusOr<RunDigest> back = ParseRunDigest(real, "real.midigest.json");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->run_count, 3);
    EXPECT_EQ(RunDigestJson(*back), real);
  }
  // Timing fields replaced by hand, so that the round trip covers each of
  // them whatever the trace digest holds.
  d.runs_from = "model_run";
  d.run_count = 2;
  d.total = {"total", {100, 120}, {0, 5}, {40, 41}};
  d.op_types = {{"Conv", {60, 70}, {0, 1}, {20, 20}}};
  d.streams = {{"cpu:0", {100, 120}, {0, 0}, {40, 41}}};
  d.unlinked_tasks = {{"memcpy", {1, 2}, {0, 0}, {1, 1}}};
  d.stream_pairs = {{"a", "b", {3, 4}}};
  d.meta.label = "quote \" and\nnewline";
  for (DigestLevel& l : d.levels) {
    for (DigestNode& n : l.nodes) {
      n.run_ns.assign(2, 7);
      n.overlapped_ns.assign(2, 1);
      n.streams = {"cpu:0"};
    }
  }
  std::string json = RunDigestJson(d);
  StatusOr<RunDigest> back = ParseRunDigest(json, "d.midigest.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(RunDigestJson(*back), json);
  EXPECT_EQ(back->meta.label, d.meta.label);
  EXPECT_EQ(back->levels[0].nodes[0].node_id, -1);  // not stored
  EXPECT_EQ(back->total.run_ns, (std::vector<int64_t>{100, 120}));
}

TEST(DigestTest, DigestFileIsASideOfADiff) {
  RunDigest d = DigestOf({"resnet18/model.onnx"});
  std::string path = ::testing::TempDir() + "/side.midigest.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::string json = RunDigestJson(d);
    std::fwrite(json.data(), 1, json.size(), f);
    std::fclose(f);
  }
  EXPECT_TRUE(IsRunDigestFile(path));
  EXPECT_FALSE(IsRunDigestFile(kFixtures + "resnet18/model.onnx"));
  EXPECT_FALSE(IsRunDigestFile(kFixtures + "resnet18/ort_all/manifest.json"));
  DiffInputOptions options;
  options.paths = {path};
  options.digest.meta.label = "given";
  StatusOr<RunDigest> loaded = LoadDiffInput(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->meta.label, "given");
  ASSERT_EQ(loaded->levels.size(), 1u);
  EXPECT_EQ(loaded->levels[0].fingerprint, d.levels[0].fingerprint);
  EXPECT_EQ(loaded->meta.model, "resnet18");

  options.paths.push_back(kFixtures + "resnet18/model.onnx");
  StatusOr<RunDigest> mixed = LoadDiffInput(options);
  EXPECT_FALSE(mixed.ok());
}

// Digests of the fixture runs, written where MI_DIGEST_OUT says (the
// run_digest_schema test validates them against
// docs/reference/schemas/run-digest.schema.json) or to a temporary folder;
// each reads back to the same text.
TEST(DigestFiles, FixtureDigestsReadBack) {
  const char* env = std::getenv("MI_DIGEST_OUT");
  const std::string dir = env != nullptr ? env : ::testing::TempDir();
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"resnet18_all",
       {"resnet18/model.onnx", "resnet18/ort_all/model.optimized.onnx",
        "resnet18/ort_all/onnxruntime_profile.json"}},
      {"transformer_basic",
       {"transformer/model.onnx", "transformer/ort_basic/model.optimized.onnx",
        "transformer/ort_basic/onnxruntime_profile.json"}},
      {"resnet18_block", {"resnet18_block/model.onnx"}},
      {"resnet18_renamed", {"resnet18_renamed/model.onnx"}},
  };
  for (const auto& [name, files] : runs) {
    RunDigest d = DigestOf(files);
    if (name == "resnet18_all") {
      // Timing fields filled in, so that the schema sees every part.
      d.runs_from = "model_run";
      d.run_count = 3;
      d.total = {"total", {300, 310, 305}, {10, 12, 11}, {40, 40, 40}};
      d.op_types = {{"Conv", {200, 205, 201}, {0, 0, 0}, {20, 20, 20}}};
      d.streams = {{"cpu", {300, 310, 305}, {0, 0, 0}, {40, 40, 40}}};
      d.unlinked_tasks = {
          {"SequentialExecutor::Execute", {5, 5, 5}, {0, 0, 0}, {1, 1, 1}}};
      d.stream_pairs = {{"cpu", "gpu:0", {10, 12, 11}}};
      DigestNode& n = d.levels[1].nodes[0];
      n.run_ns = {7, 8, 9};
      n.overlapped_ns = {0, 1, 0};
      n.streams = {"cpu"};
    }
    std::string json = RunDigestJson(d);
    StatusOr<RunDigest> back = ParseRunDigest(json, name);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(RunDigestJson(*back), json);
    std::string path = dir + "/" + name + ".midigest.json";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    std::fwrite(json.data(), 1, json.size(), f);
    std::fclose(f);
  }
}

std::string ErrorOf(std::string_view json) {
  StatusOr<RunDigest> d = ParseRunDigest(json, "x.json");
  EXPECT_FALSE(d.ok());
  return d.ok() ? "" : d.status().message();
}

TEST(DigestTest, ErrorsNameLineColumnAndWhatWasExpected) {
  EXPECT_EQ(ErrorOf("{\n  \"schema\": ]"),
            "x.json:2:13: not valid JSON; expected a run digest "
            "(model-inspector/run-digest/1)");
  RunDigest d;
  d.run_count = 1;
  d.total = {"total", {5}, {0}, {1}};
  std::string good = RunDigestJson(d);
  ASSERT_TRUE(ParseRunDigest(good, "x.json").ok());

  std::string wrong_schema = good;
  wrong_schema.replace(wrong_schema.find("run-digest/1"), 12, "run-digest/9");
  EXPECT_EQ(ErrorOf(wrong_schema),
            "x.json:1:11: schema: expected \"model-inspector/run-digest/1\", "
            "found \"model-inspector/run-digest/9\"");

  // A series one value short of run_count: the place is the array.
  std::string short_series = good;
  size_t at = short_series.find("\"run_ns\":[5]");
  short_series.replace(at, 12, "\"run_ns\":[]");
  std::string err = ErrorOf(short_series);
  // One line of JSON: the column is the array's offset + 1.
  EXPECT_EQ(err.find("x.json:1:" + std::to_string(at + 9 + 1) + ": "), 0u)
      << err;
  EXPECT_NE(err.find("timing.total.run_ns: expected 1 values"),
            std::string::npos)
      << err;

  std::string negative = good;
  negative.replace(negative.find("\"run_ns\":[5]"), 12, "\"run_ns\":[-5]");
  EXPECT_NE(ErrorOf(negative).find("timing.total.run_ns[0]: expected an "
                                   "integer >= 0"),
            std::string::npos);

  std::string unknown = good;
  unknown.replace(unknown.find("\"label\""), 7, "\"labes\"");
  EXPECT_NE(ErrorOf(unknown).find("meta: expected a field \"label\""),
            std::string::npos)
      << ErrorOf(unknown);

  EXPECT_NE(ErrorOf("[]").find("x.json:1:1: the document: expected an "
                               "object"),
            std::string::npos);
  // Deep nesting is a syntax matter, not a crash.
  std::string deep(100000, '[');
  EXPECT_FALSE(ParseRunDigest(deep, "x.json").ok());
}

}  // namespace
}  // namespace mi
