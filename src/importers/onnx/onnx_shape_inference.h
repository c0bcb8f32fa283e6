#pragma once

// ONNX shape inference (libonnx's InferShapes) run on untrusted models
// without trusting it: known attribute values its inference functions cannot
// take (a stride of 0 divides by zero) are found first and their nodes are
// left out of inference, and the call itself runs in a forked child process,
// so that a crash, an abort or a hang inside libonnx costs a warning and the
// shapes it would have inferred, never the process (a server holding other
// runs included). See README.md, "Shape inference".

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class ModelProto;
class NodeProto;
}  // namespace onnx

namespace mi::importers::onnx_import {

// A node whose attributes libonnx's inference must not see.
struct NodeUnfitForInference {
  const ::onnx::NodeProto* node = nullptr;
  // "attribute strides[0] is 0; expected an integer >= 1"
  std::string reason;
};

// Walks the graph, its bodies (to kMaxSubgraphDepth) and the model-local
// functions for the attribute values known to crash libonnx 1.12's
// inference: strides, dilations and kernel_shape of the convolution and
// pooling ops below 1 (division by zero, SIGFPE), GatherND's batch_dims
// below 0 (reads before its shape).
std::vector<NodeUnfitForInference> FindNodesUnfitForInference(
    const ::onnx::ModelProto& model);

// What the child process is made to do instead of inferring; tests use it
// to exercise the crash and the timeout paths of the real isolation.
enum class InferenceChildFault : uint8_t { kNone, kSegfault, kHang };

struct IsolatedInferenceOptions {
  // The child is killed when it has not answered by then.
  std::chrono::milliseconds deadline{60000};
  // After a crash, the main-graph node it crashed in is looked for (a
  // bisection, a child per step, within `locate_budget`) and left out, and
  // the rest is inferred again; up to this many nodes.
  size_t max_crashing_nodes_left_out = 3;
  std::chrono::milliseconds locate_budget{10000};
  InferenceChildFault fault_for_testing = InferenceChildFault::kNone;
};

struct CrashedNode {
  const ::onnx::NodeProto* node = nullptr;
  std::string crash;  // "crashed (SIGFPE)"
};

struct IsolatedInferenceResult {
  bool applied = false;  // the inferred types were written into the model
  // Why not, for the warning: "crashed (SIGFPE)", "failed: <libonnx's
  // message>", "did not finish within 60 s", "could not start (fork: ...)".
  std::string problem;
  // Main-graph nodes inference crashed in, left out of the final run.
  std::vector<CrashedNode> crashed_in;
};

// Runs InferShapes(check_type=false, error_mode=0, data_propagation=true)
// on `model` in a forked child, with the `skip` nodes' op types replaced in
// the child's copy by one no schema has (libonnx then skips them, as it
// skips contrib ops). The child sends back the input, output and value_info
// lists of every graph and body; the parent writes them into `model`. On any
// problem `model` is left as it was. After a crash, the main-graph node it
// crashed in is found and left out, and the rest is inferred again.
IsolatedInferenceResult InferShapesIsolated(
    ::onnx::ModelProto& model,
    const std::vector<const ::onnx::NodeProto*>& skip,
    const IsolatedInferenceOptions& options);

}  // namespace mi::importers::onnx_import
