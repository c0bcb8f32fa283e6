#include "diff/diff_internal.h"

namespace mi {

std::string_view DefaultFailOn() { return ""; }

StatusOr<std::vector<DiffRule>> ParseFailOn(std::string_view /*spec*/) {
  return std::vector<DiffRule>{};
}

void ApplyDiffRules(const std::vector<DiffRule>& /*rules*/,
                    DiffReport& /*report*/) {}

}  // namespace mi
