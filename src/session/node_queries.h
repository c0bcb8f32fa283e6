#pragma once

// Helpers shared by the node queries (node_queries.cc), the Model
// Explorer export (model_explorer_export.cc) and the timeline and mapping
// queries.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "base/json_writer.h"
#include "model/model.h"
#include "model_inspector/session.h"
#include "model_inspector/status.h"

namespace mi {

// {"id", "name", "op_type", "level"} of a node: node details, task details
// and mapping rows.
void WriteNodeRef(JsonWriter& w, const Model& m, NodeId n);

// The root graph of a level ("framework" | "compiled" | "stage:<Stage>");
// NotFound for any other name or a level this run lacks.
StatusOr<GraphId> LevelRoot(const Session::Impl& run, std::string_view level);

// GE graph-dump stages as levels, in dump order (the global index in the file
// names), when a run holds two or more: "stage:PreRunBegin", ...,
// "stage:Build" ("stage:Build@graph_2" when two graphs share a stage name),
// so any two can be compared.
std::vector<std::pair<std::string, GraphId>> StageLevels(
    const Session::Impl& run);

}  // namespace mi
