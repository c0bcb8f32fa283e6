#pragma once

// The links between the three levels, computed by the linker:
//  compiled node -> framework nodes it replaced (fused_from),
//  node -> tasks that executed it (mapped_task_ids; the task side is
//  Trace::task_node), and each node's status. Lists are CSR per node id.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/ids.h"
#include "model/model.h"

namespace mi {

// A list of ids per node, stored compactly (CSR).
template <typename Id>
class NodeIdLists {
 public:
  void Build(size_t node_count,
             const std::vector<std::pair<NodeId, Id>>& items);
  std::span<const Id> Get(NodeId n) const {
    if (n.value() + 1 >= begin_.size()) return {};
    return std::span<const Id>(items_.data() + begin_[n.value()],
                               begin_[n.value() + 1] - begin_[n.value()]);
  }
  size_t total() const { return items_.size(); }

 private:
  std::vector<uint32_t> begin_;
  std::vector<Id> items_;
};

// How a compiled node was matched to framework nodes (why fused_from holds
// what it holds), for reports and tests.
enum class MatchKind : uint8_t {
  kNone,         // framework node, or no compiled graph
  kSameName,     // compiled node keeps a framework node's name
  kDerivedName,  // name derived from a framework node/tensor name
  kStructural,   // found from tensors between its inputs and outputs
  kDeclared,     // the compiler says so (GE _datadump_original_op_names)
  kInserted,     // added by the compiler: covers no framework node
  kUnexplained,  // covers nothing and is not a known inserted op type
};
std::string_view MatchKindName(MatchKind kind);

struct Links {
  NodeIdLists<NodeId> fused_from;     // compiled -> framework
  NodeIdLists<NodeId> fused_into;     // framework -> compiled (reverse)
  NodeIdLists<TaskId> mapped_tasks;   // node -> tasks
  std::vector<NodeStatus> status;     // per node
  std::vector<MatchKind> match_kind;  // per node
  // Per node: a framework node a compiled node is named after.
  std::vector<bool> is_anchor;
  // Framework nodes folded into constants by the compiler.
  std::vector<NodeId> folded;
  // Framework nodes covered by no compiled node and not folded.
  std::vector<NodeId> eliminated;
  uint32_t unexplained_compiled_nodes = 0;
  uint32_t linked_tasks = 0;
  // PyTorch host ops aligned with the nodes of an ONNX export.
  uint32_t aligned_host_ops = 0;
  uint32_t unlinked_tasks = 0;  // execution tasks without a node
  // Why, for the unlinked execution tasks: the task names no node (copies,
  // waits, collectives), names one the loaded graph lacks, names one that
  // several nodes share without its op type deciding among them, or no
  // graph is loaded at all.
  uint32_t unlinked_without_node_name = 0;
  uint32_t unlinked_unknown_node = 0;
  uint32_t unlinked_ambiguous_node = 0;
  uint32_t unlinked_no_graph = 0;
  bool has_compiled_link = false;
};

template <typename Id>
void NodeIdLists<Id>::Build(size_t node_count,
                            const std::vector<std::pair<NodeId, Id>>& items) {
  begin_.assign(node_count + 1, 0);
  for (const auto& [node, id] : items) ++begin_[node.value() + 1];
  for (size_t i = 0; i < node_count; ++i) begin_[i + 1] += begin_[i];
  items_.assign(items.size(), Id());
  std::vector<uint32_t> fill(begin_.begin(), begin_.end() - 1);
  for (const auto& [node, id] : items) items_[fill[node.value()]++] = id;
}

}  // namespace mi
