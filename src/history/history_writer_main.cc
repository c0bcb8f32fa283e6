// A writer process for the run history's crash and concurrency tests
// (history_store_test.cc): opens the store at STORE (creating it) and adds
// COUNT runs of model MODEL labelled "<LABEL>-<i>", each with a small
// digest built here; prints each new run's id on its own line.
//
// Usage: mi_history_writer_main STORE MODEL LABEL COUNT

#include <cstdio>
#include <memory>
#include <string>

#include "base/strings.h"
#include "model_inspector/history.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s STORE MODEL LABEL COUNT\n", argv[0]);
    return 2;
  }
  const std::string store_path = argv[1];
  const std::string model = argv[2];
  const std::string label = argv[3];
  const auto count = mi::ParseInteger<int>(argv[4]);
  if (!count) {
    std::fprintf(stderr, "COUNT: not a number: %s\n", argv[4]);
    return 2;
  }
  auto store = mi::HistoryStore::Open(store_path, /*create=*/true);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  for (int i = 0; i < *count; ++i) {
    mi::RunDigest digest;
    digest.meta.model = model;
    digest.meta.label = label + "-" + std::to_string(i);
    digest.meta.host = "writer";
    digest.meta.created_utc = "2026-12-02T06:00:00Z";
    digest.run_count = 3;
    digest.runs_from = "model_run";
    digest.total.key = "total";
    // Distinct per run so that a test can check each row came back whole.
    digest.total.run_ns = {1000 + i, 2000 + i, 3000 + i};
    auto id = (*store)->Add(digest);
    if (!id.ok()) {
      std::fprintf(stderr, "%s\n", id.status().ToString().c_str());
      return 1;
    }
    std::printf("%lld\n", static_cast<long long>(*id));
    std::fflush(stdout);
  }
  return 0;
}
