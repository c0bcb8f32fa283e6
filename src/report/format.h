#pragma once

// Numbers as the reports print them.

#include <cstdint>
#include <string>

namespace mi::report {

// A duration with a unit fit for its size: "950 ns", "12.5 us",
// "9.75 ms", "1.234 s".
std::string Duration(int64_t ns);
// The same with a sign: "+1.20 ms", "-12.5 us", "0 ns".
std::string SignedDuration(int64_t ns);
// "+12.3%", "-4.0%", "0.0%".
std::string SignedPercent(double pct);
// "75%" (a 0..1 fraction).
std::string Percent(double fraction);

}  // namespace mi::report
