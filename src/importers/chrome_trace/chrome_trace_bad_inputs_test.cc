// Replays test/bad_inputs/chrome_trace/manifest.json against the importer:
// every file must fail with a malformed-input Status whose message holds the
// expected fragments (location first), and sniff as the manifest says.

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "trace/trace.h"

namespace mi::importers {
namespace {

const std::string kDir = MI_SOURCE_DIR "/test/bad_inputs/chrome_trace/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

TEST(ChromeTraceBadInputsTest, EveryManifestEntryFailsClearly) {
  std::string manifest_text = ReadFile(kDir + "manifest.json");
  ASSERT_FALSE(manifest_text.empty());
  nlohmann::json manifest =
      nlohmann::json::parse(manifest_text, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(manifest.is_array());
  ASSERT_GE(manifest.size(), 10u);
  auto importer = CreateChromeTraceImporter();
  for (const nlohmann::json& entry : manifest) {
    const std::string file = entry["file"].get<std::string>();
    SCOPED_TRACE(file);
    std::string data = ReadFile(kDir + file);
    // Every chunking gives the same verdict.
    for (size_t chunk : {size_t{0}, size_t{1}, size_t{7}, data.size() + 1}) {
      StringPool strings;
      Trace trace(&strings);
      DiagnosticSink diagnostics;
      ImportContext ctx;
      ctx.path = file;
      ctx.trace = &trace;
      ctx.diagnostics = &diagnostics;
      ChromeTraceStats stats;
      Status status = ImportChromeTraceFromBuffer(data, ctx, &stats, chunk);
      ASSERT_FALSE(status.ok()) << "chunk " << chunk;
      EXPECT_EQ(status.code(), StatusCode::kMalformedInput);
      const int exit_code = entry["exit_code"].get<int>();
      if (exit_code != 5) {
        EXPECT_EQ(ExitCodeFor(status.code()), exit_code);
      }
      // "message" is what the CLI prints; where the CLI routes the file
      // elsewhere (or nowhere), "direct_message" is what this importer says.
      const char* key =
          entry.contains("direct_message") ? "direct_message" : "message";
      {
        for (const auto& fragment : entry[key]) {
          EXPECT_NE(status.message().find(fragment.get<std::string>()),
                    std::string::npos)
              << "chunk " << chunk << ": '" << fragment.get<std::string>()
              << "' not in: " << status.message();
        }
      }
    }
    std::string_view head(data.data(), std::min<size_t>(data.size(), 4096));
    int score = importer->Sniff(head, file);
    if (entry.contains("sniff")) {
      EXPECT_EQ(score, entry["sniff"].get<int>());
    }
    if (entry.contains("sniff_min")) {
      EXPECT_GE(score, entry["sniff_min"].get<int>());
    }
  }
}

}  // namespace
}  // namespace mi::importers
