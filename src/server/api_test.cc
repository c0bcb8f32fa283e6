#include "server/api.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model_inspector/diff.h"
#include "model_inspector/history.h"
#include "model_inspector/session.h"

namespace mi::server {
namespace {

const std::string kRunDir =
    std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18/ort_all";

std::unique_ptr<Session> OpenDemo() {
  OpenOptions options;
  options.paths = {kRunDir};
  auto session = Session::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return std::move(session).value();
}

const std::vector<EmbeddedAsset>& TestAssets() {
  static const auto* const kAssets = new std::vector<EmbeddedAsset>{
      {"/assets/app.js", "text/javascript; charset=utf-8", "console.log(1)"},
      {"/index.html", "text/html; charset=utf-8", "<!doctype html>ui"},
  };
  return *kAssets;
}

std::unique_ptr<Api> MakeApi(ApiOptions options = {}) {
  std::vector<ServedRun> runs;
  runs.push_back({"ort_all", {kRunDir}, OpenDemo()});
  options.assets = &TestAssets();
  return std::make_unique<Api>(std::move(runs), std::move(options));
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
  EXPECT_EQ(r.content_type, "application/json; charset=utf-8");
  nlohmann::json j = ParseJson(r);
  ASSERT_TRUE(j.contains("error"));
  EXPECT_EQ(j["error"]["status"], status);
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
}

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { api_ = MakeApi().release(); }
  static void TearDownTestSuite() {
    delete api_;
    api_ = nullptr;
  }
  static Api* api_;
};
Api* ApiTest::api_ = nullptr;

TEST(ParseUintTest, AcceptsDigitsOnly) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseUint("0", 10, &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseUint("4294967295", UINT32_MAX, &v));
  EXPECT_FALSE(ParseUint("4294967296", UINT32_MAX, &v));
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x1", "1e3", "１",
                          "99999999999999999999999"}) {
    EXPECT_FALSE(ParseUint(bad, UINT64_MAX, &v)) << bad;
  }
}

TEST(ConstantTimeEqualsTest, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(DecodeExpandedGroupsTest, RefusesNonLayouts) {
  std::vector<uint8_t> flags;
  EXPECT_FALSE(DecodeExpandedGroups("", &flags));
  EXPECT_FALSE(DecodeExpandedGroups(std::string(64, 'x'), &flags));
  std::string truncated = "MILY" + std::string(60, '\0');
  truncated[56] = 29;  // 29 sections, but no directory
  EXPECT_FALSE(DecodeExpandedGroups(truncated, &flags));
}

TEST_F(ApiTest, RunsListsTheRun) {
  HttpResponse r = api_->Handle(Get("/api/runs"));
  ASSERT_EQ(r.status, 200);
  nlohmann::json j = ParseJson(r);
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["runs"][0]["id"], 0);
  EXPECT_EQ(j["runs"][0]["name"], "ort_all");
  EXPECT_EQ(j["runs"][0]["has_trace"], true);
  EXPECT_EQ(j["runs"][0]["levels"],
            nlohmann::json::array({"framework", "compiled"}));
  EXPECT_EQ(r.header("Cache-Control"), "no-store");
  EXPECT_EQ(r.header("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(r.header("Content-Security-Policy").find("default-src 'self'"),
            std::string_view::npos);
}

TEST_F(ApiTest, Summary) {
  HttpResponse r = api_->Handle(Get("/api/runs/0/summary"));
  ASSERT_EQ(r.status, 200);
  nlohmann::json j = ParseJson(r);
  EXPECT_TRUE(j.is_object());
  ExpectJsonError(api_->Handle(Get("/api/runs/0/summary", {{"top", "-1"}})),
                  400);
  EXPECT_EQ(api_->Handle(Get("/api/runs/0/summary", {{"top", "3"}})).status,
            200);
}

// The summary's cache is keyed by the parameters that change the result,
// normalised: `top=50` is the documented default (docs/reference/
// http-api.md), so it is the parameterless request's entry.
TEST(ApiCacheTest, SummaryCachedByNormalisedParameters) {
  auto api = MakeApi();
  HttpResponse plain = api->Handle(Get("/api/runs/0/summary"));
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(plain.header("X-Cache"), "miss");
  EXPECT_EQ(api->heavy_computations(), 1u);
  EXPECT_FALSE(api->IsHeavy(Get("/api/runs/0/summary", {{"top", "50"}})));
  HttpResponse top50 = api->Handle(Get("/api/runs/0/summary", {{"top", "50"}}));
  EXPECT_EQ(top50.header("X-Cache"), "hit");
  EXPECT_EQ(top50.content(), plain.content());
  // clock=raw is the default too.
  EXPECT_EQ(api->Handle(Get("/api/runs/0/summary", {{"clock", "raw"}}))
                .header("X-Cache"),
            "hit");
  EXPECT_EQ(api->heavy_computations(), 1u);
  // A parameter that changes the result is its own entry.
  EXPECT_TRUE(api->IsHeavy(Get("/api/runs/0/summary", {{"top", "3"}})));
  HttpResponse top3 = api->Handle(Get("/api/runs/0/summary", {{"top", "3"}}));
  EXPECT_EQ(top3.header("X-Cache"), "miss");
  EXPECT_NE(top3.content(), plain.content());
  EXPECT_EQ(
      api->Handle(Get("/api/runs/0/summary", {{"top", "3"}})).header("X-Cache"),
      "hit");
  EXPECT_EQ(api->heavy_computations(), 2u);
  // Refused parameters are answered, not cached, and not heavy.
  EXPECT_FALSE(api->IsHeavy(Get("/api/runs/0/summary", {{"top", "-1"}})));
  ExpectJsonError(api->Handle(Get("/api/runs/0/summary", {{"top", "-1"}})),
                  400);
  EXPECT_EQ(api->heavy_computations(), 2u);
  // Cheap routes are never heavy; the other heavy routes are, until cached.
  EXPECT_FALSE(api->IsHeavy(Get("/api/runs/0/timeline")));
  EXPECT_FALSE(api->IsHeavy(Get("/api/runs/0/levels/framework/nodes/0")));
  EXPECT_TRUE(api->IsHeavy(Get("/api/runs/0/critical-path")));
  EXPECT_TRUE(api->IsHeavy(Get("/api/runs/0/levels/compiled/memory")));
  EXPECT_EQ(api->Handle(Get("/api/runs/0/critical-path")).header("X-Cache"),
            "miss");
  EXPECT_FALSE(api->IsHeavy(Get("/api/runs/0/critical-path")));
  // clock=raw is the route's default: the same entry; calibrated is not.
  EXPECT_EQ(api->Handle(Get("/api/runs/0/critical-path", {{"clock", "raw"}}))
                .header("X-Cache"),
            "hit");
  EXPECT_EQ(
      api->Handle(Get("/api/runs/0/critical-path", {{"clock", "calibrated"}}))
          .header("X-Cache"),
      "miss");
}

// Identical requests that arrive together compute the result once: the
// others wait for it and get the same bytes.
TEST(ApiCacheTest, SingleFlight) {
  auto api = MakeApi();
  constexpr int kClients = 8;
  std::vector<HttpResponse> replies(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      replies[i] = api->Handle(Get("/api/runs/0/summary", {{"top", "7"}}));
    });
  }
  for (std::thread& t : clients) t.join();
  int misses = 0;
  for (const HttpResponse& r : replies) {
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.content(), replies[0].content());
    misses += r.header("X-Cache") == "miss" ? 1 : 0;
  }
  EXPECT_EQ(misses, 1);
  EXPECT_EQ(api->heavy_computations(), 1u);
}

TEST_F(ApiTest, RunAndLevelErrors) {
  ExpectJsonError(api_->Handle(Get("/api/runs/1/summary")), 404);
  ExpectJsonError(api_->Handle(Get("/api/runs/x/summary")), 400);
  ExpectJsonError(api_->Handle(Get("/api/runs/99999999999/summary")), 400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/nope/nodes/0")), 404);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/framework/nodes/x")),
                  400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/levels/framework/nodes/4000000000")), 404);
  ExpectJsonError(api_->Handle(Get("/api/nothing")), 404);
  ExpectJsonError(api_->Handle(Get("/api")), 404);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/framework")), 404);
}

TEST_F(ApiTest, LayoutAppliesStateRelativeToTheDefault) {
  const std::string path = "/api/runs/0/levels/framework/layout";
  HttpResponse def = api_->Handle(Get(path));
  ASSERT_EQ(def.status, 200);
  EXPECT_EQ(def.content_type, "application/octet-stream");
  ASSERT_GE(def.content().size(), 64u);
  EXPECT_EQ(def.content().substr(0, 4), "MILY");
  std::vector<uint8_t> flags;
  ASSERT_TRUE(DecodeExpandedGroups(def.content(), &flags));
  ASSERT_GT(flags.size(), 2u);
  // Toggle a group that the drawing shows (groups of one node stand for
  // that node and never change), then go back to the default.
  bool toggled_one = false;
  for (uint32_t g = 1; g < flags.size() && !toggled_one; ++g) {
    std::string key = flags[g] ? "collapse" : "expand";
    HttpResponse toggled = api_->Handle(Get(path, {{key, std::to_string(g)}}));
    ASSERT_EQ(toggled.status, 200);
    std::vector<uint8_t> toggled_flags;
    ASSERT_TRUE(DecodeExpandedGroups(toggled.content(), &toggled_flags));
    if (toggled_flags[g] == flags[g]) continue;
    toggled_one = true;
    EXPECT_TRUE(toggled.content() != def.content());
  }
  EXPECT_TRUE(toggled_one);
  HttpResponse again = api_->Handle(Get(path));
  EXPECT_TRUE(again.content() == def.content());
  // Errors.
  ExpectJsonError(api_->Handle(Get(path, {{"expand", "1,x"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"expand", "999999"}})), 404);
  ExpectJsonError(api_->Handle(Get(path, {{"collapse", "0"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"grouping", "bogus"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"direction", "up"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"max_items", "-5"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"max_items", "99999999"}})), 400);
  // Variants.
  HttpResponse lr = api_->Handle(Get(path, {{"direction", "lr"}}));
  ASSERT_EQ(lr.status, 200);
  EXPECT_EQ(lr.content()[12], 1);  // direction: left to right
  EXPECT_EQ(api_->Handle(Get(path, {{"grouping", "fusion"}})).status, 200);
  EXPECT_EQ(api_->Handle(Get("/api/runs/0/levels/compiled/layout",
                             {{"grouping", "none"}, {"max_items", "0"}}))
                .status,
            200);
}

// The first screen: fold=overview folds the framework graph's top-level
// groups; direction=auto picks the direction that fits the window.
TEST_F(ApiTest, LayoutOverviewAndAutomaticDirection) {
  const std::string path = "/api/runs/0/levels/framework/layout";
  auto u32 = [](const HttpResponse& r, size_t off) {
    uint32_t v = 0;
    std::memcpy(&v, r.content().data() + off, 4);
    return v;
  };
  auto f32 = [](const HttpResponse& r, size_t off) {
    float v = 0;
    std::memcpy(&v, r.content().data() + off, 4);
    return v;
  };
  HttpResponse budget = api_->Handle(Get(path, {{"direction", "tb"}}));
  HttpResponse overview =
      api_->Handle(Get(path, {{"direction", "tb"}, {"fold", "overview"}}));
  ASSERT_EQ(budget.status, 200);
  ASSERT_EQ(overview.status, 200);
  // ResNet-18 framework: 49 ops + input + output, all shown within the
  // 2,000-item budget; the overview shows the stem (conv1, bn/relu fused by
  // the export: Conv, Relu, MaxPool), layer1..layer4 folded, the head
  // (GlobalAveragePool, Flatten, Gemm), input and output: 12 items.
  EXPECT_EQ(u32(budget, 28), 51u);
  EXPECT_EQ(u32(overview, 28), 12u);
  EXPECT_EQ(u32(overview, 40), 0u);  // no frame: nothing unfolded
  // The drawing is tall and narrow top to bottom: a wide window gets left
  // to right, a tall one keeps top to bottom.
  float w = f32(overview, 16), h = f32(overview, 20);
  ASSERT_GT(h, 4 * w);
  HttpResponse wide = api_->Handle(Get(
      path, {{"direction", "auto"}, {"aspect", "1.8"}, {"fold", "overview"}}));
  ASSERT_EQ(wide.status, 200);
  EXPECT_EQ(u32(wide, 12), 1u);
  HttpResponse tall =
      api_->Handle(Get(path, {{"direction", "auto"}, {"aspect", "0.02"}}));
  EXPECT_EQ(tall.status, 400);  // out of range
  HttpResponse narrow = api_->Handle(Get(
      path, {{"direction", "auto"}, {"aspect", "0.05"}, {"fold", "overview"}}));
  ASSERT_EQ(narrow.status, 200);
  EXPECT_EQ(u32(narrow, 12), 0u);
  ExpectJsonError(api_->Handle(Get(path, {{"fold", "tight"}})), 400);
  ExpectJsonError(
      api_->Handle(Get(path, {{"direction", "auto"}, {"aspect", "x"}})), 400);
}

TEST_F(ApiTest, LayoutViewsAreEvicted) {
  ApiOptions options;
  options.max_layout_views = 2;
  auto api = MakeApi(options);
  for (int i = 0; i < 5; ++i) {
    HttpResponse r = api->Handle(Get("/api/runs/0/levels/framework/layout",
                                     {{"max_items", std::to_string(10 + i)}}));
    EXPECT_EQ(r.status, 200);
  }
}

uint32_t FirstMatch(Api* api, const std::string& level, const std::string& q,
                    const std::string& mode) {
  HttpResponse r = api->Handle(Get("/api/runs/0/levels/" + level + "/search",
                                   {{"q", q}, {"mode", mode}}));
  EXPECT_EQ(r.status, 200) << r.content();
  nlohmann::json j = ParseJson(r);
  EXPECT_GT(j["total"].get<int>(), 0) << q;
  if (j["matches"].empty()) return UINT32_MAX;
  return j["matches"][0]["id"].get<uint32_t>();
}

TEST_F(ApiTest, MemoryOfEachLevel) {
  // The compiled level ran (ORT profile): ordered by the trace, compared
  // with ORT's per-node sizes and arena peak.
  HttpResponse c = api_->Handle(Get("/api/runs/0/levels/compiled/memory"));
  ASSERT_EQ(c.status, 200) << c.content();
  nlohmann::json j = ParseJson(c);
  EXPECT_EQ(j["level"], "compiled");
  EXPECT_EQ(j["order"], "trace");
  EXPECT_GT(j["peak"]["activation_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(j["weights"]["bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["nodes"].size(), j["node_count"].get<size_t>());
  ASSERT_TRUE(j["allocator"].is_object());
  EXPECT_EQ(j["allocator"]["source"], "onnxruntime");
  EXPECT_GT(j["allocator"]["nodes"]["compared"].get<int>(), 0);
  // The framework level did not run itself (its nodes are fused into
  // compiled ones): ordered by the compiled nodes' tasks.
  HttpResponse f = api_->Handle(Get("/api/runs/0/levels/framework/memory"));
  ASSERT_EQ(f.status, 200) << f.content();
  EXPECT_FALSE(ParseJson(f)["scopes"].empty());
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/nope/memory")), 404);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/compiled/memory/x")),
                  404);
}

TEST_F(ApiTest, CriticalPathAndIdleOverlap) {
  HttpResponse r =
      api_->Handle(Get("/api/runs/0/critical-path", {{"clock", "calibrated"}}));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["clock"], "calibrated");
  ASSERT_FALSE(j["tasks"].empty());
  EXPECT_EQ(j["steps"].size(), j["tasks"].size());
  EXPECT_FALSE(j["nodes"].empty());
  // One ORT thread runs every node: the path spans the run, and its time
  // per track and per op type each add up to the time its tasks ran.
  EXPECT_EQ(j["length_ns"], j["wall_ns"]);
  EXPECT_DOUBLE_EQ(j["share"].get<double>(), 1.0);
  int64_t by_track = 0, by_op = 0;
  for (const auto& t : j["by_track"]) by_track += t["ns"].get<int64_t>();
  for (const auto& o : j["by_op_type"]) by_op += o["ns"].get<int64_t>();
  EXPECT_EQ(by_track, j["busy_ns"].get<int64_t>());
  EXPECT_EQ(by_op, j["busy_ns"].get<int64_t>());
  EXPECT_GT(j["graph"]["edges_by_kind"]["data"].get<int>(), 0);
  EXPECT_EQ(api_->Handle(Get("/api/runs/0/critical-path",
                             {{"iteration", "0"}, {"clock", "raw"}}))
                .status,
            200);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/critical-path", {{"iteration", "99"}})),
      400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/critical-path", {{"clock", "tsc"}})), 400);

  HttpResponse idle = api_->Handle(
      Get("/api/runs/0/idle-overlap", {{"gap_threshold_ns", "1000"}}));
  ASSERT_EQ(idle.status, 200) << idle.content();
  nlohmann::json i = ParseJson(idle);
  ASSERT_FALSE(i["streams"].empty());
  const auto& s = i["streams"][0];
  EXPECT_EQ(s["busy_ns"].get<int64_t>() + s["idle_ns"].get<int64_t>(),
            s["end_ns"].get<int64_t>() - s["start_ns"].get<int64_t>());
  for (const auto& g : i["gaps"]) {
    EXPECT_GE(g["duration_ns"].get<int64_t>(), 1000);
  }
  ExpectJsonError(api_->Handle(Get("/api/runs/0/idle-overlap",
                                   {{"gap_threshold_ns", "-1"}})),
                  400);

  HttpResponse all = api_->Handle(Get("/api/runs/0/analyses"));
  ASSERT_EQ(all.status, 200) << all.content();
  nlohmann::json a = ParseJson(all);
  EXPECT_TRUE(a["calibration"]["computed"].get<bool>());
  EXPECT_EQ(a["calibration"]["residual_violations"]["count"], 0);
  EXPECT_TRUE(a.contains("critical_path"));
  EXPECT_TRUE(a.contains("idle_overlap"));
}

TEST_F(ApiTest, AnalysesCarryFindingsSequencesAndBlocks) {
  HttpResponse r = api_->Handle(Get("/api/runs/0/analyses"));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json a = ParseJson(r);
  ASSERT_TRUE(a["findings"].is_array());
  // resnet18 ort_all: ONNX Runtime's NCHWc reorders are layout conversions.
  std::set<std::string> rules;
  for (const auto& f : a["findings"]) {
    rules.insert(f["rule"].get<std::string>());
    EXPECT_FALSE(f["message"].get<std::string>().empty());
    EXPECT_FALSE(f["suggestion"].get<std::string>().empty());
  }
  EXPECT_TRUE(rules.count("layout_conversion_share")) << a["findings"];
  // The three inference runs repeat one kernel sequence on one thread.
  ASSERT_FALSE(a["sequences"].empty());
  for (const auto& s : a["sequences"]) {
    EXPECT_GE(s["count"].get<int>(), 2);
    EXPECT_EQ(s["symbols"].size(), s["length"].get<size_t>());
  }
  // ResNet-18's residual blocks: families of equal structure.
  ASSERT_FALSE(a["blocks"].empty());
  for (const auto& b : a["blocks"]) {
    EXPECT_GE(b["instances"].size(), 2u);
    int64_t sum = 0;
    for (const auto& i : b["instances"]) sum += i["total_ns"].get<int64_t>();
    EXPECT_EQ(sum, b["total_ns"].get<int64_t>());
  }
}

// Any registered analysis by id; parameters from the query, the access
// token aside; errors name what was wrong.
TEST_F(ApiTest, RegisteredAnalysesById) {
  HttpResponse list = api_->Handle(Get("/api/runs/0/analysis-list"));
  ASSERT_EQ(list.status, 200) << list.content();
  nlohmann::json l = ParseJson(list);
  std::set<std::string> ids;
  for (const auto& a : l["analyses"]) {
    ids.insert(a["id"].get<std::string>());
    // The ORT run has a trace and both graph levels: everything applies
    // but what needs a training snapshot.
    bool needs_training = false;
    for (const auto& need : a["needs"]) needs_training |= need == "training";
    EXPECT_EQ(a["applies"].get<bool>(), !needs_training) << a["id"];
  }
  EXPECT_TRUE(ids.count("critical_path") && ids.count("memory"));

  // The same document as the typed route.
  HttpResponse by_id = api_->Handle(
      Get("/api/runs/0/analyses/idle_overlap",
          {{"gap_threshold_ns", "1000"}, {"clock", "raw"}, {"token", "x"}}));
  ASSERT_EQ(by_id.status, 200) << by_id.content();
  HttpResponse typed = api_->Handle(
      Get("/api/runs/0/idle-overlap", {{"gap_threshold_ns", "1000"}}));  // raw
  EXPECT_EQ(ParseJson(by_id), ParseJson(typed));

  HttpResponse memory = api_->Handle(
      Get("/api/runs/0/analyses/memory", {{"level", "framework"}}));
  ASSERT_EQ(memory.status, 200) << memory.content();
  EXPECT_EQ(
      ParseJson(memory),
      ParseJson(api_->Handle(Get("/api/runs/0/levels/framework/memory"))));

  HttpResponse unknown = api_->Handle(Get("/api/runs/0/analyses/nope"));
  ExpectJsonError(unknown, 404);
  HttpResponse bad = api_->Handle(
      Get("/api/runs/0/analyses/idle_overlap", {{"gap_threshold_ns", "x"}}));
  ExpectJsonError(bad, 400);
  EXPECT_NE(bad.content().find("parameter 'gap_threshold_ns'"),
            std::string::npos);
  HttpResponse twice = api_->Handle(Get("/api/runs/0/analyses/critical_path",
                                        {{"clock", "raw"}, {"clock", "raw"}}));
  ExpectJsonError(twice, 400);
  EXPECT_NE(twice.content().find("'clock' is given twice"), std::string::npos);
}

TEST_F(ApiTest, NodePaths) {
  for (const std::string level : {"framework", "compiled"}) {
    uint32_t conv = FirstMatch(api_, level, "conv", "op");
    HttpResponse r =
        api_->Handle(Get("/api/runs/0/levels/" + level + "/nodes/" +
                         std::to_string(conv) + "/paths"));
    ASSERT_EQ(r.status, 200) << r.content();
    nlohmann::json j = ParseJson(r);
    EXPECT_EQ(j["node"], conv);
    // A convolution of resnet18 leads to the output: it has descendants,
    // and they ran (framework nodes through the compiled nodes).
    EXPECT_FALSE(j["descendants"].empty()) << level;
    EXPECT_FALSE(j["descendant_tasks"].empty()) << level;
    EXPECT_FALSE(j["node_tasks"].empty()) << level;
    std::set<uint32_t> up, down;
    for (const auto& n : j["ancestors"]) up.insert(n.get<uint32_t>());
    for (const auto& n : j["descendants"]) down.insert(n.get<uint32_t>());
    EXPECT_EQ(up.count(conv) + down.count(conv), 0u);
    for (uint32_t n : up) EXPECT_EQ(down.count(n), 0u) << "cycle at " << n;
  }
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/levels/framework/nodes/x/paths")), 400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/levels/framework/nodes/4000000000/paths")),
      404);
}

TEST_F(ApiTest, NodeDetailsOfAConv) {
  uint32_t conv = FirstMatch(api_, "framework", "conv", "op");
  HttpResponse r = api_->Handle(
      Get("/api/runs/0/levels/framework/nodes/" + std::to_string(conv)));
  ASSERT_EQ(r.status, 200);
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["id"], conv);
  EXPECT_EQ(j["op_type"], "Conv");
  EXPECT_FALSE(j["attributes"].empty());
  ASSERT_FALSE(j["inputs"].empty());
  EXPECT_EQ(j["inputs"][0]["dtype"], "float32");
  EXPECT_TRUE(j["inputs"][0]["shape"].is_array());
  EXPECT_TRUE(j["outputs"][0].contains("consumers"));
  EXPECT_TRUE(j["fused_from"].is_array());
  EXPECT_TRUE(j.contains("fused_into"));
  EXPECT_TRUE(j["tasks"].is_array());
  // The framework Conv is fused into a compiled node that ran.
  EXPECT_EQ(j["status"], "fused");
  ASSERT_TRUE(j["fused_into"].is_object());
  uint32_t compiled = j["fused_into"]["id"];
  HttpResponse c = api_->Handle(
      Get("/api/runs/0/levels/compiled/nodes/" + std::to_string(compiled)));
  ASSERT_EQ(c.status, 200);
  nlohmann::json cj = ParseJson(c);
  EXPECT_FALSE(cj["fused_from"].empty());
  EXPECT_GT(cj["task_count"].get<int>(), 0);
  EXPECT_FALSE(cj["tasks"].empty());
  // A framework node is not on the compiled level.
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/compiled/nodes/" +
                                   std::to_string(conv))),
                  404);
}

// One typed section of a layout binary (docs/reference/layout-binary.md),
// as raw little-endian elements; empty when absent.
struct RawSection {
  uint32_t type = 0;
  std::string_view bytes;
  uint32_t count = 0;
};
uint32_t LoadU32(std::string_view b, size_t off) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(b[off + i]);
  return v;
}
RawSection FindSection(std::string_view b, uint32_t id) {
  uint32_t n = LoadU32(b, 56);
  for (uint32_t k = 0; k < n; ++k) {
    size_t e = 64 + 16 * static_cast<size_t>(k);
    if (LoadU32(b, e) != id) continue;
    uint32_t type = LoadU32(b, e + 4), offset = LoadU32(b, e + 8),
             count = LoadU32(b, e + 12);
    size_t size = (type == 1 ? 1 : 4) * static_cast<size_t>(count);
    return {type, b.substr(offset, size), count};
  }
  return {};
}
std::vector<uint32_t> U32Section(std::string_view b, uint32_t id) {
  RawSection s = FindSection(b, id);
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < s.count; ++i) out.push_back(LoadU32(s.bytes, 4 * i));
  return out;
}
std::vector<float> F32Section(std::string_view b, uint32_t id) {
  std::vector<float> out;
  for (uint32_t bits : U32Section(b, id)) {
    float f;
    std::memcpy(&f, &bits, 4);
    out.push_back(f);
  }
  return out;
}
std::vector<uint8_t> U8Section(std::string_view b, uint32_t id) {
  RawSection s = FindSection(b, id);
  return std::vector<uint8_t>(s.bytes.begin(), s.bytes.end());
}
constexpr uint32_t kItemKind = 2, kItemModelId = 4, kNodeItem = 26,
                   kNodeModelId = 27, kNodeStatus = 31, kNodeTimeUs = 32,
                   kNodeTaskCount = 33;

TEST_F(ApiTest, RevealExpandsTheGroupsAboveANode) {
  const std::string path = "/api/runs/0/levels/framework/layout";
  // A node deep in layer4, folded away in a small view.
  uint32_t node =
      FirstMatch(api_, "framework", "/layer4/layer4.0/conv2", "text");
  std::vector<std::pair<std::string, std::string>> small = {{"max_items", "6"}};
  HttpResponse before = api_->Handle(Get(path, small));
  ASSERT_EQ(before.status, 200);
  auto item_of = [&](std::string_view b) {
    std::vector<uint32_t> ids = U32Section(b, kNodeModelId);
    std::vector<uint32_t> items = U32Section(b, kNodeItem);
    for (size_t v = 0; v < ids.size(); ++v) {
      if (ids[v] == node && U8Section(b, kItemKind)[items[v]] == 0) {
        return items[v];
      }
    }
    for (size_t v = 0; v < ids.size(); ++v) {
      if (ids[v] == node) return items[v];
    }
    return UINT32_MAX;
  };
  uint32_t folded = item_of(before.content());
  ASSERT_NE(folded, UINT32_MAX);
  EXPECT_EQ(U8Section(before.content(), kItemKind)[folded], 3);  // a group
  auto with_reveal = small;
  with_reveal.emplace_back("reveal", std::to_string(node));
  HttpResponse after = api_->Handle(Get(path, with_reveal));
  ASSERT_EQ(after.status, 200) << after.content();
  uint32_t shown = item_of(after.content());
  ASSERT_NE(shown, UINT32_MAX);
  EXPECT_EQ(U8Section(after.content(), kItemKind)[shown], 0);  // the node
  EXPECT_EQ(U32Section(after.content(), kItemModelId)[shown], node);
  // The client reads its new state back from group_flags: sending those
  // groups as `expand` gives the same drawing without `reveal`.
  std::vector<uint8_t> def_flags, flags;
  ASSERT_TRUE(DecodeExpandedGroups(before.content(), &def_flags));
  ASSERT_TRUE(DecodeExpandedGroups(after.content(), &flags));
  std::string expand;
  for (size_t g = 1; g < flags.size(); ++g) {
    if (flags[g] && !def_flags[g]) {
      expand += (expand.empty() ? "" : ",") + std::to_string(g);
    }
  }
  EXPECT_FALSE(expand.empty());
  auto with_expand = small;
  with_expand.emplace_back("expand", expand);
  EXPECT_TRUE(api_->Handle(Get(path, with_expand)).content() ==
              after.content());
  // Stateless: the same URLs give the same bytes again.
  EXPECT_TRUE(api_->Handle(Get(path, small)).content() == before.content());
  EXPECT_TRUE(api_->Handle(Get(path, with_reveal)).content() ==
              after.content());
  // Errors: not a number, a node of another level, no such node.
  auto bad = small;
  bad.emplace_back("reveal", "x");
  ExpectJsonError(api_->Handle(Get(path, bad)), 400);
  uint32_t compiled = FirstMatch(api_, "compiled", "ReorderOutput", "op");
  bad.back().second = std::to_string(compiled);
  ExpectJsonError(api_->Handle(Get(path, bad)), 404);
  bad.back().second = "4000000000";
  ExpectJsonError(api_->Handle(Get(path, bad)), 404);
  // A failed reveal leaves the view consistent with the next request.
  EXPECT_TRUE(api_->Handle(Get(path, small)).content() == before.content());
}

TEST_F(ApiTest, LayoutCarriesNodeStatusAndTimes) {
  HttpResponse r = api_->Handle(
      Get("/api/runs/0/levels/compiled/layout", {{"max_items", "0"}}));
  ASSERT_EQ(r.status, 200);
  std::string_view b = r.content();
  std::vector<uint32_t> ids = U32Section(b, kNodeModelId);
  std::vector<uint8_t> status = U8Section(b, kNodeStatus);
  std::vector<float> time = F32Section(b, kNodeTimeUs);
  std::vector<uint32_t> tasks = U32Section(b, kNodeTaskCount);
  ASSERT_EQ(status.size(), ids.size());
  ASSERT_EQ(time.size(), ids.size());
  ASSERT_EQ(tasks.size(), ids.size());
  EXPECT_EQ(FindSection(b, kNodeStatus).type, 1u);
  EXPECT_EQ(FindSection(b, kNodeTimeUs).type, 4u);
  EXPECT_EQ(FindSection(b, kNodeTaskCount).type, 3u);
  std::vector<uint8_t> kinds = U8Section(b, kItemKind);
  std::vector<uint32_t> items = U32Section(b, kNodeItem);
  int executed = 0, inserted = 0, checked = 0;
  for (size_t v = 0; v < ids.size(); ++v) {
    bool is_node = kinds[items[v]] == 0;
    if (!is_node) {
      // Graph inputs and outputs: no information.
      EXPECT_EQ(status[v], 0);
      EXPECT_EQ(time[v], -1.0f);
      EXPECT_EQ(tasks[v], 0u);
      continue;
    }
    executed += status[v] == 1;
    inserted += status[v] == 4;
    EXPECT_EQ(tasks[v] == 0, time[v] < 0) << v;
    if (checked < 3 && tasks[v] > 0) {
      // The same figures as the node details.
      nlohmann::json j = ParseJson(api_->Handle(
          Get("/api/runs/0/levels/compiled/nodes/" + std::to_string(ids[v]))));
      EXPECT_EQ(j["task_count"].get<uint32_t>(), tasks[v]);
      EXPECT_FLOAT_EQ(time[v], j["task_total_ns"].get<float>() / 1e3f);
      ++checked;
    }
  }
  EXPECT_GT(executed, 0);
  EXPECT_GT(inserted, 0);  // ReorderOutput nodes ORT added
  EXPECT_EQ(checked, 3);
}

TEST_F(ApiTest, NodeDetailsCarryOnnxOperatorDocs) {
  uint32_t conv = FirstMatch(api_, "framework", "conv", "op");
  nlohmann::json j = ParseJson(api_->Handle(
      Get("/api/runs/0/levels/framework/nodes/" + std::to_string(conv))));
  ASSERT_TRUE(j["doc"].is_object()) << j.dump();
  EXPECT_EQ(j["doc"]["domain"], "");
  EXPECT_GE(j["doc"]["since_version"].get<int>(), 1);
  std::string summary = j["doc"]["summary"];
  EXPECT_EQ(summary.rfind("The convolution operator", 0), 0u) << summary;
  EXPECT_LE(summary.size(), 1503u);
  EXPECT_EQ(summary.find('\n'), std::string::npos);
  // ORT's own ops (com.microsoft.nchwc) are not in ONNX's registry.
  uint32_t reorder = FirstMatch(api_, "compiled", "ReorderOutput", "op");
  nlohmann::json r = ParseJson(api_->Handle(
      Get("/api/runs/0/levels/compiled/nodes/" + std::to_string(reorder))));
  EXPECT_TRUE(r.contains("doc"));
  EXPECT_TRUE(r["doc"].is_null());
}

TEST_F(ApiTest, ModelExplorerExport) {
  const std::string base = "/api/runs/0/levels/compiled/export/";
  HttpResponse g = api_->Handle(Get(base + "model-explorer-graph"));
  ASSERT_EQ(g.status, 200);
  EXPECT_EQ(g.content_type, "application/json; charset=utf-8");
  EXPECT_NE(g.header("Content-Disposition").find("attachment"),
            std::string::npos);
  nlohmann::json graph = ParseJson(g);
  ASSERT_TRUE(graph["label"].is_string());
  ASSERT_EQ(graph["graphs"].size(), 1u);
  const nlohmann::json& gr = graph["graphs"][0];
  std::set<std::string> ids;
  for (const auto& n : gr["nodes"]) {
    EXPECT_TRUE(ids.insert(n["id"].get<std::string>()).second) << n["id"];
    EXPECT_TRUE(n["label"].is_string());
    EXPECT_TRUE(n["namespace"].is_string());
  }
  for (const auto& n : gr["nodes"]) {
    for (const auto& e : n["incomingEdges"]) {
      EXPECT_TRUE(ids.count(e["sourceNodeId"].get<std::string>())) << e.dump();
      EXPECT_TRUE(e["sourceNodeOutputId"].is_string());
      EXPECT_TRUE(e["targetNodeInputId"].is_string());
    }
  }
  HttpResponse d = api_->Handle(Get(base + "model-explorer-node-data"));
  ASSERT_EQ(d.status, 200);
  nlohmann::json data = ParseJson(d);
  ASSERT_TRUE(data.contains(gr["id"].get<std::string>()));
  const nlohmann::json& results = data[gr["id"].get<std::string>()]["results"];
  EXPECT_FALSE(results.empty());
  for (const auto& [id, value] : results.items()) {
    EXPECT_TRUE(ids.count(id)) << id;
    EXPECT_GT(value["value"].get<double>(), 0);
  }
  // The framework level too; unknown exports and levels are 404.
  EXPECT_EQ(api_->Handle(Get("/api/runs/0/levels/framework/export/"
                             "model-explorer-graph"))
                .status,
            200);
  ExpectJsonError(api_->Handle(Get(base + "netron")), 404);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/ge/export/"
                                   "model-explorer-graph")),
                  404);
}

TEST_F(ApiTest, SearchModes) {
  const std::string path = "/api/runs/0/levels/framework/search";
  auto total = [&](std::string q, std::string mode) {
    HttpResponse r = api_->Handle(Get(path, {{"q", q}, {"mode", mode}}));
    EXPECT_EQ(r.status, 200) << r.content();
    return ParseJson(r)["total"].get<int>();
  };
  int convs = total("Conv", "op");
  EXPECT_EQ(convs, 20);  // resnet18
  EXPECT_EQ(total("conv", "op"), convs);
  EXPECT_GE(total("CONV", "text"), convs);
  // Globs match a trailing run of whole segments of a node's path or of its
  // scope's path; a leading '/' anchors at the root. Counts from the 49
  // framework nodes of ResNet-18: the stem "/conv1/Conv", "/relu/Relu",
  // "/maxpool/MaxPool"; per block "layerL/layerL.B/{conv1/Conv, relu/Relu,
  // conv2/Conv, Add, relu_1/Relu}" (L = 1..4, B = 0, 1) plus
  // "downsample/downsample.0/Conv" in layer2.0, layer3.0 and layer4.0;
  // "/avgpool/GlobalAveragePool", "/Flatten", "/fc/Gemm".
  // layer1's two blocks, scopes ".../conv1" and ".../conv2" each:
  EXPECT_EQ(total("layer1/*/conv*", "glob"), 4);
  EXPECT_EQ(total("layer1/**/conv*", "glob"), 4);
  EXPECT_EQ(total("/layer1/*/conv1/Conv", "glob"), 2);
  EXPECT_EQ(total("layer1/*/conv1/Conv", "glob"), 2);
  EXPECT_EQ(total("layer1/*/Conv", "glob"), 0);  // '*' stays in a segment
  EXPECT_EQ(total("layer?/*/conv1/Conv", "glob"), 8);
  EXPECT_EQ(total("conv[12]/Conv$", "regex"), 17);
  // The stem conv and the 16 conv1 / conv2 of the blocks:
  EXPECT_EQ(total("**/conv?/Conv", "glob"), 17);  // '**/' may match nothing
  EXPECT_EQ(total("**conv?/Conv", "glob"), 17);
  // Three segments: the 16 of the blocks, not the stem's two.
  EXPECT_EQ(total("*/conv?/Conv", "glob"), 16);
  // "conv1/Conv" ends the stem conv and the 8 blocks' conv1; anchored,
  // only the stem's.
  EXPECT_EQ(total("conv1/conv", "glob"), 9);
  EXPECT_EQ(total("/conv1/conv", "glob"), 1);
  EXPECT_EQ(total("conv*", "glob"), convs);  // every Conv node's last segment
  EXPECT_EQ(total("relu*", "glob"), 17);     // stem relu + 2 per block
  EXPECT_EQ(total("downsample/*", "glob"), 3);
  // Directly in layer2.0: conv1, relu, conv2, relu_1 (scopes) and Add.
  EXPECT_EQ(total("layer2.0/*", "glob"), 5);
  EXPECT_EQ(total("flatten", "glob"), 1);  // no scope: its name
  EXPECT_EQ(total("**", "glob"), 49);
  // "auto" reads a query with '*' or '?' as a glob, else as a substring,
  // and says so.
  auto answer = [&](std::string q, std::string mode) {
    return ParseJson(api_->Handle(Get(path, {{"q", q}, {"mode", mode}})));
  };
  nlohmann::json glob = answer("layer1/*/conv*", "auto");
  EXPECT_EQ(glob["total"], 4);
  EXPECT_EQ(glob["mode"], "glob");
  EXPECT_NE(glob["read_as"].get<std::string>().find("scope-path suffixes"),
            std::string::npos)
      << glob["read_as"];
  nlohmann::json text = answer("conv1", "auto");
  EXPECT_EQ(text["total"], 9);  // "/conv1/Conv" and 8 blocks' conv1
  EXPECT_EQ(text["mode"], "text");
  EXPECT_NE(text["read_as"].get<std::string>().find("substring"),
            std::string::npos)
      << text["read_as"];
  EXPECT_NE(answer("/layer1/*", "glob")["read_as"].get<std::string>().find(
                "anchored"),
            std::string::npos);
  EXPECT_EQ(answer("x(", "regex").contains("read_as"), false);
  EXPECT_EQ(answer("Conv", "op")["mode"], "op");
  EXPECT_GT(total("kernel_shape", "attr"), 0);
  EXPECT_EQ(total("group=1", "attr"), convs);
  HttpResponse limited =
      api_->Handle(Get(path, {{"q", "Conv"}, {"mode", "op"}, {"limit", "3"}}));
  nlohmann::json j = ParseJson(limited);
  EXPECT_EQ(j["matches"].size(), 3u);
  EXPECT_EQ(j["total"], convs);
  EXPECT_EQ(j["truncated"], true);
  ExpectJsonError(api_->Handle(Get(path, {{"q", "(("}, {"mode", "regex"}})),
                  400);
  ExpectJsonError(api_->Handle(Get(path, {{"q", "(a)\\1"}, {"mode", "regex"}})),
                  400);
  ExpectJsonError(api_->Handle(Get(path, {{"q", "x"}, {"mode", "sql"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"mode", "text"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"q", "x"}, {"limit", "0"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"q", std::string(600, 'a')}})), 400);
  // Catastrophic-backtracking patterns stay fast (polynomial matching).
  EXPECT_EQ(
      api_->Handle(Get(path, {{"q", "(a*)*b"}, {"mode", "regex"}})).status,
      200);
}

TEST_F(ApiTest, TimelineTracksAndWindow) {
  nlohmann::json t = ParseJson(api_->Handle(Get("/api/runs/0/timeline")));
  EXPECT_EQ(t["clock"], "raw");
  ASSERT_FALSE(t["tracks"].empty());
  EXPECT_GT(t["task_count"].get<int>(), 100);
  EXPECT_LT(t["start_ns"].get<int64_t>(), t["end_ns"].get<int64_t>());
  EXPECT_FALSE(t["runs"].empty());
  EXPECT_NE(std::find(t["op_types"].begin(), t["op_types"].end(), "Conv"),
            t["op_types"].end());
  std::string start = std::to_string(t["start_ns"].get<int64_t>());
  std::string end = std::to_string(t["end_ns"].get<int64_t>());
  const std::string path = "/api/runs/0/timeline/window";
  HttpResponse j = api_->Handle(
      Get(path, {{"start_ns", start}, {"end_ns", end}, {"format", "json"}}));
  ASSERT_EQ(j.status, 200) << j.content();
  nlohmann::json w = ParseJson(j);
  EXPECT_EQ(w["total_tasks_in_window"], t["task_count"]);
  HttpResponse b =
      api_->Handle(Get(path, {{"start_ns", start}, {"end_ns", end}}));
  ASSERT_EQ(b.status, 200);
  EXPECT_EQ(b.content_type, "application/octet-stream");
  EXPECT_EQ(b.content().substr(0, 4), "MITW");
  // Filters: only Conv, only annotations.
  nlohmann::json conv =
      ParseJson(api_->Handle(Get(path, {{"start_ns", start},
                                        {"end_ns", end},
                                        {"px", "20000"},
                                        {"op", "Conv,Gemm"},
                                        {"format", "json"}})));
  ASSERT_FALSE(conv["items"].empty());
  for (const auto& item : conv["items"]) {
    EXPECT_TRUE(item["label"] == "Conv" || item["label"] == "Gemm");
  }
  nlohmann::json ann = ParseJson(api_->Handle(Get(path, {{"start_ns", start},
                                                         {"end_ns", end},
                                                         {"kind", "annotation"},
                                                         {"format", "json"}})));
  for (const auto& item : ann["items"]) EXPECT_EQ(item["kind"], "annotation");
  EXPECT_LT(ann["total_tasks_in_window"], w["total_tasks_in_window"]);
}

TEST_F(ApiTest, TimelineParameterErrors) {
  const std::string path = "/api/runs/0/timeline/window";
  using Params = std::vector<std::pair<std::string, std::string>>;
  for (const Params& bad : std::vector<Params>{
           {},                                     // no window
           {{"start_ns", "0"}},                    // no end
           {{"start_ns", "x"}, {"end_ns", "10"}},  // not a number
           {{"start_ns", "1.5"}, {"end_ns", "10"}},
           {{"start_ns", "10"}, {"end_ns", "10"}},  // empty window
           {{"start_ns", "20"}, {"end_ns", "10"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"px", "0"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"px", "20001"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"px", "-5"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"clock", "utc"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"kind", "kernel"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"tracks", "a"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"tracks", "999"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"format", "xml"}},
           {{"start_ns", "99999999999999999999"}, {"end_ns", "10"}}}) {
    ExpectJsonError(api_->Handle(Get(path, bad)), 400);
  }
  EXPECT_EQ(api_->Handle(Get(path, {{"start_ns", "-100"},
                                    {"end_ns", "10"},
                                    {"px", "1"},
                                    {"clock", "calibrated"}}))
                .status,
            200);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/timeline", {{"clock", "x"}})),
                  400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/timeline/x")), 404);
}

// The counters of a window share the window's parameter checks; the demo
// run's ORT profile has no memory events: an empty list, not an error.
TEST_F(ApiTest, TimelineCountersOfAWindow) {
  const std::string path = "/api/runs/0/timeline/counters";
  using Params = std::vector<std::pair<std::string, std::string>>;
  for (const Params& bad : std::vector<Params>{
           {},
           {{"start_ns", "0"}},
           {{"start_ns", "x"}, {"end_ns", "10"}},
           {{"start_ns", "10"}, {"end_ns", "10"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"px", "0"}},
           {{"start_ns", "0"}, {"end_ns", "10"}, {"px", "20001"}}}) {
    ExpectJsonError(api_->Handle(Get(path, bad)), 400);
  }
  HttpResponse r = api_->Handle(
      Get(path, {{"start_ns", "0"}, {"end_ns", "10"}, {"px", "5"}}));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["start_ns"], 0);
  EXPECT_EQ(j["end_ns"], 10);
  EXPECT_TRUE(j["counters"].is_array());
}

TEST_F(ApiTest, TaskDetailsAndNodeTasks) {
  uint32_t conv = FirstMatch(api_, "compiled", "conv", "op");
  nlohmann::json nt = ParseJson(
      api_->Handle(Get("/api/runs/0/tasks", {{"node", std::to_string(conv)}})));
  ASSERT_FALSE(nt["tasks"].empty());
  uint32_t task = nt["tasks"][0].get<uint32_t>();
  nlohmann::json d =
      ParseJson(api_->Handle(Get("/api/runs/0/tasks/" + std::to_string(task))));
  EXPECT_EQ(d["id"], task);
  EXPECT_EQ(d["node"]["id"], conv);
  EXPECT_EQ(d["node"]["level"], "compiled");
  EXPECT_LE(nt["start_ns"].get<int64_t>(), d["start_ns"].get<int64_t>());
  EXPECT_EQ(d["duration_ns"].get<int64_t>(),
            d["end_ns"].get<int64_t>() - d["start_ns"].get<int64_t>());
  EXPECT_TRUE(d["flows"].is_array());
  // A framework Conv fused into that compiled node shows the same tasks.
  ASSERT_FALSE(d["fused_from"].empty());
  nlohmann::json fw = ParseJson(api_->Handle(Get(
      "/api/runs/0/tasks",
      {{"node", std::to_string(d["fused_from"][0]["id"].get<uint32_t>())}})));
  EXPECT_EQ(fw["tasks"], nt["tasks"]);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/tasks/4000000")), 404);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/tasks/x")), 400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/tasks/-1")), 400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/tasks/1", {{"clock", "y"}})),
                  400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/tasks")), 400);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/tasks", {{"node", "x"}})), 400);
  ExpectJsonError(
      api_->Handle(Get("/api/runs/0/tasks", {{"node", "4000000000"}})), 404);
}

TEST_F(ApiTest, MappingPagesSortsAndFilters) {
  const std::string path = "/api/runs/0/mapping";
  nlohmann::json all = ParseJson(api_->Handle(Get(path)));
  EXPECT_EQ(all["level"], "compiled");
  int total = all["total"].get<int>();
  ASSERT_GT(total, 10);
  for (size_t i = 1; i < all["rows"].size(); ++i) {
    EXPECT_GE(all["rows"][i - 1]["total_ns"].get<int64_t>(),
              all["rows"][i]["total_ns"].get<int64_t>());
  }
  nlohmann::json page = ParseJson(api_->Handle(
      Get(path, {{"offset", "5"}, {"limit", "3"}, {"sort", "name"}})));
  EXPECT_EQ(page["total"], total);
  ASSERT_EQ(page["rows"].size(), 3u);
  EXPECT_LE(page["rows"][0]["name"].get<std::string>(),
            page["rows"][1]["name"].get<std::string>());
  nlohmann::json inserted =
      ParseJson(api_->Handle(Get(path, {{"status", "inserted"}})));
  EXPECT_GT(inserted["total"].get<int>(), 0);
  for (const auto& row : inserted["rows"]) EXPECT_EQ(row["status"], "inserted");
  nlohmann::json q = ParseJson(api_->Handle(Get(path, {{"q", "layer4"}})));
  EXPECT_GT(q["total"].get<int>(), 0);
  EXPECT_LT(q["total"].get<int>(), total);
  ExpectJsonError(api_->Handle(Get(path, {{"sort", "speed"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"status", "done"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"limit", "10001"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"offset", "-1"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"desc", "yes"}})), 400);
}

TEST_F(ApiTest, MappingFindsTheRowOfANodeOrTask) {
  const std::string path = "/api/runs/0/mapping";
  // The last row by total time: its node and its first task lead back to it.
  nlohmann::json all = ParseJson(
      api_->Handle(Get(path, {{"limit", "10000"}, {"status", "executed"}})));
  int total = all["total"].get<int>();
  ASSERT_GT(total, 10);
  const auto& last = all["rows"][total - 1];
  std::string node = std::to_string(last["node"]["id"].get<int>());
  std::string task = std::to_string(last["first_task"].get<int>());
  nlohmann::json by_node = ParseJson(api_->Handle(Get(
      path, {{"limit", "5"}, {"status", "executed"}, {"find_node", node}})));
  EXPECT_EQ(by_node["found_index"], total - 1);
  EXPECT_EQ(by_node["rows"].size(), 5u);
  nlohmann::json by_task = ParseJson(
      api_->Handle(Get(path, {{"status", "executed"}, {"find_task", task}})));
  EXPECT_EQ(by_task["found_index"], total - 1);
  // Filtered out, and absent: -1.
  nlohmann::json hidden = ParseJson(
      api_->Handle(Get(path, {{"status", "inserted"}, {"find_node", node}})));
  EXPECT_EQ(hidden["found_index"], -1);
  nlohmann::json absent =
      ParseJson(api_->Handle(Get(path, {{"find_task", "4000000000"}})));
  EXPECT_EQ(absent["found_index"], -1);
  EXPECT_FALSE(ParseJson(api_->Handle(Get(path))).contains("found_index"));
  ExpectJsonError(api_->Handle(Get(path, {{"find_node", "x"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"find_task", "-3"}})), 400);
  ExpectJsonError(
      api_->Handle(Get(path, {{"find_node", node}, {"find_task", task}})), 400);
}

TEST_F(ApiTest, SummaryOverATimeRange) {
  const std::string path = "/api/runs/0/summary";
  nlohmann::json whole = ParseJson(api_->Handle(Get(path)));
  ASSERT_GE(whole["runs"].size(), 2u);
  // The first model_run only: its tasks, clipped.
  const auto& run = whole["runs"][1];
  int64_t from = static_cast<int64_t>(run["start_us"].get<double>() * 1000);
  int64_t to =
      from + static_cast<int64_t>(run["duration_us"].get<double>() * 1000);
  nlohmann::json part =
      ParseJson(api_->Handle(Get(path, {{"from_ns", std::to_string(from)},
                                        {"to_ns", std::to_string(to)}})));
  EXPECT_LT(part["tasks"].get<int>(), whole["tasks"].get<int>());
  EXPECT_GT(part["tasks"].get<int>(), 0);
  EXPECT_LT(part["total_us"].get<double>(), whole["total_us"].get<double>());
  ExpectJsonError(api_->Handle(Get(path, {{"from_ns", "x"}})), 400);
  ExpectJsonError(api_->Handle(Get(path, {{"from_ns", "10"}, {"to_ns", "10"}})),
                  400);
  ExpectJsonError(api_->Handle(Get(path, {{"clock", "wall"}})), 400);
  EXPECT_EQ(api_->Handle(Get(path, {{"clock", "calibrated"}})).status, 200);
}

// The ONNX Runtime profile's kernel events: the tasks the linker sees
// (counted from the file, not from our reading of it).
size_t KernelEvents(const std::string& profile) {
  std::ifstream in(profile);
  nlohmann::json events = nlohmann::json::parse(in, nullptr, false);
  EXPECT_TRUE(events.is_array()) << profile;
  size_t n = 0;
  for (const auto& e : events) {
    std::string name = e.value("name", "");
    if (e.value("cat", "") == "Node" && name.ends_with("_kernel_time")) ++n;
  }
  return n;
}

TEST(ApiLinksTest, ReasonsTheTasksStayUnlinked) {
  const std::string profile = kRunDir + "/onnxruntime_profile.json";
  const size_t kernels = KernelEvents(profile);
  ASSERT_GT(kernels, 0u);
  // The framework model alone with a profile of the optimized one: most
  // kernels name nodes the optimizer made, which the graph lacks.
  OpenOptions options;
  options.paths = {
      std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18/model.onnx",
      profile};
  auto framework_only = Session::Open(options);
  ASSERT_TRUE(framework_only.ok()) << framework_only.status().ToString();
  std::vector<ServedRun> runs;
  runs.push_back({"ort_all", {kRunDir}, OpenDemo()});
  runs.push_back(
      {"framework only", options.paths, std::move(framework_only).value()});
  Api api(std::move(runs), {});

  nlohmann::json linked = ParseJson(api.Handle(Get("/api/runs/0/links")));
  EXPECT_EQ(linked["has_graph"], true);
  EXPECT_EQ(linked["tasks"], kernels);
  EXPECT_EQ(linked["linked_tasks"], kernels) << linked.dump();
  EXPECT_EQ(linked["reasons"], nlohmann::json::array());

  nlohmann::json apart = ParseJson(api.Handle(Get("/api/runs/1/links")));
  EXPECT_EQ(apart["tasks"], kernels);
  uint64_t unlinked = apart["unlinked_tasks"];
  EXPECT_GT(unlinked, 0u);
  EXPECT_EQ(apart["linked_tasks"].get<uint64_t>() + unlinked, kernels);
  uint64_t by_reason = 0;
  bool unknown = false;
  for (const auto& reason : apart["reasons"]) {
    by_reason += reason["count"].get<uint64_t>();
    if (reason["code"] == "unknown_node") {
      unknown = true;
      EXPECT_EQ(reason["text"], "name a node the graphs lack");
    }
  }
  EXPECT_TRUE(unknown) << apart.dump();
  EXPECT_EQ(by_reason, unlinked);
  ASSERT_FALSE(apart["examples"].empty());
  EXPECT_NE(apart["examples"][0].get<std::string>().find(
                "which the loaded graph lacks"),
            std::string::npos);
}

TEST(ApiFailedRunTest, ListedWithItsErrorAndNeverQueried) {
  std::vector<ServedRun> runs;
  runs.push_back({"ort_all", {kRunDir}, OpenDemo()});
  ServedRun bad;
  bad.name = "bad.json";
  bad.paths = {"/runs/bad.json"};
  bad.error_code = "malformed input";
  bad.error = "/runs/bad.json:1:18: truncated";
  runs.push_back(std::move(bad));
  Api api(std::move(runs), {});
  nlohmann::json j = ParseJson(api.Handle(Get("/api/runs")));
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_FALSE(j["runs"][0].contains("error"));
  const nlohmann::json& r = j["runs"][1];
  EXPECT_EQ(r["levels"], nlohmann::json::array());
  EXPECT_EQ(r["has_trace"], false);
  EXPECT_EQ(r["inputs"], nlohmann::json::array());
  EXPECT_EQ(r["error"]["code"], "malformed input");
  EXPECT_EQ(r["error"]["message"], "/runs/bad.json:1:18: truncated");
  for (const char* path :
       {"/api/runs/1/summary", "/api/runs/1/links", "/api/runs/1/timeline",
        "/api/runs/1/levels/framework/layout", "/api/runs/1/mapping"}) {
    HttpResponse e = api.Handle(Get(path));
    ExpectJsonError(e, 404);
    EXPECT_NE(ParseJson(e)["error"]["message"].get<std::string>().find(
                  "could not be opened: /runs/bad.json:1:18: truncated"),
              std::string::npos)
        << path;
  }
  EXPECT_EQ(api.Handle(Get("/api/runs/0/summary")).status, 200);
}

// A trace-only run (the PyTorch-profiler trace of resnet18) with the model
// beside it and a candidate that is not a model, paired through POST
// /api/runs/{run}/pair. The open callback opens the files with
// Session::Open, as `open --run MODEL TRACE` does.
struct PairFixture {
  const std::string fixtures = std::string(MI_SOURCE_DIR) + "/test/fixtures";
  const std::string model = fixtures + "/resnet18/model.onnx";
  const std::string trace =
      fixtures + "/resnet18/torch_profile.pt.trace.json.gz";
  // A file named like a model that is no protobuf: the opener's error
  // comes back.
  const std::string not_a_model = [] {
    std::string path = ::testing::TempDir() + "/mi_pair_broken.onnx";
    std::ofstream(path) << "this is not a protobuf\n";
    return path;
  }();
  int opened = 0;

  std::unique_ptr<Api> MakePairApi(ApiOptions options = {}) {
    OpenOptions trace_only;
    trace_only.paths = {trace};
    auto session = Session::Open(trace_only);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    EXPECT_TRUE((*session)->Levels().empty());
    ServedRun run{"trace", {trace}, std::move(session).value()};
    run.pair_candidates = {model, not_a_model};
    std::vector<ServedRun> runs;
    runs.push_back({"ort_all", {kRunDir}, OpenDemo()});
    runs.push_back(std::move(run));
    options.open_run = [this](const std::vector<std::string>& paths) {
      ++opened;
      OpenOptions o;
      o.paths = paths;
      auto s = Session::Open(o);
      ServedRun r;
      r.name = "paired";
      r.paths = paths;
      if (s.ok()) {
        r.session = std::move(s).value();
      } else {
        r.error = s.status().message();
      }
      return r;
    };
    options.assets = &TestAssets();
    return std::make_unique<Api>(std::move(runs), std::move(options));
  }
};

HttpRequest PairRequest(std::string run, std::string body) {
  HttpRequest r = Get("/api/runs/" + run + "/pair");
  r.method = "POST";
  r.body = std::move(body);
  r.headers = {{"Content-Type", "application/json"},
               {"Host", "127.0.0.1:8080"},
               {"Origin", "http://127.0.0.1:8080"}};
  return r;
}

TEST(ApiPairTest, OpensTheCandidateWithTheTraceOnce) {
  PairFixture f;
  auto api = f.MakePairApi();
  nlohmann::json before = ParseJson(api->Handle(Get("/api/runs")));
  ASSERT_EQ(before["runs"].size(), 2u);
  EXPECT_EQ(before["runs"][1]["levels"], nlohmann::json::array());

  HttpResponse created = api->Handle(PairRequest("1", R"({"candidate": 0})"));
  ASSERT_EQ(created.status, 201) << created.content();
  nlohmann::json c = ParseJson(created);
  EXPECT_EQ(c["run"], 2);
  EXPECT_EQ(c["created"], true);
  EXPECT_EQ(f.opened, 1);

  // The new run: the model first, then the trace, as `open --run` gives
  // them; the framework graph of model.onnx and the trace.
  nlohmann::json after = ParseJson(api->Handle(Get("/api/runs")));
  ASSERT_EQ(after["runs"].size(), 3u);
  const nlohmann::json& paired = after["runs"][2];
  EXPECT_EQ(paired["id"], 2);
  EXPECT_EQ(paired["paths"], nlohmann::json::array({f.model, f.trace}));
  EXPECT_EQ(paired["has_trace"], true);
  EXPECT_EQ(paired["levels"], nlohmann::json::array({"framework"}));
  EXPECT_FALSE(paired.contains("pair_candidates"));
  EXPECT_EQ(api->Handle(Get("/api/runs/2/levels/framework/layout")).status,
            200);

  // Idempotent: the same candidate again answers the same run, opens
  // nothing, adds nothing.
  HttpResponse again = api->Handle(PairRequest("1", "{ \"candidate\" : 0 }\n"));
  ASSERT_EQ(again.status, 200) << again.content();
  EXPECT_EQ(ParseJson(again)["run"], 2);
  EXPECT_EQ(ParseJson(again)["created"], false);
  EXPECT_EQ(f.opened, 1);
  EXPECT_EQ(ParseJson(api->Handle(Get("/api/runs")))["runs"].size(), 3u);

  // A run with a graph has nothing to pair.
  ExpectJsonError(api->Handle(PairRequest("0", R"({"candidate": 0})")), 409);
  ExpectJsonError(api->Handle(PairRequest("2", R"({"candidate": 0})")), 409);
}

TEST(ApiPairTest, BadRequestsAreRefusedAndTheServerGoesOn) {
  PairFixture f;
  auto api = f.MakePairApi();
  HttpResponse out_of_range =
      api->Handle(PairRequest("1", R"({"candidate": 2})"));
  ExpectJsonError(out_of_range, 400);
  EXPECT_EQ(ParseJson(out_of_range)["error"]["message"],
            "candidate: expected 0..1, found 2");
  // Never a path from the client: only an index.
  for (const char* body :
       {"", "{}", R"({"candidate": -1})", R"({"candidate": "0"})",
        R"({"candidate": 0, "path": "/etc/passwd"})", R"({"path": "/x"})",
        R"({"candidate": 0})"
        "x"}) {
    ExpectJsonError(api->Handle(PairRequest("1", body)), 400);
  }
  ExpectJsonError(api->Handle(PairRequest("7", R"({"candidate": 0})")), 404);
  // GET is not how one pairs.
  HttpResponse get = api->Handle(Get("/api/runs/1/pair"));
  ExpectJsonError(get, 405);
  EXPECT_EQ(get.header("Allow"), "POST");

  // A candidate that does not open: the opener's error, no run added, and
  // the server answers on.
  HttpResponse failed = api->Handle(PairRequest("1", R"({"candidate": 1})"));
  ExpectJsonError(failed, 422);
  std::string message = ParseJson(failed)["error"]["message"];
  EXPECT_TRUE(message.starts_with(f.not_a_model + " with " + f.trace + ": "))
      << message;
  EXPECT_EQ(ParseJson(api->Handle(Get("/api/runs")))["runs"].size(), 2u);
  EXPECT_EQ(api->Handle(Get("/api/runs/1/summary")).status, 200);
  EXPECT_EQ(f.opened, 1);
}

TEST(ApiPairTest, OnlyThePageItselfMayPair) {
  PairFixture f;
  auto api = f.MakePairApi();
  // Another site's form (no JSON content type) or script (its Origin).
  HttpRequest form = PairRequest("1", R"({"candidate": 0})");
  form.headers[0].second = "text/plain";
  ExpectJsonError(api->Handle(form), 415);
  HttpRequest other = PairRequest("1", R"({"candidate": 0})");
  other.headers[2].second = "http://evil.example";
  ExpectJsonError(api->Handle(other), 403);
  HttpRequest cross = PairRequest("1", R"({"candidate": 0})");
  cross.headers.emplace_back("Sec-Fetch-Site", "cross-site");
  ExpectJsonError(api->Handle(cross), 403);
  EXPECT_EQ(f.opened, 0);
  // No CORS: a preflight is refused like any other method.
  HttpRequest preflight = PairRequest("1", "");
  preflight.method = "OPTIONS";
  ExpectJsonError(api->Handle(preflight), 405);

  HttpRequest same = PairRequest("1", R"({"candidate": 0})");
  same.headers.emplace_back("Sec-Fetch-Site", "same-origin");
  EXPECT_EQ(api->Handle(same).status, 201);
}

TEST(ApiPairTest, TokenRequiredWhenSet) {
  PairFixture f;
  ApiOptions options;
  options.token = "s3cret-token";
  auto api = f.MakePairApi(options);
  ExpectJsonError(api->Handle(PairRequest("1", R"({"candidate": 0})")), 403);
  HttpRequest wrong = PairRequest("1", R"({"candidate": 0})");
  wrong.headers.emplace_back("X-MI-Token", "s3cret");
  ExpectJsonError(api->Handle(wrong), 403);
  EXPECT_EQ(f.opened, 0);
  HttpRequest with = PairRequest("1", R"({"candidate": 0})");
  with.headers.emplace_back("Cookie", "mi_token=s3cret-token");
  EXPECT_EQ(api->Handle(with).status, 201);
  EXPECT_EQ(f.opened, 1);
}

TEST(ApiShownPathTest, TheDemosFolderIsNotListed) {
  std::vector<ServedRun> runs;
  ServedRun demo{"demo", {kRunDir}, OpenDemo()};
  demo.real_root = std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18";
  demo.shown_root = "(bundled demo)";
  runs.push_back(std::move(demo));
  Api api(std::move(runs), {});
  nlohmann::json j = ParseJson(api.Handle(Get("/api/runs")));
  const nlohmann::json& r = j["runs"][0];
  EXPECT_EQ(r["paths"], nlohmann::json::array({"(bundled demo)/ort_all"}));
  ASSERT_FALSE(r["inputs"].empty());
  for (const auto& input : r["inputs"]) {
    EXPECT_TRUE(input["path"].get<std::string>().starts_with("(bundled demo)/"))
        << input.dump();
  }
  // The model panel's "file" row: the model the loader read from the
  // temporary folder, shown under the demo's name.
  nlohmann::json properties =
      ParseJson(api.Handle(Get("/api/runs/0/levels/compiled/properties")));
  EXPECT_EQ(properties["file"], "(bundled demo)/ort_all/model.optimized.onnx")
      << properties.dump();
}

TEST_F(ApiTest, Assets) {
  HttpResponse index = api_->Handle(Get("/"));
  ASSERT_EQ(index.status, 200);
  EXPECT_EQ(index.content(), "<!doctype html>ui");
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(api_->Handle(Get("/index.html")).content(), index.content());
  EXPECT_EQ(api_->Handle(Get("/assets/app.js")).status, 200);
  ExpectJsonError(api_->Handle(Get("/assets/missing.js")), 404);
  ExpectJsonError(api_->Handle(Get("/etc/passwd")), 404);
}

TEST_F(ApiTest, TraversalIsNotFound) {
  // Paths as the HTTP layer hands them over: percent-decoded once.
  for (const char* path :
       {"/../etc/passwd", "/assets/../index.html", "/assets/../../etc/passwd",
        "/./index.html", "/assets/./app.js", "/%2e%2e/etc/passwd",
        "/%252e%252e/etc/passwd", "/assets/%2e%2e%2findex.html",
        "/..\\..\\etc\\passwd", "/assets\\app.js", "//etc/passwd",
        "/api/../index.html", "/api/runs/../runs", "..", "", "etc/passwd",
        "/assets/..", "/api/runs/0/levels/../../x"}) {
    HttpResponse r = api_->Handle(Get(path));
    ExpectJsonError(r, 404);
  }
  std::string with_nul = "/index.html";
  with_nul.push_back('\0');
  ExpectJsonError(api_->Handle(Get(with_nul)), 404);
}

TEST_F(ApiTest, MethodsOtherThanGetAreRefused) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    HttpRequest r = Get("/api/runs");
    r.method = method;
    HttpResponse res = api_->Handle(r);
    ExpectJsonError(res, 405);
    EXPECT_EQ(res.header("Allow"), "GET, HEAD");
  }
  HttpRequest head = Get("/api/runs");
  head.method = "HEAD";
  EXPECT_EQ(api_->Handle(head).status, 200);
}

TEST(ApiTokenTest, TokenRequiredEverywhere) {
  ApiOptions options;
  options.token = "s3cret-token";
  auto api = MakeApi(options);
  ExpectJsonError(api->Handle(Get("/api/runs")), 403);
  ExpectJsonError(api->Handle(Get("/")), 403);
  ExpectJsonError(api->Handle(Get("/api/runs", {{"token", "wrong"}})), 403);
  ExpectJsonError(api->Handle(Get("/api/runs", {{"token", ""}})), 403);
  ExpectJsonError(api->Handle(Get("/api/runs", {{"token", "s3cret-tokenX"}})),
                  403);
  // Query parameter: allowed, and a cookie is set for the page's requests.
  HttpResponse q = api->Handle(Get("/", {{"token", "s3cret-token"}}));
  EXPECT_EQ(q.status, 200);
  EXPECT_NE(q.header("Set-Cookie").find("mi_token=s3cret-token"),
            std::string_view::npos);
  EXPECT_NE(q.header("Set-Cookie").find("HttpOnly"), std::string_view::npos);
  // Header.
  HttpRequest h = Get("/api/runs");
  h.headers = {{"x-mi-token", "s3cret-token"}};
  EXPECT_EQ(api->Handle(h).status, 200);
  h.headers = {{"X-MI-Token", "nope"}};
  ExpectJsonError(api->Handle(h), 403);
  // Cookie.
  HttpRequest c = Get("/api/runs");
  c.headers = {{"Cookie", "other=1; mi_token=s3cret-token"}};
  EXPECT_EQ(api->Handle(c).status, 200);
  c.headers = {{"Cookie", "mi_token=s3cret"}};
  ExpectJsonError(api->Handle(c), 403);
}

TEST(ApiHostTest, LoopbackServerChecksTheHostHeader) {
  ApiOptions options;
  options.allowed_hosts = {"127.0.0.1:5000", "localhost:5000"};
  auto api = MakeApi(options);
  HttpRequest r = Get("/api/runs");
  r.headers = {{"Host", "127.0.0.1:5000"}};
  EXPECT_EQ(api->Handle(r).status, 200);
  r.headers = {{"host", "LOCALHOST:5000"}};
  EXPECT_EQ(api->Handle(r).status, 200);
  r.headers = {{"Host", "evil.example:5000"}};  // DNS rebinding
  ExpectJsonError(api->Handle(r), 403);
}

// Odd input never crashes: random paths and parameters get some response.
TEST_F(ApiTest, RandomRequestsNeverCrash) {
  std::mt19937 rng(42);
  std::vector<std::string> parts = {"api",
                                    "runs",
                                    "0",
                                    "1",
                                    "levels",
                                    "framework",
                                    "compiled",
                                    "layout",
                                    "nodes",
                                    "search",
                                    "summary",
                                    "..",
                                    ".",
                                    "%",
                                    "\\",
                                    "",
                                    "assets",
                                    "index.html",
                                    "-1",
                                    "4294967296",
                                    "\xff\xfe",
                                    "a b",
                                    "memory",
                                    "critical-path",
                                    "idle-overlap",
                                    "analyses",
                                    "analysis-list",
                                    "load_balance",
                                    "paths",
                                    "timeline",
                                    "window",
                                    "tasks",
                                    "mapping"};
  parts.insert(parts.end(),
               {"export", "model-explorer-graph", "model-explorer-node-data"});
  const std::vector<std::string> keys = {"q",        "mode",
                                         "limit",    "expand",
                                         "collapse", "max_items",
                                         "grouping", "direction",
                                         "top",      "iteration",
                                         "token",    "reveal",
                                         "clock",    "gap_threshold_ns",
                                         "start_ns", "end_ns",
                                         "px",       "op",
                                         "kind",     "name",
                                         "tracks",   "format",
                                         "node",     "offset",
                                         "sort",     "desc",
                                         "status",   "from_ns",
                                         "to_ns"};
  const std::vector<std::string> values = {
      "",      "0",    "1",    "-1",     "1,2,3",    ",,,",
      "regex", "glob", "op",   "text",   "attr",     "(",
      "*",     "**",   "?",    "[",      "\xc3\x28", "99999999999999999999",
      "lr",    "tb",   "none", "fusion", "scopes",   "=",
      "a=b=c"};
  for (int i = 0; i < 3000; ++i) {
    std::string path;
    int n = static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k) path += "/" + parts[rng() % parts.size()];
    if (path.empty()) path = "/";
    HttpRequest r = Get(path);
    int np = static_cast<int>(rng() % 4);
    for (int k = 0; k < np; ++k) {
      r.params.emplace_back(keys[rng() % keys.size()],
                            values[rng() % values.size()]);
    }
    HttpResponse res = api_->Handle(r);
    EXPECT_TRUE(res.status == 200 || res.status == 400 || res.status == 404)
        << path << " -> " << res.status << " " << res.content();
    if (res.status != 200) ParseJson(res);
  }
}

// The demo's figures below come from python3-onnx (Debian's onnx 1.12,
// independent of our reader):
//   m = onnx.load("test/fixtures/resnet18/model.onnx")
//   m.ir_version, m.producer_name, m.producer_version, m.opset_import
//     -> 7, "pytorch", "1.13.0", [("", 13)]; 42 initializers, 49 nodes
//   a = numpy_helper.to_array(<fc.bias>).astype(float64)
//   a[:4] -> 0.04693925380706787, -0.08976390957832336,
//            -0.09915836155414581, 0.09464655816555023
//   a.min(), a.max(), a.mean() -> -0.12439633905887604,
//            0.12493783235549927, 0.001638316124677658
TEST_F(ApiTest, PropertiesOfTheFrameworkModel) {
  HttpResponse r = api_->Handle(Get("/api/runs/0/levels/framework/properties"));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["format"], "onnx");
  EXPECT_EQ(j["producer"], "pytorch 1.13.0");
  EXPECT_EQ(j["onnx"]["ir_version"], 7);
  EXPECT_EQ(j["onnx"]["producer_name"], "pytorch");
  EXPECT_EQ(j["onnx"]["producer_version"], "1.13.0");
  EXPECT_TRUE(j["onnx"]["metadata_props"].empty());
  ASSERT_EQ(j["opset_imports"].size(), 1u);
  EXPECT_EQ(j["opset_imports"][0]["domain"], "");
  EXPECT_EQ(j["opset_imports"][0]["version"], 13);
  EXPECT_EQ(j["nodes"], 49);
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["name"], "input");
  EXPECT_EQ(j["inputs"][0]["type"], "float32[1,3,224,224]");
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "logits");
  EXPECT_EQ(j["outputs"][0]["type"], "float32[1,1000]");
  EXPECT_EQ(j["initializer_count"], 42);
  EXPECT_EQ(j["initializers"].size(), 42u);
  EXPECT_TRUE(j["values_readable"]);
  bool found = false;
  for (const auto& w : j["initializers"]) {
    if (w["name"] != "fc.weight") continue;
    found = true;
    EXPECT_EQ(w["type"], "float32[1000,64]");
    EXPECT_EQ(w["bytes"], 1000 * 64 * 4);
  }
  EXPECT_TRUE(found);
}

TEST_F(ApiTest, PropertiesOfTheCompiledModelListItsOpsets) {
  HttpResponse r = api_->Handle(Get("/api/runs/0/levels/compiled/properties"));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = ParseJson(r);
  // ONNX Runtime's optimised model keeps the exporter's header and adds
  // its own domains (9 opset imports, python3-onnx).
  EXPECT_EQ(j["onnx"]["ir_version"], 7);
  EXPECT_EQ(j["opset_imports"].size(), 9u);
  ExpectJsonError(api_->Handle(Get("/api/runs/0/levels/nope/properties")), 404);
}

TEST_F(ApiTest, ValuesOfAnInitializerReadFromTheFile) {
  HttpResponse r = api_->Handle(Get("/api/runs/0/levels/framework/values",
                                    {{"name", "fc.bias"}, {"limit", "4"}}));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["dtype"], "float32");
  EXPECT_EQ(j["shape"], nlohmann::json::array({1000}));
  EXPECT_EQ(j["elements"], 1000);
  EXPECT_EQ(j["storage"], "raw_data");
  const double want[] = {0.04693925380706787, -0.08976390957832336,
                         -0.09915836155414581, 0.09464655816555023};
  ASSERT_EQ(j["values"].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(j["values"][i].get<double>(), want[i]) << i;
  }
  EXPECT_EQ(j["stats"]["count"], 1000);
  EXPECT_TRUE(j["stats"]["complete"]);
  EXPECT_EQ(j["stats"]["nan"], 0);
  EXPECT_EQ(j["stats"]["min"].get<double>(), -0.12439633905887604);
  EXPECT_EQ(j["stats"]["max"].get<double>(), 0.12493783235549927);
  // Summation order differs from numpy's pairwise sum.
  EXPECT_NEAR(j["stats"]["mean"].get<double>(), 0.001638316124677658, 1e-15);
}

TEST_F(ApiTest, ValuesRefuseWhatIsNotAnInitializer) {
  auto values = [&](std::vector<std::pair<std::string, std::string>> p) {
    return api_->Handle(
        Get("/api/runs/0/levels/framework/values", std::move(p)));
  };
  ExpectJsonError(values({}), 400);
  ExpectJsonError(values({{"name", ""}}), 400);
  ExpectJsonError(values({{"name", "input"}}), 404);  // a graph input
  ExpectJsonError(values({{"name", "no such weight"}}), 404);
  ExpectJsonError(values({{"name", "fc.bias"}, {"limit", "10001"}}), 400);
  ExpectJsonError(values({{"name", "fc.bias"}, {"limit", "-1"}}), 400);
  HttpResponse none = values({{"name", "fc.bias"}, {"limit", "0"}});
  ASSERT_EQ(none.status, 200);
  EXPECT_TRUE(ParseJson(none)["values"].empty());
}

// A cluster of two ranks (the torch_npu text export of
// test/fixtures/samples/cluster/msinsight_pt_text_level1_2rank_2024): the
// server holds its report as JSON and each rank's folder; POST
// /api/cluster/ranks opens ranks as a run through the open callback, which
// opens the files with Session::Open as `open --run FILES...` does. The
// report's content is the cluster analysis' (tested there and end to end
// in test/python/test_cluster_server.py); here it is bytes the server
// serves as they are.
struct ClusterFixture {
  const std::string root =
      std::string(MI_SOURCE_DIR) +
      "/test/fixtures/samples/cluster/msinsight_pt_text_level1_2rank_2024";
  const std::string report =
      R"({"schema": "model-inspector/cluster/1", "world_size": 2})";
  const std::string light = R"({"schema": "model-inspector/cluster/1"})";
  const std::string collective0 = R"({"collectives": [{"ranks": []}]})";
  int opened = 0;
  std::vector<std::vector<std::string>> opened_paths;

  std::unique_ptr<Api> MakeApi(ApiOptions options = {}) {
    auto cluster = std::make_shared<ServedCluster>();
    cluster->report_json = report;
    cluster->report_without_collective_ranks_json = light;
    cluster->collective_json = {collective0};
    cluster->ranks = {{0, {root + "/rank0_ascend_pt"}},
                      {1, {root + "/rank1_ascend_pt"}}};
    options.cluster = cluster;
    options.open_run = [this](const std::vector<std::string>& paths) {
      ++opened;
      opened_paths.push_back(paths);
      OpenOptions o;
      o.paths = paths;
      auto s = Session::Open(o);
      ServedRun r;
      r.name = "ranks";
      r.paths = paths;
      if (s.ok()) {
        r.session = std::move(s).value();
      } else {
        r.error = s.status().message();
      }
      return r;
    };
    options.assets = &TestAssets();
    // A cluster's server starts with no run.
    return std::make_unique<Api>(std::vector<ServedRun>{}, std::move(options));
  }
};

HttpRequest RanksRequest(std::string body) {
  HttpRequest r = Get("/api/cluster/ranks");
  r.method = "POST";
  r.body = std::move(body);
  r.headers = {{"Content-Type", "application/json"},
               {"Host", "127.0.0.1:8080"},
               {"Origin", "http://127.0.0.1:8080"}};
  return r;
}

TEST(ApiClusterTest, ServesTheReportAndOpensRanksAsRunsOnce) {
  ClusterFixture f;
  auto api = f.MakeApi();
  HttpResponse report = api->Handle(Get("/api/cluster"));
  ASSERT_EQ(report.status, 200);
  EXPECT_EQ(report.content(), f.report);
  EXPECT_EQ(report.content_type, "application/json; charset=utf-8");
  // Without the collectives' per-rank rows; one collective with them.
  EXPECT_EQ(
      api->Handle(Get("/api/cluster", {{"collective_ranks", "0"}})).content(),
      f.light);
  EXPECT_EQ(
      api->Handle(Get("/api/cluster", {{"collective_ranks", "1"}})).content(),
      f.report);
  ExpectJsonError(api->Handle(Get("/api/cluster", {{"collective_ranks", "x"}})),
                  400);
  EXPECT_EQ(api->Handle(Get("/api/cluster/collectives/0")).content(),
            f.collective0);
  ExpectJsonError(api->Handle(Get("/api/cluster/collectives/1")), 404);
  ExpectJsonError(api->Handle(Get("/api/cluster/collectives/x")), 400);
  nlohmann::json none = ParseJson(api->Handle(Get("/api/runs")));
  EXPECT_EQ(none["runs"].size(), 0u);
  EXPECT_EQ(none["cluster"], true);
  HttpResponse no_run = api->Handle(Get("/api/runs/0/summary"));
  ExpectJsonError(no_run, 404);
  EXPECT_EQ(ParseJson(no_run)["error"]["message"],
            "no run 0; the server has no runs yet");

  // Rank 1 alone: a run of its folder, named after the rank.
  HttpResponse created = api->Handle(RanksRequest(R"({"ranks": [1]})"));
  ASSERT_EQ(created.status, 201) << created.content();
  nlohmann::json c = ParseJson(created);
  EXPECT_EQ(c["run"], 0);
  EXPECT_EQ(c["created"], true);
  EXPECT_EQ(c["ranks"], nlohmann::json::array({1}));
  ASSERT_EQ(f.opened_paths.size(), 1u);
  EXPECT_EQ(f.opened_paths[0],
            std::vector<std::string>{f.root + "/rank1_ascend_pt"});
  nlohmann::json runs = ParseJson(api->Handle(Get("/api/runs")))["runs"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["name"], "rank 1");
  EXPECT_EQ(runs[0]["has_trace"], true);
  EXPECT_EQ(api->Handle(Get("/api/runs/0/timeline")).status, 200);

  // Both ranks, in any order and repeated: one run of both folders, in
  // rank order; asked again, the same run, nothing opened.
  HttpResponse both = api->Handle(RanksRequest(R"({"ranks": [1, 0, 1]})"));
  ASSERT_EQ(both.status, 201) << both.content();
  EXPECT_EQ(ParseJson(both)["run"], 1);
  EXPECT_EQ(ParseJson(both)["ranks"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(f.opened_paths[1],
            (std::vector<std::string>{f.root + "/rank0_ascend_pt",
                                      f.root + "/rank1_ascend_pt"}));
  HttpResponse again = api->Handle(RanksRequest("{ \"ranks\" : [0,1] }\n"));
  ASSERT_EQ(again.status, 200) << again.content();
  EXPECT_EQ(ParseJson(again)["run"], 1);
  EXPECT_EQ(ParseJson(again)["created"], false);
  HttpResponse one_again = api->Handle(RanksRequest(R"({"ranks": [1]})"));
  EXPECT_EQ(ParseJson(one_again)["run"], 0);
  EXPECT_EQ(f.opened, 2);
  nlohmann::json after = ParseJson(api->Handle(Get("/api/runs")))["runs"];
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1]["name"], "ranks 0, 1");
}

TEST(ApiClusterTest, BadRequestsAreRefused) {
  ClusterFixture f;
  auto api = f.MakeApi();
  HttpResponse unknown = api->Handle(RanksRequest(R"({"ranks": [0, 7]})"));
  ExpectJsonError(unknown, 400);
  EXPECT_EQ(ParseJson(unknown)["error"]["message"],
            "ranks: the cluster has no rank 7; its ranks are 0, 1");
  // Rank ids only: never a path, never an empty list.
  for (const char* body :
       {"", "{}", R"({"ranks": []})", R"({"ranks": [-1]})",
        R"({"ranks": ["0"]})", R"({"ranks": [0,]})", R"({"ranks": 0})",
        R"({"ranks": [0], "path": "/etc/passwd"})", R"({"ranks": [0]}x)"}) {
    ExpectJsonError(api->Handle(RanksRequest(body)), 400);
  }
  std::string many = R"({"ranks": [)";
  for (int i = 0; i <= static_cast<int>(kMaxClusterRunRanks); ++i) {
    many += (i ? "," : "") + std::to_string(i);
  }
  HttpResponse too_many = api->Handle(RanksRequest(many + "]}"));
  ExpectJsonError(too_many, 400);
  EXPECT_NE(ParseJson(too_many)["error"]["message"].get<std::string>().find(
                "at most 64 in one run"),
            std::string::npos);
  HttpResponse get = api->Handle(Get("/api/cluster/ranks"));
  ExpectJsonError(get, 405);
  EXPECT_EQ(get.header("Allow"), "POST");
  HttpRequest post_report = RanksRequest(R"({"ranks": [0]})");
  post_report.path = "/api/cluster";
  ExpectJsonError(api->Handle(post_report), 405);
  ExpectJsonError(api->Handle(Get("/api/cluster/steps")), 404);
  // Only the page itself may ask.
  HttpRequest form = RanksRequest(R"({"ranks": [0]})");
  form.headers[0].second = "text/plain";
  ExpectJsonError(api->Handle(form), 415);
  HttpRequest other = RanksRequest(R"({"ranks": [0]})");
  other.headers[2].second = "http://evil.example";
  ExpectJsonError(api->Handle(other), 403);
  HttpRequest cross = RanksRequest(R"({"ranks": [0]})");
  cross.headers.emplace_back("Sec-Fetch-Site", "cross-site");
  ExpectJsonError(api->Handle(cross), 403);
  EXPECT_EQ(f.opened, 0);
}

TEST(ApiClusterTest, NoClusterIs404AndTheTokenHolds) {
  ApiOptions plain;
  plain.assets = &TestAssets();
  std::vector<ServedRun> runs;
  runs.push_back({"ort_all", {kRunDir}, OpenDemo()});
  Api api(std::move(runs), plain);
  EXPECT_EQ(ParseJson(api.Handle(Get("/api/runs")))["cluster"], false);
  HttpResponse none = api.Handle(Get("/api/cluster"));
  ExpectJsonError(none, 404);
  EXPECT_NE(ParseJson(none)["error"]["message"].get<std::string>().find(
                "holds no cluster"),
            std::string::npos);
  ExpectJsonError(api.Handle(RanksRequest(R"({"ranks": [0]})")), 404);

  ClusterFixture f;
  ApiOptions options;
  options.token = "s3cret-token";
  auto guarded = f.MakeApi(options);
  ExpectJsonError(guarded->Handle(Get("/api/cluster")), 403);
  ExpectJsonError(guarded->Handle(RanksRequest(R"({"ranks": [0]})")), 403);
  HttpRequest with = Get("/api/cluster");
  with.headers.emplace_back("X-MI-Token", "s3cret-token");
  EXPECT_EQ(guarded->Handle(with).status, 200);
  EXPECT_EQ(f.opened, 0);
  // A request for the cluster is cheap (the report is computed); opening
  // ranks is heavy work.
  EXPECT_FALSE(guarded->IsHeavy(Get("/api/cluster")));
  EXPECT_TRUE(guarded->IsHeavy(RanksRequest(R"({"ranks": [0]})")));
}

// GET /api/diff: two served runs of resnet18 optimized by ONNX Runtime at
// "extended" (run 0) and "all" (run 1). Both share the framework model
// (test/fixtures/resnet18/model.onnx); their compiled models differ. The
// counts below were read with python3-onnx from the two
// model.optimized.onnx files (len(graph.node) and a Counter of op_type):
//   ort_extended: 40 nodes: Conv 11, FusedConv 9, Add 8, Relu 8, MaxPool 1,
//                 GlobalAveragePool 1, Flatten 1, Gemm 1
//   ort_all:      34 nodes: Conv 20, ReorderOutput 6, Add 2, Relu 2,
//                 MaxPool 1, GlobalAveragePool 1, Flatten 1, Gemm 1
const std::string kExtendedDir =
    std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18/ort_extended";

std::unique_ptr<Api> MakeDiffApi() {
  std::vector<ServedRun> runs;
  OpenOptions open;
  open.paths = {kExtendedDir};
  auto extended = Session::Open(open);
  EXPECT_TRUE(extended.ok()) << extended.status().ToString();
  runs.push_back({"ort_extended", {kExtendedDir}, std::move(extended).value()});
  runs.push_back({"ort_all", {kRunDir}, OpenDemo()});
  // A run `open --keep-going` could not open.
  ServedRun failed;
  failed.name = "broken";
  failed.paths = {"broken.onnx"};
  failed.error_code = "malformed input";
  failed.error = "broken.onnx:1: not a model";
  runs.push_back(std::move(failed));
  ApiOptions options;
  options.assets = &TestAssets();
  return std::make_unique<Api>(std::move(runs), std::move(options));
}

const nlohmann::json* LevelOf(const nlohmann::json& report,
                              std::string_view level) {
  for (const nlohmann::json& l : report["structure"]) {
    if (l["level"] == level) return &l;
  }
  return nullptr;
}

TEST(ApiDiffTest, RefusesBadParametersCheaply) {
  auto api = MakeDiffApi();
  ExpectJsonError(api->Handle(Get("/api/diff")), 400);
  ExpectJsonError(api->Handle(Get("/api/diff", {{"base", "0"}})), 400);
  ExpectJsonError(api->Handle(Get("/api/diff", {{"new", "0"}})), 400);
  ExpectJsonError(api->Handle(Get("/api/diff", {{"base", "x"}, {"new", "1"}})),
                  400);
  ExpectJsonError(api->Handle(Get("/api/diff", {{"base", "-1"}, {"new", "1"}})),
                  400);
  HttpResponse unknown =
      api->Handle(Get("/api/diff", {{"base", "0"}, {"new", "7"}}));
  ExpectJsonError(unknown, 404);
  EXPECT_EQ(ParseJson(unknown)["error"]["message"],
            "new: no run 7; runs are 0..2");
  HttpResponse failed =
      api->Handle(Get("/api/diff", {{"base", "2"}, {"new", "1"}}));
  ExpectJsonError(failed, 404);
  EXPECT_EQ(ParseJson(failed)["error"]["message"],
            "base: run 2 could not be opened: broken.onnx:1: not a model");
  // Refusals are answered on a cheap worker and never computed.
  EXPECT_FALSE(api->IsHeavy(Get("/api/diff", {{"base", "0"}})));
  EXPECT_FALSE(api->IsHeavy(Get("/api/diff", {{"base", "0"}, {"new", "7"}})));
  EXPECT_EQ(api->heavy_computations(), 0u);
  ExpectJsonError(api->Handle(Get("/api/diff/0")), 404);
  HttpRequest post = Get("/api/diff", {{"base", "0"}, {"new", "1"}});
  post.method = "POST";
  ExpectJsonError(api->Handle(post), 405);
}

TEST(ApiDiffTest, DiffsTwoServedRunsOnceAndCachesIt) {
  auto api = MakeDiffApi();
  HttpRequest request = Get("/api/diff", {{"base", "0"}, {"new", "1"}});
  EXPECT_TRUE(api->IsHeavy(request));
  HttpResponse first = api->Handle(request);
  ASSERT_EQ(first.status, 200) << first.content();
  EXPECT_EQ(first.content_type, "application/json; charset=utf-8");
  EXPECT_EQ(first.header("X-Cache"), "miss");
  EXPECT_FALSE(api->IsHeavy(request));
  HttpResponse second = api->Handle(request);
  EXPECT_EQ(second.header("X-Cache"), "hit");
  EXPECT_EQ(second.content(), first.content());
  EXPECT_EQ(api->heavy_computations(), 1u);
  // The other direction is another diff (the digests are reused).
  HttpResponse back =
      api->Handle(Get("/api/diff", {{"base", "1"}, {"new", "0"}}));
  ASSERT_EQ(back.status, 200) << back.content();
  EXPECT_EQ(back.header("X-Cache"), "miss");
  EXPECT_EQ(api->heavy_computations(), 2u);

  nlohmann::json j = ParseJson(first);
  EXPECT_EQ(j["schema"], "model-inspector/diff/1");
  EXPECT_EQ(j["base"]["label"], "ort_extended");
  EXPECT_EQ(j["new"]["label"], "ort_all");
  // The framework level is the same model file in both runs.
  const nlohmann::json* framework = LevelOf(j, "framework");
  ASSERT_NE(framework, nullptr) << j.dump();
  EXPECT_EQ((*framework)["base_nodes"], 49);
  EXPECT_EQ((*framework)["new_nodes"], 49);
  EXPECT_EQ((*framework)["base_fingerprint"], (*framework)["new_fingerprint"]);
  EXPECT_EQ((*framework)["added"], 0);
  EXPECT_EQ((*framework)["removed"], 0);
  // The compiled level: 40 -> 34 nodes, and the op-type shift of the
  // python3-onnx counts above.
  const nlohmann::json* compiled = LevelOf(j, "compiled");
  ASSERT_NE(compiled, nullptr) << j.dump();
  EXPECT_EQ((*compiled)["base_nodes"], 40);
  EXPECT_EQ((*compiled)["new_nodes"], 34);
  std::map<std::string, std::pair<int, int>> shift;
  for (const nlohmann::json& s : (*compiled)["op_types"]) {
    shift[s["op_type"]] = {s["base_count"], s["new_count"]};
  }
  std::map<std::string, std::pair<int, int>> expected = {
      {"Conv", {11, 20}},
      {"FusedConv", {9, 0}},
      {"ReorderOutput", {0, 6}},
      {"Add", {8, 2}},
      {"Relu", {8, 2}}};
  EXPECT_EQ(shift, expected);
  // Every change names the node in the session the UI colours: an added
  // node has only a new id, a removed one only a base id.
  int added = 0;
  int removed = 0;
  for (const nlohmann::json& c : (*compiled)["changes"]) {
    if (c["kind"] == "added") {
      ++added;
      EXPECT_TRUE(c["base_node_id"].is_null());
      EXPECT_TRUE(c["new_node_id"].is_number_integer());
    } else if (c["kind"] == "removed") {
      ++removed;
      EXPECT_TRUE(c["base_node_id"].is_number_integer());
      EXPECT_TRUE(c["new_node_id"].is_null());
    }
  }
  EXPECT_EQ(added, (*compiled)["added"]);
  EXPECT_EQ(removed, (*compiled)["removed"]);
  // 40 - removed + added = 34.
  EXPECT_EQ(40 - removed + added, 34);
  // Both runs have a trace: timing is there, with its total.
  ASSERT_TRUE(j["timing"].is_object()) << j.dump();
  EXPECT_EQ(j["timing"]["total"]["key"], "total");
}

TEST(ApiDiffTest, FailOnRulesAreTheCachesKey) {
  auto api = MakeDiffApi();
  HttpResponse bad = api->Handle(
      Get("/api/diff", {{"base", "0"}, {"new", "1"}, {"fail_on", "nodes!"}}));
  ExpectJsonError(bad, 400);
  EXPECT_TRUE(ParseJson(bad)["error"]["message"].get<std::string>().starts_with(
      "fail_on: "));
  EXPECT_EQ(api->heavy_computations(), 0u);
  // nodes!=0 crosses: the compiled level went from 40 to 34 nodes.
  HttpResponse gate = api->Handle(
      Get("/api/diff", {{"base", "0"}, {"new", "1"}, {"fail_on", "nodes!=0"}}));
  ASSERT_EQ(gate.status, 200) << gate.content();
  nlohmann::json j = ParseJson(gate);
  ASSERT_EQ(j["rules"].size(), 1u);
  EXPECT_EQ(j["rules"][0]["rule"], "nodes!=0");
  EXPECT_EQ(j["rules"][0]["crossed"], true);
  EXPECT_EQ(j["failed"], true);
  // Other rules are another entry; the same rules again are a hit.
  EXPECT_EQ(api->Handle(Get("/api/diff", {{"base", "0"},
                                          {"new", "1"},
                                          {"fail_on", "removed>100"}}))
                .header("X-Cache"),
            "miss");
  EXPECT_EQ(
      api->Handle(Get("/api/diff",
                      {{"base", "0"}, {"new", "1"}, {"fail_on", "nodes!=0"}}))
          .header("X-Cache"),
      "hit");
  EXPECT_EQ(api->heavy_computations(), 2u);
}

// One run against itself: its framework level against its compiled level
// (what the compiler fused), the pair the compare view opens on.
TEST(ApiDiffTest, OneRunAgainstItselfDiffsItsLevels) {
  auto api = MakeDiffApi();
  HttpResponse r = api->Handle(Get("/api/diff", {{"base", "1"}, {"new", "1"}}));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = ParseJson(r);
  const nlohmann::json* levels = LevelOf(j, "framework->compiled");
  ASSERT_NE(levels, nullptr) << j.dump();
  EXPECT_EQ((*levels)["base_nodes"], 49);
  EXPECT_EQ((*levels)["new_nodes"], 34);
}

// Opposite diffs at once: each run is digested in its own turn, so the two
// never wait on each other (a deadlock would hang this test).
TEST(ApiDiffTest, OppositeDiffsAtOnce) {
  auto api = MakeDiffApi();
  HttpResponse a;
  HttpResponse b;
  std::thread ta([&] {
    a = api->Handle(Get("/api/diff", {{"base", "0"}, {"new", "1"}}));
  });
  std::thread tb([&] {
    b = api->Handle(Get("/api/diff", {{"base", "1"}, {"new", "0"}}));
  });
  ta.join();
  tb.join();
  EXPECT_EQ(a.status, 200) << a.content();
  EXPECT_EQ(b.status, 200) << b.content();
}

TEST(ApiHistoryTest, WithoutAStoreTheRoutesSaySo) {
  auto api = MakeDiffApi();
  EXPECT_EQ(ParseJson(api->Handle(Get("/api/runs")))["history"], false);
  for (const char* path : {"/api/history/runs", "/api/history/trend"}) {
    HttpResponse r = api->Handle(Get(path, {{"model", "resnet18"}}));
    ExpectJsonError(r, 404);
    EXPECT_NE(ParseJson(r)["error"]["message"].get<std::string>().find(
                  "open --history PATH"),
              std::string::npos);
  }
  ExpectJsonError(api->Handle(Get("/api/history/other")), 404);
}

// A run history with runs of two models: the routes answer the store's
// runs and trend in the documents of `history list/trend --format json`.
TEST(ApiHistoryTest, ServesTheStoresRunsAndTrend) {
  std::string dir = ::testing::TempDir() + "/api_history_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/history.db";
  auto store = HistoryStore::Open(path, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // Two runs of resnet18 (the extended and all optimizations) and one of
  // another model name.
  std::vector<int64_t> medians;
  for (const std::string& dir_path : {kExtendedDir, kRunDir, kRunDir}) {
    OpenOptions open;
    open.paths = {dir_path};
    auto session = Session::Open(open);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    DigestOptions options;
    options.meta.model = medians.size() < 2 ? "resnet18" : "other";
    options.meta.label = dir_path.substr(dir_path.rfind('/') + 1);
    auto digest = DigestRun(**session, options);
    ASSERT_TRUE(digest.ok()) << digest.status().ToString();
    ASSERT_TRUE(digest->has_trace());
    // The median of the per-run totals, by hand: the middle value (the
    // mean of the two middle ones for an even count, halves rounded up).
    std::vector<int64_t> totals = digest->total.run_ns;
    std::sort(totals.begin(), totals.end());
    size_t n = totals.size();
    medians.push_back(n % 2 == 1 ? totals[n / 2]
                                 : (totals[n / 2 - 1] + totals[n / 2] + 1) / 2);
    ASSERT_TRUE((*store)->Add(*digest).ok());
  }
  std::shared_ptr<HistoryStore> shared = std::move(store).value();
  ApiOptions options;
  options.assets = &TestAssets();
  options.history = shared;
  std::vector<ServedRun> runs;
  runs.push_back({"ort_all", {kRunDir}, OpenDemo()});
  Api api(std::move(runs), options);
  EXPECT_EQ(ParseJson(api.Handle(Get("/api/runs")))["history"], true);

  nlohmann::json all = ParseJson(api.Handle(Get("/api/history/runs")));
  EXPECT_EQ(all["schema"], "model-inspector/history-runs/1");
  EXPECT_EQ(all["history"], path);
  ASSERT_EQ(all["runs"].size(), 3u);
  // Newest first.
  EXPECT_EQ(all["runs"][0]["model"], "other");
  EXPECT_GT(all["runs"][0]["id"], all["runs"][2]["id"]);
  nlohmann::json one = ParseJson(api.Handle(
      Get("/api/history/runs", {{"model", "resnet18"}, {"limit", "1"}})));
  ASSERT_EQ(one["runs"].size(), 1u);
  EXPECT_EQ(one["runs"][0]["label"], "ort_all");
  // The compiled node counts python3-onnx gives (see ApiDiffTest).
  EXPECT_EQ(one["runs"][0]["compiled_nodes"], 34);

  HttpResponse trend_response =
      api.Handle(Get("/api/history/trend", {{"model", "resnet18"}}));
  ASSERT_EQ(trend_response.status, 200) << trend_response.content();
  nlohmann::json trend = ParseJson(trend_response);
  EXPECT_EQ(trend["schema"], "model-inspector/history-trend/1");
  ASSERT_EQ(trend["points"].size(), 2u);
  // Oldest first: extended, then all.
  EXPECT_EQ(trend["points"][0]["label"], "ort_extended");
  EXPECT_EQ(trend["points"][0]["total_median_ns"], medians[0]);
  EXPECT_EQ(trend["points"][1]["total_median_ns"], medians[1]);
  EXPECT_EQ(ParseJson(api.Handle(
                Get("/api/history/trend", {{"model", "none"}})))["points"]
                .size(),
            0u);

  ExpectJsonError(api.Handle(Get("/api/history/trend")), 400);
  ExpectJsonError(api.Handle(Get("/api/history/runs", {{"limit", "0"}})), 400);
  ExpectJsonError(api.Handle(Get("/api/history/runs", {{"limit", "x"}})), 400);
  ExpectJsonError(api.Handle(Get("/api/history/runs", {{"limit", "10001"}})),
                  400);
  EXPECT_FALSE(api.IsHeavy(Get("/api/history/runs")));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mi::server
