// Tensor probes as the Session reads them: a run directory's probe store
// (include/model_inspector/probes.h) joined to the nodes of a level.

#include <cstdint>
#include <string_view>
#include <vector>

#include "model_inspector/session.h"
#include "session/scope_glob.h"

namespace mi {

bool ScopeGlobMatches(std::string_view pattern, std::string_view path) {
  std::vector<uint8_t> scratch;
  return ScopeGlobMatch(pattern, path, &scratch);
}

}  // namespace mi
