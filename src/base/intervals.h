#pragma once

// Time intervals [start, end) in ns as the analyses combine them: merged
// into sorted disjoint runs, and the time such runs cover inside a window.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace mi {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// Sorted, disjoint intervals: overlapping and touching ones joined, empty
// ones dropped.
inline Intervals MergeIntervals(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(s, e);
    }
  }
  return out;
}

// The time merged intervals `v` cover inside [start, end).
inline int64_t CoveredIn(const Intervals& v, int64_t start, int64_t end) {
  auto it = std::lower_bound(v.begin(), v.end(), start,
                             [](const std::pair<int64_t, int64_t>& x,
                                int64_t s) { return x.second <= s; });
  int64_t total = 0;
  for (; it != v.end() && it->first < end; ++it) {
    total += std::min(it->second, end) - std::max(it->first, start);
  }
  return std::max<int64_t>(total, 0);
}

}  // namespace mi
