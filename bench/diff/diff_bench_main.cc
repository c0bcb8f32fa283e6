// Times the regression gate's graph half on two runs: digesting each
// (open + DigestLevels), writing and reading the digest text, and the
// structural diff (bench/diff/bench_diff.sh makes the synthetic models).
// Times are process CPU seconds.
//
//   mi_bench_diff BASE_FILE NEW_FILE

#include <cstdio>
#include <ctime>
#include <string>

#include "model_inspector/diff.h"

namespace {

// Process CPU time: the machines this runs on are shared, and wall time
// there measures the neighbours.
struct Clock {
  static std::clock_t now() { return std::clock(); }
};

double Seconds(std::clock_t since) {
  return static_cast<double>(std::clock() - since) / CLOCKS_PER_SEC;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s BASE_FILE NEW_FILE\n", argv[0]);
    return 2;
  }
  mi::RunDigest sides[2];
  for (int i = 0; i < 2; ++i) {
    auto t = Clock::now();
    mi::DiffInputOptions options;
    options.paths = {argv[1 + i]};
    mi::StatusOr<mi::RunDigest> d = mi::LoadDiffInput(options);
    if (!d.ok()) {
      std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
      return 3;
    }
    sides[i] = std::move(*d);
    size_t nodes = 0;
    for (const mi::DigestLevel& l : sides[i].levels) nodes += l.nodes.size();
    std::printf("open+digest %s: %zu nodes, %.3f s\n", argv[1 + i], nodes,
                Seconds(t));
  }
  auto t = Clock::now();
  std::string json = mi::RunDigestJson(sides[0]);
  std::printf("RunDigestJson: %zu bytes, %.3f s\n", json.size(), Seconds(t));
  t = Clock::now();
  mi::StatusOr<mi::RunDigest> back = mi::ParseRunDigest(json, "base");
  if (!back.ok()) {
    std::fprintf(stderr, "%s\n", back.status().ToString().c_str());
    return 3;
  }
  std::printf("ParseRunDigest: %.3f s\n", Seconds(t));
  t = Clock::now();
  mi::StatusOr<mi::DiffReport> r =
      mi::DiffRuns(sides[0], sides[1], mi::DiffOptions{});
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 3;
  }
  std::printf("DiffRuns: %.3f s\n", Seconds(t));
  for (const mi::LevelDiff& l : r->structure) {
    std::printf(
        "  %s: %lld -> %lld nodes, by name %lld, by structure %lld, added "
        "%lld, removed %lld, changed %lld, renamed %lld\n",
        l.level.c_str(), static_cast<long long>(l.base_nodes),
        static_cast<long long>(l.new_nodes),
        static_cast<long long>(l.matched_by_name),
        static_cast<long long>(l.matched_by_structure),
        static_cast<long long>(l.added), static_cast<long long>(l.removed),
        static_cast<long long>(l.changed), static_cast<long long>(l.renamed));
  }
  return 0;
}
