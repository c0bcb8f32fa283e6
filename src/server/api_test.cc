#include "server/api.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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
  EXPECT_EQ(total("/layer1/*/conv1/Conv", "glob"), 2);
  EXPECT_EQ(total("layer1/*/conv1/Conv", "glob"), 2);  // leading '/' optional
  EXPECT_EQ(total("layer1/*/Conv", "glob"), 0);        // '*' stays in a segment
  EXPECT_EQ(total("layer1/**/Conv", "glob"), 4);
  EXPECT_EQ(total("layer?/*/conv1/Conv", "glob"), 8);
  EXPECT_EQ(total("conv[12]/Conv$", "regex"), 17);
  EXPECT_EQ(total("**/conv?/Conv", "glob"), 17);  // '**/' may match nothing
  EXPECT_EQ(total("**conv?/Conv", "glob"), 17);
  EXPECT_EQ(total("*/conv?/Conv", "glob"), 0);
  EXPECT_EQ(total("conv1/conv", "glob"), 1);  // whole name: only /conv1/Conv
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
  const std::vector<std::string> parts = {
      "api",      "runs",       "0",        "1",      "levels",  "framework",
      "compiled", "layout",     "nodes",    "search", "summary", "..",
      ".",        "%",          "\\",       "",       "assets",  "index.html",
      "-1",       "4294967296", "\xff\xfe", "a b"};
  const std::vector<std::string> keys = {
      "q",        "mode",      "limit", "expand",    "collapse", "max_items",
      "grouping", "direction", "top",   "iteration", "token"};
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

}  // namespace
}  // namespace mi::server
