#include "history/run_stats.h"

#include <algorithm>
#include <cmath>

namespace mi::history {

double Quantile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) +
         frac * static_cast<double>(sorted[hi] - sorted[lo]);
}

MedianSpread MedianAndSpread(std::vector<int64_t> run_ns) {
  MedianSpread out;
  if (run_ns.empty()) return out;
  std::sort(run_ns.begin(), run_ns.end());
  out.median_ns = std::llround(Quantile(run_ns, 0.5));
  out.spread_ns = std::llround(Quantile(run_ns, 0.75) - Quantile(run_ns, 0.25));
  return out;
}

}  // namespace mi::history
