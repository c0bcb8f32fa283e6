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

#include "importers/common/importer.h"
#include "model_inspector/status.h"

namespace mi::ge_ir {
class ModelDef;
}  // namespace mi::ge_ir

namespace mi::importers::ge {

// What a dump's file name says (ge_proto_{idx}_[aclop_]graph_{id}_{Stage}.txt
// and the older forms); index -1 / empty when absent.
struct DumpFileName {
  int64_t index = -1;
  std::string graph_id;
  std::string stage;
};
DumpFileName ParseDumpFileName(std::string_view path);

// Stages after which the graph is the compiled one (GE's Build exit graph
// and later); earlier stages are framework-level views.
bool IsCompiledStage(std::string_view stage);

Status ConvertGeModel(const ge_ir::ModelDef& model, std::string_view stage,
                      ImportContext& ctx);

}  // namespace mi::importers::ge
