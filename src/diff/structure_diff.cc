#include "diff/diff_internal.h"

namespace mi::diff {

void DiffStructure(const RunDigest& /*base*/, const RunDigest& /*next*/,
                   const DiffOptions& /*options*/, DiffReport* /*report*/) {}

void DiffLevels(const RunDigest& /*run*/, const DiffOptions& /*options*/,
                DiffReport* /*report*/) {}

}  // namespace mi::diff
