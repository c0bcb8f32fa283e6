// GET / POST /api/session and the refusals of /api/runs/{run}/probes/run,
// through the router (no network), on the resnet18 fixture run. Expected
// values are written out here; the re-run itself (the Python runner as a
// subprocess) is tested end to end by web/test/e2e_probes_test.mjs.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model_inspector/probes.h"
#include "model_inspector/saved_session.h"
#include "model_inspector/session.h"
#include "server/api.h"
#include "server/probe_rerun.h"
#include "server/session_file_api.h"

namespace mi::server {
namespace {

namespace fs = std::filesystem;

const std::string kModel =
    std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18/model.onnx";

std::unique_ptr<Session> Open(const std::string& path) {
  OpenOptions options;
  options.paths = {path};
  auto session = Session::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return std::move(session).value();
}

class SessionFileApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") +
                          "/mi_session_file_api_test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    // A run directory holding the model and one input.
    fs::create_directories(root_ / "runs" / "r1");
    fs::copy_file(kModel, root_ / "runs" / "r1" / "model.onnx");
    std::ofstream(root_ / "runs" / "r1" / "x.npy") << "not read by the test";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<Api> MakeApi(std::shared_ptr<SessionFileApi> file) {
    std::vector<ServedRun> runs;
    std::string dir = (root_ / "runs" / "r1").string();
    runs.push_back({"r1", {dir}, Open(dir)});
    ApiOptions options;
    options.session_file = std::move(file);
    RerunOptions rerun;
    rerun.python = "/bin/false";  // never started by these tests
    options.rerun = std::make_shared<ProbeRerunner>(rerun);
    return std::make_unique<Api>(std::move(runs), std::move(options));
  }

  static HttpRequest Post(std::string path, std::string body) {
    HttpRequest r;
    r.method = "POST";
    r.path = std::move(path);
    r.body = std::move(body);
    r.headers = {{"Content-Type", "application/json"},
                 {"Host", "127.0.0.1:8080"},
                 {"Origin", "http://127.0.0.1:8080"}};
    return r;
  }
  static HttpRequest Get(std::string path) {
    HttpRequest r;
    r.path = std::move(path);
    return r;
  }
  static nlohmann::json Parse(const HttpResponse& r) {
    return nlohmann::json::parse(r.content());
  }

  fs::path root_;
};

TEST_F(SessionFileApiTest, SaveWritesTheFileWithRelativePaths) {
  std::string mis = (root_ / "s.mis").string();
  auto api = MakeApi(std::make_shared<SessionFileApi>(mis, std::nullopt));
  HttpResponse before = api->Handle(Get("/api/session"));
  ASSERT_EQ(before.status, 200) << before.content();
  EXPECT_EQ(Parse(before)["restored"], false);
  EXPECT_TRUE(Parse(before)["session"].is_null());

  HttpResponse saved = api->Handle(Post(
      "/api/session", R"({
    "format": "model-inspector-session", "version": 1,
    "bookmarks": [{"run": 0, "level": "framework", "node": 7,
                   "name": "/conv1/Conv", "op": "Conv"}],
    "notes": [{"run": 0, "level": "framework", "node": 7,
               "name": "/conv1/Conv", "op": "Conv", "text": "first conv"}],
    "probes": {"patterns": ["/conv1/Conv"], "triggers": ["nan"],
               "keep": "stats", "input": 1,
               "inputs": ["/etc/passwd", ")" +
                          (root_ / "runs" / "r1" / "x.npy").string() + R"("]},
    "view": {"hash": "run=0&level=framework&node=7",
             "viewport": {"x": 1, "y": 2, "scale": 0.5},
             "probe_stat": "mean"}})"));
  ASSERT_EQ(saved.status, 200) << saved.content();
  EXPECT_EQ(Parse(saved)["saved"], mis);
  // The file: the served run and the input the server offers (a path it
  // does not offer is dropped), relative to the session's folder.
  auto read = ReadSavedSession(mis);
  ASSERT_TRUE(read.ok()) << read.status().message();
  nlohmann::json doc =
      nlohmann::json::parse(std::ifstream(mis), nullptr, false);
  EXPECT_EQ(doc["runs"][0]["paths"][0], "runs/r1");
  EXPECT_EQ(doc["runs"][0]["name"], "r1");
  ASSERT_EQ(doc["probes"]["inputs"].size(), 1u);
  EXPECT_EQ(doc["probes"]["inputs"][0], "runs/r1/x.npy");
  EXPECT_EQ(doc["probes"]["input"], 0);
  EXPECT_EQ(doc["notes"][0]["text"], "first conv");
  EXPECT_EQ(read->view.probe_stat, "mean");
  EXPECT_EQ(read->view.viewport->scale, 0.5);
  // GET answers what was saved.
  EXPECT_EQ(
      Parse(api->Handle(Get("/api/session")))["session"]["notes"][0]["text"],
      "first conv");
}

TEST_F(SessionFileApiTest, WithoutAFileTheDocumentIsForTheBrowser) {
  auto api = MakeApi(nullptr);
  HttpResponse r = api->Handle(
      Post("/api/session",
           R"({"format": "model-inspector-session", "version": 1})"));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = Parse(r);
  EXPECT_TRUE(j["saved"].is_null());
  nlohmann::json doc = nlohmann::json::parse(j["document"].get<std::string>());
  // Absolute paths: the folder it will be saved in is not known.
  EXPECT_EQ(doc["runs"][0]["paths"][0], (root_ / "runs" / "r1").string());
}

TEST_F(SessionFileApiTest, RefusesForeignAndBrokenPosts) {
  std::string mis = (root_ / "s.mis").string();
  auto api = MakeApi(std::make_shared<SessionFileApi>(mis, std::nullopt));
  HttpRequest other = Post("/api/session", "{}");
  other.headers[2].second = "http://evil.example";
  EXPECT_EQ(api->Handle(other).status, 403);
  HttpRequest form = Post("/api/session", "{}");
  form.headers[0].second = "text/plain";
  EXPECT_EQ(api->Handle(form).status, 415);
  HttpResponse bad = api->Handle(Post("/api/session", R"({"format": "x"})"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(Parse(bad)["error"]["message"].get<std::string>().find(
                "request body: format: expected \"model-inspector-session\""),
            std::string::npos);
  EXPECT_FALSE(fs::exists(mis));
}

TEST_F(SessionFileApiTest, RerunStateAndRefusals) {
  auto api = MakeApi(nullptr);
  HttpResponse state = api->Handle(Get("/api/runs/0/probes/run"));
  ASSERT_EQ(state.status, 200) << state.content();
  nlohmann::json j = Parse(state);
  EXPECT_EQ(j["runnable"], true) << j.dump();
  EXPECT_EQ(j["model"], (root_ / "runs" / "r1" / "model.onnx").string());
  EXPECT_EQ(j["run_dir"], (root_ / "runs" / "r1").string());
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0], (root_ / "runs" / "r1" / "x.npy").string());
  EXPECT_TRUE(j["job"].is_null());

  auto refused = [&](std::string body, std::string expected) {
    HttpResponse r = api->Handle(Post("/api/runs/0/probes/run", body));
    EXPECT_EQ(r.status, 400) << body;
    std::string m = Parse(r)["error"]["message"];
    EXPECT_NE(m.find(expected), std::string::npos) << m;
  };
  refused(R"({"input": 0})", "probes: expected a list");
  refused(R"({"probes": [], "input": 0})", "probes: expected a list of 1..");
  refused(R"({"probes": ["--model=/etc/passwd"], "input": 0})",
          "not starting with '-'");
  refused(R"({"probes": ["a"], "input": 1})",
          "input: expected -1 or an index 0..0");
  refused(R"({"probes": ["a"], "input": 0, "keep": "all"})",
          "keep: expected \"stats\" or \"tensor\"");
  HttpRequest other = Post("/api/runs/0/probes/run", R"({"probes": ["a"]})");
  other.headers[2].second = "http://evil.example";
  EXPECT_EQ(api->Handle(other).status, 403);
  // Nothing was started.
  EXPECT_TRUE(
      Parse(api->Handle(Get("/api/runs/0/probes/run")))["job"].is_null());
}

// Two probe runs written through the store's C++ API: conv1's output mean
// 0.5 then 0.75, relu's max 1 then 1; the compare of the newest against
// the one before: conv1 fails msprobe's statistics rule (|0.75 - 0.5| /
// 0.5 = 0.5 relative error of the mean is not above 0.5, but min 0 -> 1
// has relative error 1/eps, above it), relu passes (equal statistics).
TEST_F(SessionFileApiTest, CompareOfTheNewestRunAgainstTheOneBefore) {
  std::string dir = (root_ / "runs" / "r1").string();
  auto store = ProbeStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto add = [&](double conv_mean, double conv_min) {
    auto id = (*store)->BeginRun(ProbeRunInfo{});
    ASSERT_TRUE(id.ok());
    ProbeRecord conv;
    conv.run = *id;
    conv.probe = "/conv1/Conv:0";
    conv.node = "/conv1/Conv";
    conv.order = 0;
    conv.stats.count = 4;
    conv.stats.min = conv_min;
    conv.stats.max = 1;
    conv.stats.mean = conv_mean;
    conv.stats.l2 = 2;
    conv.stats.dtype = "float32";
    ASSERT_TRUE((*store)->AddStats(conv).ok());
    ProbeRecord relu = conv;
    relu.probe = "/relu/Relu:0";
    relu.node = "/relu/Relu";
    relu.order = 1;
    relu.stats.min = 0;
    relu.stats.mean = 0.5;
    ASSERT_TRUE((*store)->AddStats(relu).ok());
    ASSERT_TRUE((*store)->EndRun(*id, "complete", "", 0).ok());
  };
  add(0.5, 0);
  add(0.75, 1);
  store->reset();
  auto api = MakeApi(nullptr);
  HttpResponse r = api->Handle(Get("/api/runs/0/probes/compare"));
  ASSERT_EQ(r.status, 200) << r.content();
  nlohmann::json j = Parse(r);
  EXPECT_EQ(j["run"], 2);
  EXPECT_EQ(j["base"], 1);
  auto model = Open(kModel);
  auto conv = model->FindNodeId("framework", "/conv1/Conv");
  auto relu = model->FindNodeId("framework", "/relu/Relu");
  ASSERT_TRUE(conv.ok() && relu.ok());
  const nlohmann::json& c = j["nodes"][std::to_string(*conv)];
  EXPECT_EQ(c["fail"], 1) << j.dump();
  EXPECT_DOUBLE_EQ(c["stats_mean_rel_err"].get<double>(), 0.25 / 0.5);
  EXPECT_EQ(j["nodes"][std::to_string(*relu)]["fail"], 0) << j.dump();
  EXPECT_EQ(j["first_divergent"], *conv);
  EXPECT_EQ(j["first_divergent_node"], "/conv1/Conv");
  HttpRequest bad_request = Get("/api/runs/0/probes/compare");
  bad_request.params = {{"base", "x"}};
  HttpResponse bad = api->Handle(bad_request);
  EXPECT_EQ(bad.status, 400);
}

TEST(RerunTargetTest, NeedsAnOnnxModelAndARunDirectory) {
  ServedRun failed;
  failed.paths = {"x"};
  EXPECT_EQ(RerunTargetOf(failed).reason, "the run could not be opened");
  ServedRun file{"m", {kModel}, Open(kModel)};
  RerunTarget t = RerunTargetOf(file);
  EXPECT_EQ(t.model, kModel);
  EXPECT_NE(t.reason.find("not opened from a run directory"),
            std::string::npos);
}

}  // namespace
}  // namespace mi::server
