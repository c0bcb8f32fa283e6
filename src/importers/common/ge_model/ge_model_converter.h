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
#include <unordered_map>
#include <utility>
#include <vector>

#include "importers/common/ge_dump_names.h"
#include "importers/common/importer.h"
#include "model_inspector/status.h"

namespace mi::ge_ir {
class ModelDef;
}  // namespace mi::ge_ir

namespace mi::importers::ge {

Status ConvertGeModel(const ge_ir::ModelDef& model, std::string_view stage,
                      ImportContext& ctx);

// What an offline model (.om, importers/om) knows beyond its MODEL_DEF.
struct GeModelExtras {
  // Per op name, one line per task TASK_INFO launches for it, in task
  // order ("KERNEL te_relu_..._kernel0, stream 0, block_dim 2"): shown as
  // the node's attributes om_task_0, om_task_1, ... with om_task_count.
  std::unordered_map<std::string, std::vector<std::string>> op_tasks;
  // Per op name, the kernel binary a kernel store holds for it
  // ("TBE_KERNELS, 5136 bytes"): the node's attribute om_kernel_binary.
  std::unordered_map<std::string, std::string> op_kernels;
  // Model properties from the container (header, partitions, totals).
  std::vector<std::pair<std::string, std::string>> metadata;
  // A Const's output tensor gets its weight's size (TensorDescriptor
  // weight_size: its bytes in WEIGHTS_DATA, which stays unread) as its
  // byte size, also shown as the node's attribute om_weight_bytes.
  bool const_weight_sizes = false;
  // The graph's producer ("ATC offline model") instead of "GE".
  std::string producer;
};

Status ConvertGeModel(const ge_ir::ModelDef& model, std::string_view stage,
                      ImportContext& ctx, const GeModelExtras& extras);

}  // namespace mi::importers::ge
