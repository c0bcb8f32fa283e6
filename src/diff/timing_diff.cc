#include "diff/diff_internal.h"

namespace mi::diff {

void DiffTiming(const RunDigest& /*base*/, const RunDigest& /*next*/,
                const DiffOptions& /*options*/, DiffReport* /*report*/) {}

}  // namespace mi::diff
