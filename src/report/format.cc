#include "report/format.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace mi::report {

std::string Duration(int64_t ns) {
  double a = std::abs(static_cast<double>(ns));
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{} ns", ns);
}

std::string SignedDuration(int64_t ns) {
  return ns > 0 ? "+" + Duration(ns) : Duration(ns);
}

std::string SignedPercent(double pct) {
  if (!std::isfinite(pct)) return "-";
  std::string s = fmt::format("{:+.1f}%", pct);
  return s == "+0.0%" || s == "-0.0%" ? "0.0%" : s;
}

std::string Percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  return fmt::format("{:.0f}%", fraction * 100);
}

}  // namespace mi::report
