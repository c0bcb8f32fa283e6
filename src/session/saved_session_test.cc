// Saved sessions (.mis): written by one folder, read back from a copy of
// that folder elsewhere (relative paths), and the errors a broken or
// incomplete session gives. Every expected value is written out here.

#include "model_inspector/saved_session.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace mi {
namespace {

namespace fs = std::filesystem;

class SavedSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") +
                          "/mi_saved_session_test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Touch(const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x";
  }
  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A session over <dir>/runs/r1 (a folder) and <dir>/x.npy, saved as
  // <dir>/work/s.mis.
  SavedSession Example(const fs::path& dir) {
    SavedSession s;
    s.runs.push_back({"r1", {(dir / "runs" / "r1").string()}});
    s.probes.patterns = {"layer1/*/conv*", "/fc/Gemm:0"};
    s.probes.triggers = {"nan", "range:-10:10"};
    s.probes.keep = "tensor";
    s.probes.inputs = {(dir / "x.npy").string()};
    s.probes.input = 0;
    s.bookmarks.push_back(
        {0, "framework", 12, "/layer1/layer1.0/conv1/Conv", "Conv"});
    s.notes.push_back(
        {{0, "compiled", 3, "/conv1/Conv", "FusedConv"}, "NaN starts here"});
    s.view.hash = "run=0&level=framework&node=12&color=probe";
    s.view.viewport = SavedViewport{-40.5, 120, 0.75};
    s.view.probe_stat = "nan";
    return s;
  }

  fs::path root_;
};

TEST_F(SavedSessionTest, WritesPathsRelativeToTheSessionFolder) {
  fs::path a = root_ / "a";
  Touch(a / "runs" / "r1" / "model.onnx");
  Touch(a / "x.npy");
  fs::create_directories(a / "work");
  std::string mis = (a / "work" / "s.mis").string();
  ASSERT_TRUE(WriteSavedSession(mis, Example(a)).ok());
  nlohmann::json doc = nlohmann::json::parse(Slurp(mis));
  EXPECT_EQ(doc["format"], "model-inspector-session");
  EXPECT_EQ(doc["version"], 1);
  // From a/work to a/runs/r1 and a/x.npy.
  EXPECT_EQ(doc["runs"][0]["paths"][0], "../runs/r1");
  EXPECT_EQ(doc["probes"]["inputs"][0], "../x.npy");
  EXPECT_EQ(doc["probes"]["input"], 0);
  EXPECT_EQ(doc["notes"][0]["text"], "NaN starts here");
  EXPECT_EQ(doc["view"]["viewport"]["x"], -40.5);
}

TEST_F(SavedSessionTest, RestoresFromACopiedFolder) {
  fs::path a = root_ / "a";
  Touch(a / "runs" / "r1" / "model.onnx");
  Touch(a / "x.npy");
  fs::create_directories(a / "work");
  ASSERT_TRUE(
      WriteSavedSession((a / "work" / "s.mis").string(), Example(a)).ok());
  // "Another machine": the whole folder somewhere else, the original gone.
  fs::path b = root_ / "elsewhere" / "b";
  fs::create_directories(b.parent_path());
  fs::rename(a, b);
  auto read = ReadSavedSession((b / "work" / "s.mis").string());
  ASSERT_TRUE(read.ok()) << read.status().message();
  const SavedSession& s = *read;
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0].name, "r1");
  EXPECT_EQ(s.runs[0].paths[0], (b / "runs" / "r1").string());
  EXPECT_EQ(s.probes.inputs[0], (b / "x.npy").string());
  EXPECT_EQ(s.probes.patterns,
            (std::vector<std::string>{"layer1/*/conv*", "/fc/Gemm:0"}));
  EXPECT_EQ(s.probes.triggers,
            (std::vector<std::string>{"nan", "range:-10:10"}));
  EXPECT_EQ(s.probes.keep, "tensor");
  EXPECT_EQ(s.probes.input, 0);
  ASSERT_EQ(s.bookmarks.size(), 1u);
  EXPECT_EQ(s.bookmarks[0].node, 12);
  EXPECT_EQ(s.bookmarks[0].level, "framework");
  EXPECT_EQ(s.bookmarks[0].op, "Conv");
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].at.level, "compiled");
  EXPECT_EQ(s.notes[0].at.node, 3);
  EXPECT_EQ(s.notes[0].text, "NaN starts here");
  EXPECT_EQ(s.view.hash, "run=0&level=framework&node=12&color=probe");
  ASSERT_TRUE(s.view.viewport.has_value());
  EXPECT_EQ(s.view.viewport->x, -40.5);
  EXPECT_EQ(s.view.viewport->y, 120);
  EXPECT_EQ(s.view.viewport->scale, 0.75);
  EXPECT_EQ(s.view.probe_stat, "nan");
}

TEST_F(SavedSessionTest, AMissingInputIsNamed) {
  fs::path a = root_ / "a";
  Touch(a / "runs" / "r1" / "model.onnx");
  // x.npy is never written.
  std::string mis = (a / "s.mis").string();
  ASSERT_TRUE(WriteSavedSession(mis, Example(a)).ok());
  auto read = ReadSavedSession(mis);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  const std::string& m = read.status().message();
  EXPECT_NE(m.find("probe input 'x.npy' not found"), std::string::npos) << m;
  EXPECT_NE(m.find((a / "x.npy").string()), std::string::npos) << m;

  fs::remove_all(a / "runs");
  Touch(a / "x.npy");
  read = ReadSavedSession(mis);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(
      read.status().message().find("run 0 (r1): input 'runs/r1' not found"),
      std::string::npos)
      << read.status().message();
}

TEST_F(SavedSessionTest, BrokenDocumentsSayWhere) {
  auto parse = [](std::string_view text) {
    return ParseSavedSession(text, "/base", "s.mis");
  };
  EXPECT_EQ(parse("{").status().code(), StatusCode::kMalformedInput);
  EXPECT_EQ(parse("{\"format\":\"other\",\"version\":1}").status().message(),
            "s.mis: format: expected \"model-inspector-session\", found "
            "\"other\"");
  EXPECT_EQ(parse("{\"format\":\"model-inspector-session\",\"version\":9}")
                .status()
                .code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(parse("{\"format\":\"model-inspector-session\",\"version\":1,"
                  "\"runs\":[{\"name\":\"r\",\"paths\":[\"a\", 3]}]}")
                .status()
                .message(),
            "s.mis: runs[0].paths[1]: expected a string");
  EXPECT_EQ(parse("{\"format\":\"model-inspector-session\",\"version\":1,"
                  "\"probes\":{\"keep\":\"all\"}}")
                .status()
                .message(),
            "s.mis: probes.keep: expected \"stats\" or \"tensor\"");
  EXPECT_EQ(parse("{\"format\":\"model-inspector-session\",\"version\":1,"
                  "\"bookmarks\":[{\"run\":0,\"level\":\"framework\"}]}")
                .status()
                .message(),
            "s.mis: bookmarks[0]: expected a node id");
  // A relative path is resolved against the session's folder.
  auto ok = parse(
      "{\"format\":\"model-inspector-session\",\"version\":1,"
      "\"runs\":[{\"name\":\"r\",\"paths\":[\"../runs/r1\"]}],"
      "\"future_key\":{\"ignored\":true}}");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->runs[0].paths[0], "/runs/r1");
}

TEST(SavedSessionPathTest, ByExtension) {
  EXPECT_TRUE(IsSavedSessionPath("a/s.mis"));
  EXPECT_FALSE(IsSavedSessionPath(".mis"));
  EXPECT_FALSE(IsSavedSessionPath("model.onnx"));
}

}  // namespace
}  // namespace mi
