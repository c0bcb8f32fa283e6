#include "linker/fusion_matcher.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "base/strings.h"

namespace mi::linker {
namespace {

constexpr std::array<std::string_view, 18> kInsertableOpTypes = {
    "ReorderInput",
    "ReorderOutput",
    "MemcpyToHost",
    "MemcpyFromHost",
    "Cast",
    "Transpose",
    "Reshape",
    "Identity",
    "Squeeze",
    "Unsqueeze",
    "Flatten",
    "TransData",
    "TransDataRNN",
    "TransposeD",
    "Memcpy",
    "Copy",
    "LayoutTransform",
    "DynamicQuantizeLinear"};

// Disjoint sets over compiled-node positions.
class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  uint32_t Find(uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<uint32_t> parent_;
};

// One step of undoing a compiler's renaming, or nullopt when nothing applies.
// ORT: GenerateNodeName appends "_token_N"; MatMulAddFusion and friends append
// "/<Name>Fusion" or "/<Name>Fusion/"; reshape merging appends
// "_new_reshape"; QDQ appends "_quant"; old ConvActivationFusion prefixes
// "fused ".
std::optional<std::string_view> StripOneRenaming(std::string_view name) {
  if (name.starts_with("fused ")) return name.substr(6);
  size_t token = name.rfind("_token_");
  if (token != std::string_view::npos && token + 7 < name.size() &&
      std::all_of(name.begin() + token + 7, name.end(), IsAsciiDigit)) {
    return name.substr(0, token);
  }
  for (std::string_view suffix : {"_new_reshape", "_quant"}) {
    if (name.ends_with(suffix)) {
      return name.substr(0, name.size() - suffix.size());
    }
  }
  std::string_view trimmed = name;
  if (trimmed.ends_with("/")) trimmed.remove_suffix(1);
  size_t slash = trimmed.rfind('/');
  if (slash != std::string_view::npos && trimmed.ends_with("Fusion")) {
    return trimmed.substr(0, slash);
  }
  return std::nullopt;
}

class Matcher {
 public:
  Matcher(const Model& model, GraphId framework, GraphId compiled)
      : model_(model),
        fw_(framework),
        cg_(compiled),
        fw_nodes_(model.graph_nodes(framework)),
        cg_nodes_(model.graph_nodes(compiled)) {}

  FusionMatch Run() {
    IndexNodes();
    ComputeFrameworkTopoOrderAndConstants();
    MapCompiledValues();
    BuildClusters();
    result_.kinds.assign(cg_nodes_.size(), MatchKind::kNone);
    std::vector<bool> claimed(fw_nodes_.size(), false);
    for (const auto& [root, members] : clusters_) {
      MatchCluster(members, &claimed);
    }
    for (size_t i = 0; i < fw_nodes_.size(); ++i) {
      if (claimed[i]) continue;
      (is_constant_[i] ? result_.folded : result_.eliminated)
          .push_back(fw_nodes_[i]);
    }
    return std::move(result_);
  }

 private:
  void IndexNodes() {
    for (uint32_t i = 0; i < fw_nodes_.size(); ++i) {
      fw_pos_.emplace(fw_nodes_[i].value(), i);
    }
    for (uint32_t i = 0; i < cg_nodes_.size(); ++i) {
      cg_pos_.emplace(cg_nodes_[i].value(), i);
    }
  }

  // Position of the framework node producing `v`, or -1.
  int64_t FwProducerPos(ValueId v) const {
    NodeId p = model_.value_producer(v);
    if (!p.valid()) return -1;
    auto it = fw_pos_.find(p.value());
    return it == fw_pos_.end() ? -1 : it->second;
  }

  void ComputeFrameworkTopoOrderAndConstants() {
    size_t n = fw_nodes_.size();
    std::vector<uint32_t> indegree(n, 0);
    std::vector<std::vector<uint32_t>> successors(n);
    for (uint32_t i = 0; i < n; ++i) {
      for (ValueId v : model_.node_inputs(fw_nodes_[i])) {
        if (!v.valid()) continue;
        int64_t p = FwProducerPos(v);
        if (p < 0) continue;
        successors[p].push_back(i);
        ++indegree[i];
      }
    }
    std::vector<uint32_t> queue;
    for (uint32_t i = 0; i < n; ++i) {
      if (indegree[i] == 0) queue.push_back(i);
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      for (uint32_t s : successors[queue[head]]) {
        if (--indegree[s] == 0) queue.push_back(s);
      }
    }
    // Nodes on cycles (reported by the importer) keep file order at the end.
    std::vector<bool> placed(n, false);
    for (uint32_t i : queue) placed[i] = true;
    for (uint32_t i = 0; i < n; ++i) {
      if (!placed[i]) queue.push_back(i);
    }
    fw_topo_rank_.assign(n, 0);
    for (uint32_t r = 0; r < queue.size(); ++r) fw_topo_rank_[queue[r]] = r;

    // A node is constant when it is a Constant or all its inputs are
    // initializers or outputs of constant nodes: compilers fold these.
    is_constant_.assign(n, false);
    for (uint32_t i : queue) {
      NodeId node = fw_nodes_[i];
      if (model_.str(model_.node_op_type(node)) == "Constant") {
        is_constant_[i] = true;
        continue;
      }
      bool any = false;
      bool all_constant = true;
      for (ValueId v : model_.node_inputs(node)) {
        if (!v.valid()) continue;
        any = true;
        if (model_.value_flags(v) & kValueInitializer) continue;
        int64_t p = FwProducerPos(v);
        if (p < 0 || !is_constant_[p]) {
          all_constant = false;
          break;
        }
      }
      is_constant_[i] = any && all_constant;
    }
  }

  void MapCompiledValues() {
    for (NodeId c : cg_nodes_) {
      for (auto values : {model_.node_inputs(c), model_.node_outputs(c)}) {
        for (ValueId v : values) {
          if (!v.valid() || fw_of_cv_.count(v.value())) continue;
          ValueId fv = model_.FindValue(fw_, model_.str(model_.value_name(v)));
          fw_of_cv_.emplace(v.value(), fv);
          if (fv.valid()) materialized_.insert(fv.value());
        }
      }
    }
  }

  ValueId FrameworkValueOf(ValueId cv) const {
    auto it = fw_of_cv_.find(cv.value());
    return it == fw_of_cv_.end() ? ValueId::Invalid() : it->second;
  }

  void BuildClusters() {
    UnionFind sets(cg_nodes_.size());
    for (uint32_t i = 0; i < cg_nodes_.size(); ++i) {
      for (ValueId v : model_.node_outputs(cg_nodes_[i])) {
        if (!v.valid() || FrameworkValueOf(v).valid()) continue;
        // A tensor the framework does not know ties producer and consumers.
        for (NodeId consumer : model_.value_consumers(v)) {
          auto it = cg_pos_.find(consumer.value());
          if (it != cg_pos_.end()) sets.Union(i, it->second);
        }
      }
    }
    for (uint32_t i = 0; i < cg_nodes_.size(); ++i) {
      clusters_[sets.Find(i)].push_back(i);
    }
  }

  // The framework node a compiled node's name points at, if any.
  std::pair<int64_t, MatchKind> FindAnchor(NodeId c) const {
    std::string_view name = model_.str(model_.node_name(c));
    auto lookup = [&](std::string_view n) -> int64_t {
      NodeId f = model_.FindNode(fw_, n);
      if (!f.valid()) return -1;
      auto it = fw_pos_.find(f.value());
      return it == fw_pos_.end() ? -1 : it->second;
    };
    if (int64_t p = lookup(name); p >= 0) return {p, MatchKind::kSameName};
    // NCHWc transformer: node "<tensor>_nchwc" computes that tensor.
    if (name.ends_with("_nchwc")) {
      ValueId v = model_.FindValue(fw_, name.substr(0, name.size() - 6));
      if (v.valid()) {
        int64_t p = FwProducerPos(v);
        if (p >= 0) return {p, MatchKind::kDerivedName};
      }
    }
    std::string_view current = name;
    for (int step = 0; step < 8; ++step) {
      auto stripped = StripOneRenaming(current);
      if (!stripped) break;
      current = *stripped;
      if (int64_t p = lookup(current); p >= 0) {
        return {p, MatchKind::kDerivedName};
      }
    }
    return {-1, MatchKind::kNone};
  }

  void MatchCluster(const std::vector<uint32_t>& members,
                    std::vector<bool>* claimed) {
    std::unordered_set<uint32_t> member_set(members.begin(), members.end());
    // Boundary: framework-named tensors the cluster reads and writes.
    std::unordered_set<uint32_t> inputs;  // framework ValueIds
    std::vector<ValueId> outputs;
    for (uint32_t m : members) {
      for (ValueId v : model_.node_inputs(cg_nodes_[m])) {
        if (!v.valid()) continue;
        ValueId fv = FrameworkValueOf(v);
        if (fv.valid()) inputs.insert(fv.value());
      }
      for (ValueId v : model_.node_outputs(cg_nodes_[m])) {
        if (!v.valid()) continue;
        ValueId fv = FrameworkValueOf(v);
        if (fv.valid()) outputs.push_back(fv);
      }
    }
    // Region: framework nodes on paths from the inputs to the outputs.
    std::vector<uint32_t> region;
    std::unordered_set<uint32_t> in_region;
    std::vector<ValueId> stack;
    for (ValueId out : outputs) {
      int64_t p = FwProducerPos(out);
      if (p < 0 || is_constant_[p] || in_region.count(p)) continue;
      in_region.insert(static_cast<uint32_t>(p));
      region.push_back(static_cast<uint32_t>(p));
      for (ValueId v : model_.node_inputs(fw_nodes_[p])) stack.push_back(v);
    }
    while (!stack.empty()) {
      ValueId v = stack.back();
      stack.pop_back();
      if (!v.valid() || inputs.count(v.value()) ||
          materialized_.count(v.value()) ||
          (model_.value_flags(v) & (kValueInitializer | kValueGraphInput))) {
        continue;
      }
      int64_t p = FwProducerPos(v);
      if (p < 0 || is_constant_[p] || in_region.count(p)) continue;
      in_region.insert(static_cast<uint32_t>(p));
      region.push_back(static_cast<uint32_t>(p));
      for (ValueId in : model_.node_inputs(fw_nodes_[p])) stack.push_back(in);
    }
    std::sort(region.begin(), region.end(), [&](uint32_t a, uint32_t b) {
      return fw_topo_rank_[a] < fw_topo_rank_[b];
    });

    // Share the region out among the members.
    std::unordered_map<uint32_t, uint32_t> owner;  // fw pos -> member pos
    std::unordered_set<uint32_t> anchored_members;
    // A compiled node implements at most one framework op of its own op
    // type (a fused Conv covers one Conv plus what it absorbed), which keeps
    // a block's first Conv from being absorbed by the previous block's.
    std::unordered_set<uint32_t> owns_own_type;
    auto assign = [&](uint32_t f, uint32_t m) {
      owner[f] = m;
      if (model_.node_op_type(fw_nodes_[f]) ==
          model_.node_op_type(cg_nodes_[m])) {
        owns_own_type.insert(m);
      }
    };
    auto may_take = [&](uint32_t f, uint32_t m) {
      return !owns_own_type.count(m) || model_.node_op_type(fw_nodes_[f]) !=
                                            model_.node_op_type(cg_nodes_[m]);
    };
    for (uint32_t m : members) {
      auto [p, kind] = FindAnchor(cg_nodes_[m]);
      if (p >= 0 && in_region.count(static_cast<uint32_t>(p)) &&
          !owner.count(static_cast<uint32_t>(p))) {
        assign(static_cast<uint32_t>(p), m);
        anchored_members.insert(m);
        result_.kinds[m] = kind;
        result_.anchors.push_back(fw_nodes_[p]);
      }
    }
    auto upstream_of = [&](uint32_t a, uint32_t b) {
      return Reaches(a, b, member_set);
    };
    // Forward: same op type (unique, data-flow consistent), else the member
    // holding its producers (successors fuse into predecessors).
    for (uint32_t f : region) {
      if (owner.count(f)) continue;
      std::vector<uint32_t> producer_members;
      for (ValueId v : model_.node_inputs(fw_nodes_[f])) {
        if (!v.valid()) continue;
        int64_t p = FwProducerPos(v);
        if (p < 0) continue;
        auto it = owner.find(static_cast<uint32_t>(p));
        if (it != owner.end() && may_take(f, it->second) &&
            std::find(producer_members.begin(), producer_members.end(),
                      it->second) == producer_members.end()) {
          producer_members.push_back(it->second);
        }
      }
      StringId op = model_.node_op_type(fw_nodes_[f]);
      std::vector<uint32_t> same_type;
      for (uint32_t m : members) {
        if (anchored_members.count(m) ||
            model_.node_op_type(cg_nodes_[m]) != op) {
          continue;
        }
        bool consistent = true;
        for (uint32_t pm : producer_members) {
          if (pm != m && upstream_of(m, pm)) consistent = false;
        }
        if (consistent) same_type.push_back(m);
      }
      if (same_type.size() == 1) {
        assign(f, same_type[0]);
        anchored_members.insert(same_type[0]);
        continue;
      }
      if (producer_members.size() == 1) {
        assign(f, producer_members[0]);
      } else if (producer_members.size() > 1) {
        // The member that reads what the others produce absorbed the op
        // (e.g. a Conv taking the residual as its Sum input absorbs Add).
        uint32_t best = producer_members[0];
        for (uint32_t m : producer_members) {
          bool reads_all = true;
          for (uint32_t other : producer_members) {
            if (other != m && !upstream_of(other, m)) reads_all = false;
          }
          if (reads_all) best = m;
        }
        assign(f, best);
      }
    }
    // Backward: predecessors fuse into the member holding their consumer.
    for (auto it = region.rbegin(); it != region.rend(); ++it) {
      uint32_t f = *it;
      if (owner.count(f)) continue;
      int64_t chosen = -1;
      for (ValueId v : model_.node_outputs(fw_nodes_[f])) {
        if (!v.valid()) continue;
        for (NodeId consumer : model_.value_consumers(v)) {
          auto pos = fw_pos_.find(consumer.value());
          if (pos == fw_pos_.end()) continue;
          auto o = owner.find(pos->second);
          if (o == owner.end() || !may_take(f, o->second)) continue;
          if (chosen < 0 || o->second < chosen) chosen = o->second;
        }
      }
      if (chosen < 0) chosen = members.front();
      assign(f, static_cast<uint32_t>(chosen));
    }

    std::unordered_map<uint32_t, uint32_t> owned_count;
    for (uint32_t f : region) {
      uint32_t m = owner[f];
      result_.fused_from.emplace_back(cg_nodes_[m], fw_nodes_[f]);
      ++owned_count[m];
      (*claimed)[f] = true;
    }
    for (uint32_t m : members) {
      if (owned_count[m] > 0) {
        if (result_.kinds[m] == MatchKind::kNone) {
          result_.kinds[m] = MatchKind::kStructural;
        }
      } else if (IsInsertableOpType(
                     model_.str(model_.node_op_type(cg_nodes_[m])))) {
        result_.kinds[m] = MatchKind::kInserted;
      } else {
        result_.kinds[m] = MatchKind::kUnexplained;
        ++result_.unexplained;
      }
    }
  }

  // Whether compiled member `from` reaches member `to` through the
  // cluster's own tensors.
  bool Reaches(uint32_t from, uint32_t to,
               const std::unordered_set<uint32_t>& member_set) const {
    std::vector<uint32_t> stack = {from};
    std::unordered_set<uint32_t> seen = {from};
    while (!stack.empty()) {
      uint32_t m = stack.back();
      stack.pop_back();
      if (m == to) return true;
      for (ValueId v : model_.node_outputs(cg_nodes_[m])) {
        if (!v.valid()) continue;
        for (NodeId consumer : model_.value_consumers(v)) {
          auto it = cg_pos_.find(consumer.value());
          if (it == cg_pos_.end() || !member_set.count(it->second)) continue;
          if (seen.insert(it->second).second) stack.push_back(it->second);
        }
      }
    }
    return false;
  }

  const Model& model_;
  GraphId fw_;
  GraphId cg_;
  std::span<const NodeId> fw_nodes_;
  std::span<const NodeId> cg_nodes_;
  std::unordered_map<uint32_t, uint32_t> fw_pos_;
  std::unordered_map<uint32_t, uint32_t> cg_pos_;
  std::vector<uint32_t> fw_topo_rank_;
  std::vector<bool> is_constant_;
  std::unordered_map<uint32_t, ValueId> fw_of_cv_;
  std::unordered_set<uint32_t> materialized_;
  // Ordered by root so results are deterministic.
  std::map<uint32_t, std::vector<uint32_t>> clusters_;
  FusionMatch result_;
};

}  // namespace

bool IsInsertableOpType(std::string_view op_type) {
  return std::find(kInsertableOpTypes.begin(), kInsertableOpTypes.end(),
                   op_type) != kInsertableOpTypes.end();
}

FusionMatch MatchCompiledToFramework(const Model& model, GraphId framework,
                                     GraphId compiled) {
  return Matcher(model, framework, compiled).Run();
}

}  // namespace mi::linker
