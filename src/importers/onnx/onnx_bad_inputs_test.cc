// Checks every entry of test/bad_inputs/onnx/manifest.json against the
// importers directly: the status code and message fragments, or the error
// diagnostic for files that import but hold a broken graph.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "importers/onnx/onnx_test_util.h"

namespace mi::importers {
namespace {

using namespace onnx_test;  // NOLINT: test helpers

const std::string kDir = std::string(MI_SOURCE_DIR) + "/test/bad_inputs/onnx";

TEST(OnnxBadInputsTest, EveryManifestEntryFailsAsDocumented) {
  std::ifstream in(kDir + "/manifest.json");
  ASSERT_TRUE(in.good());
  nlohmann::json manifest = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(manifest.is_array());
  ASSERT_GE(manifest.size(), 10u);
  for (const auto& entry : manifest) {
    std::string file = entry.at("file");
    SCOPED_TRACE(file);
    EXPECT_EQ(entry.at("exit_code").get<int>(),
              ExitCodeFor(StatusCode::kMalformedInput));
    std::string path = kDir + "/" + file;
    bool text = file.ends_with(".onnxtxt") || file.ends_with(".prototxt") ||
                file.ends_with(".onnx.json");
    auto head = ReadFileHead(path, kSniffLookahead);
    ASSERT_TRUE(head.ok());
    if (!head->empty()) {
      int score =
          text ? SniffOnnxText(*head, path) : SniffOnnxBinary(*head, path);
      EXPECT_GT(score, 50) << "must be detected as ONNX to reach the importer";
    }
    auto r = ImportFile(path, text);
    std::string message;
    if (entry.contains("status")) {
      EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
      std::string code(StatusCodeName(r->status.code()));
      std::replace(code.begin(), code.end(), ' ', '_');
      EXPECT_EQ(code, entry.at("status"));
      message = r->status.message();
      EXPECT_EQ(message.rfind(path, 0), 0u) << "starts with the file name";
    } else {
      ASSERT_TRUE(r->status.ok()) << r->status.ToString();
      bool found = false;
      for (const Diagnostic& d : r->diagnostics.log()) {
        if (DiagnosticName(d.code) == entry.at("diagnostic")) {
          EXPECT_EQ(DiagnosticSeverity(d.code), Severity::kError);
          message = d.message;
          found = true;
        }
      }
      EXPECT_TRUE(found);
    }
    for (const auto& fragment : entry.at("message")) {
      EXPECT_NE(message.find(fragment.get<std::string>()), std::string::npos)
          << "'" << fragment.get<std::string>() << "' not in: " << message;
    }
  }
}

}  // namespace
}  // namespace mi::importers
