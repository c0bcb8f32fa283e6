#pragma once

// Links a PyTorch trace's framework ops (aten::conv2d, aten::relu_, ...) to
// the nodes of an ONNX export of the same model. The trace names no graph
// node, but torch.onnx.export writes nodes in execution order, so within one
// run (ProfilerStep) the outermost aten ops and the graph's nodes are two
// sequences of the same computation: they are aligned by op kind (longest
// common subsequence), which tolerates ops the export folded away
// (batch_norm into Conv) and nodes the trace does not show.

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "model/model.h"
#include "trace/trace.h"

namespace mi::linker {

// ONNX op types an aten op may have been exported as; empty when unknown.
std::vector<std::string_view> OnnxOpTypesForAtenOp(std::string_view aten);

// Sets the node of each aligned host op, of the host ops nested in it and of
// the device work it launched; appends (node, task) pairs. Returns the
// number of host ops aligned. Runs whose alignment table would exceed
// `max_cells` are skipped (quadratic work).
uint32_t AlignHostOpsToGraph(const Model& model, Trace* trace,
                             GraphId framework,
                             std::vector<std::pair<NodeId, TaskId>>* node_tasks,
                             uint64_t max_cells = 50'000'000);

}  // namespace mi::linker
