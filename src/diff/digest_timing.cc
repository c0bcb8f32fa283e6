#include "diff/diff_internal.h"

namespace mi::diff {

void DigestTiming(const analysis::AnalysisContext& /*run*/,
                  RunDigest* /*digest*/) {}

}  // namespace mi::diff
