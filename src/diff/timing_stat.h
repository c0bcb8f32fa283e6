#pragma once

// Medians, spreads and the noise rule of the timing diff
// (docs/design/diff.md "Timing").

#include <cstdint>
#include <vector>

#include "model_inspector/diff.h"

namespace mi::diff {

// Median, spread (p75 - p25, linearly interpolated as numpy's default),
// min and max of per-run values, padded with 0 to `run_count` runs.
TimingStat StatOf(const std::vector<int64_t>& values, int64_t run_count);

// The change below which a difference is noise: max(noise_floor_ns,
// noise_floor_fraction * base median, noise_spread_factor *
// sqrt(base spread^2 + new spread^2)).
int64_t NoiseOf(const TimingStat& base, const TimingStat& next,
                const DiffOptions& options);

}  // namespace mi::diff
