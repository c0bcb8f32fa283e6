#pragma once

// The summary figures the run history keeps of a digest: median and spread
// of the total time over the digest's runs, as diff.h's TimingStat defines
// them (spread = p75 - p25, linearly interpolated between the sorted runs;
// 0 with one run).

#include <cstdint>
#include <vector>

namespace mi::history {

struct MedianSpread {
  int64_t median_ns = -1;  // -1: no runs
  int64_t spread_ns = -1;
};

// The q-quantile (0..1) of `sorted`, interpolated between neighbours at
// position q * (n - 1) (numpy's default "linear" method).
double Quantile(const std::vector<int64_t>& sorted, double q);
MedianSpread MedianAndSpread(std::vector<int64_t> run_ns);

}  // namespace mi::history
