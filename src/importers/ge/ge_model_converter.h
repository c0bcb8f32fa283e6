#pragma once

// GraphEngine's ModelDef (from a ge_proto_*.txt graph dump, ATC JSON or an
// .om MODEL_DEF partition) into the graph data model: ops become nodes,
// "src:index" inputs become tensors named "src:index" whose dtype, shape and
// layout (NC1HWC0, FRACTAL_Z, ... with the origin format and shape) come
// from the producer's output_desc, subgraphs become nested graphs, and
// _datadump_original_op_names becomes the node's declared origin names
// (resolved to fused_from by the linker).

#include <string>
#include <string_view>

#include "importers/common/ge_dump_names.h"
#include "importers/common/importer.h"
#include "model_inspector/status.h"

namespace mi::ge_ir {
class ModelDef;
}  // namespace mi::ge_ir

namespace mi::importers::ge {

Status ConvertGeModel(const ge_ir::ModelDef& model, std::string_view stage,
                      ImportContext& ctx);

}  // namespace mi::importers::ge
