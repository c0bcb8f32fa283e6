// Fuzzes the run-digest reader and the structural diff on what it reads:
// digests come from other machines (CI artefacts, the run history), so a
// crafted one must give a clear error or a diff, never a crash. What the
// reader accepts must write back to text it reads again unchanged. A
// Status error is fine; a crash, a sanitizer report or kInternal is a bug.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/check.h"
#include "model_inspector/diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  mi::StatusOr<mi::RunDigest> digest = mi::ParseRunDigest(text, "fuzz");
  if (!digest.ok()) {
    MI_CHECK(digest.status().code() != mi::StatusCode::kInternal);
    return 0;
  }
  // The writer's text reads back to itself.
  const std::string json = mi::RunDigestJson(*digest);
  mi::StatusOr<mi::RunDigest> again = mi::ParseRunDigest(json, "fuzz-again");
  MI_CHECK(again.ok());
  MI_CHECK(mi::RunDigestJson(*again) == json);

  // The diff against itself, against a copy missing each level's first
  // node (unmatched nodes, dangling fused_from), and of its own levels.
  mi::DiffOptions options;
  options.levels_within_run = true;
  mi::StatusOr<mi::DiffReport> same = mi::DiffRuns(*digest, *digest, options);
  if (!same.ok()) {
    MI_CHECK(same.status().code() != mi::StatusCode::kInternal);
    return 0;
  }
  for (const mi::LevelDiff& level : same->structure) {
    if (level.level == "framework->compiled") continue;
    MI_CHECK(level.added == 0 && level.removed == 0);
    MI_CHECK(level.fusions_lost == 0 && level.fusions_gained == 0);
  }
  mi::RunDigest fewer = *digest;
  for (mi::DigestLevel& level : fewer.levels) {
    if (!level.nodes.empty()) level.nodes.erase(level.nodes.begin());
  }
  mi::StatusOr<mi::DiffReport> diff = mi::DiffRuns(*digest, fewer, options);
  if (diff.ok()) {
    for (const mi::LevelDiff& level : diff->structure) {
      MI_CHECK(level.matches.size() <= static_cast<size_t>(level.new_nodes));
    }
  }
  mi::StatusOr<mi::DiffReport> levels =
      mi::DiffLevelsWithinRun(*digest, mi::DiffOptions{});
  (void)levels;
  return 0;
}
