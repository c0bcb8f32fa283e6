// Fuzzes the rank-summary reader and the cluster analyses on what it reads:
// `cluster` accepts summary files from anywhere (`cluster reduce` on other
// machines, an external map/merge), so a crafted one must give a clear
// error or a report, never a crash. The reader takes a path, so the input
// is written to a temporary file first. A Status error is fine; a crash, a
// sanitizer report or kInternal is a bug.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/check.h"
#include "encoders/json_encoder.h"
#include "model_inspector/cluster.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                     "/cluster_summary_fuzz_XXXXXX";
  const int fd = mkstemp(path.data());
  MI_CHECK(fd >= 0);
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    MI_CHECK(n > 0);
    written += static_cast<size_t>(n);
  }
  close(fd);
  mi::StatusOr<mi::ClusterSummary> summary = mi::ReadClusterSummary(path);
  std::remove(path.c_str());
  if (!summary.ok()) {
    MI_CHECK(summary.status().code() != mi::StatusCode::kInternal);
    return 0;
  }
  // What `cluster` does with it: analyse, then write the report.
  mi::StatusOr<mi::ClusterReport> report =
      mi::AnalyzeCluster(*summary, mi::ClusterAnalysisOptions{});
  if (!report.ok()) {
    MI_CHECK(report.status().code() != mi::StatusCode::kInternal);
    return 0;
  }
  MI_CHECK(!mi::encoders::EncodeJson(*report).empty());
  return 0;
}
