#pragma once

// Helpers shared by the node queries (node_queries.cc) and the Model
// Explorer export (model_explorer_export.cc).

#include <string_view>

#include "base/ids.h"
#include "model_inspector/session.h"
#include "model_inspector/status.h"

namespace mi {

// The root graph of a level ("framework" | "compiled"); NotFound for any
// other name or a level this run lacks.
StatusOr<GraphId> LevelRoot(const Session::Impl& run, std::string_view level);

}  // namespace mi
