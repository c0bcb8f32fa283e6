// The structural diff (docs/design/diff.md, "Structure" and "Fusion"):
// nodes of two versions of a graph level are matched by name, then by
// structure (op type plus matched neighbours) for the rest; matched pairs
// are compared field by field; compiled levels are also compared by their
// fusion groups (fused_from).

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "diff/diff_internal.h"

namespace mi::diff {
namespace {

constexpr int kNone = -1;

// Where a node input comes from within its level.
struct Source {
  int node = kNone;  // producing node (index into the level), or none: a
                     // constant, a graph input or an omitted input
  int slot = 0;      // the producer's output position
};

struct Consumer {
  int node = 0;
  int input = 0;  // the consumer's input position
  int slot = 0;   // the output of this node it reads
};

// A digest level with its edges, found through tensor names.
struct LevelGraph {
  const DigestLevel* level = nullptr;
  std::unordered_map<std::string_view, int> by_name;
  std::vector<std::vector<Source>> inputs;
  std::vector<std::vector<Consumer>> consumers;

  explicit LevelGraph(const DigestLevel& l) : level(&l) {
    const size_t n = l.nodes.size();
    std::unordered_map<std::string_view, Source> producer;
    for (size_t i = 0; i < n; ++i) {
      by_name.emplace(l.nodes[i].name, static_cast<int>(i));
      const std::vector<DigestTensor>& outs = l.nodes[i].outputs;
      for (size_t s = 0; s < outs.size(); ++s) {
        if (outs[s].name.empty()) continue;
        producer.emplace(outs[s].name,
                         Source{static_cast<int>(i), static_cast<int>(s)});
      }
    }
    inputs.resize(n);
    consumers.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const std::vector<DigestTensor>& ins = l.nodes[i].inputs;
      inputs[i].resize(ins.size());
      for (size_t k = 0; k < ins.size(); ++k) {
        if (ins[k].name.empty()) continue;
        auto it = producer.find(ins[k].name);
        if (it == producer.end() || it->second.node == static_cast<int>(i)) {
          continue;
        }
        inputs[i][k] = it->second;
        consumers[it->second.node].push_back(
            {static_cast<int>(i), static_cast<int>(k), it->second.slot});
      }
    }
  }
  const DigestNode& node(int i) const { return level->nodes[i]; }
  int size() const { return static_cast<int>(level->nodes.size()); }
};

std::string ShapeText(const DigestTensor& t) {
  if (!t.has_shape) return "unknown";
  std::string out = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += t.shape[i];
  }
  out += "]";
  return out;
}

std::string TypeKey(const DigestTensor& t) {
  return t.dtype + ShapeText(t) + t.layout;
}

bool NamesGraph(std::string_view text) {
  return text.starts_with("graph ") || text.starts_with("graphs (");
}

// What a node is, without its name or neighbours: op type, domain,
// attributes, the types of its tensors and which inputs are constants.
std::string OwnSignature(const LevelGraph& g, int i) {
  const DigestNode& n = g.node(i);
  std::string key = n.domain + "|" + n.op_type + "|";
  for (const auto& [name, text] : n.attributes) {
    key += name;
    key += '=';
    key += NamesGraph(text) ? std::string_view("<graph>") : text;
    key += ';';
  }
  key += '|';
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    key += g.inputs[i][k].node == kNone ? 'c' : 't';
    key += TypeKey(n.inputs[k]);
    key += ',';
  }
  key += '|';
  for (const DigestTensor& t : n.outputs) {
    key += TypeKey(t);
    key += ',';
  }
  return key;
}

class Matcher {
 public:
  Matcher(const LevelGraph& base, const LevelGraph& next)
      : base_(base),
        next_(next),
        b2n_(base.size(), kNone),
        n2b_(next.size(), kNone),
        by_name_(base.size(), false),
        named_base_(base.size(), false),
        named_next_(next.size(), false) {}

  // `links`: pairs known to belong together beyond their names (within a
  // run, a compiled node made of exactly one framework node).
  void Run(const std::vector<std::pair<int, int>>& links) {
    // 1. By name.
    for (int b = 0; b < base_.size(); ++b) {
      auto it = next_.by_name.find(base_.node(b).name);
      if (it != next_.by_name.end()) {
        named_base_[b] = true;
        named_next_[it->second] = true;
        Match(b, it->second, /*by_name=*/true);
      }
    }
    for (auto [b, n] : links) {
      if (b2n_[b] == kNone && n2b_[n] == kNone) Match(b, n, false);
    }
    // A name is trusted unless the structure contradicts it: a pair whose
    // input comes from a matched node on one side and from a different
    // node on the other is set aside, so that structure can pair it
    // (compilers number generated names in an unstable order: ORT's
    // ReorderOutput_token_N). What structure does not pair again is
    // paired by name after all.
    std::vector<std::pair<int, int>> set_aside;
    for (int b = 0; b < base_.size(); ++b) {
      int n = b2n_[b];
      if (n != kNone && by_name_[b] && InputsDisagree(b, n)) {
        set_aside.emplace_back(b, n);
      }
    }
    for (auto [b, n] : set_aside) {
      b2n_[b] = kNone;
      n2b_[n] = kNone;
      by_name_[b] = false;
    }
    queue_.clear();
    for (int b = 0; b < base_.size(); ++b) {
      if (b2n_[b] != kNone) queue_.emplace_back(b, b2n_[b]);
    }
    Propagate();
    // 2. By structure, for the rest: nodes alike in themselves and unique
    // so on both sides, then nodes alike in op type and matched
    // neighbours; each match is propagated to the neighbours.
    while (SeedUnique(/*own=*/true) || SeedUnique(/*own=*/false)) {
    }
    for (auto [b, n] : set_aside) {
      if (b2n_[b] == kNone && n2b_[n] == kNone) Match(b, n, true);
    }
    Propagate();
    // Last, nodes still alike in groups of equal size on both sides pair
    // up in graph order (parallel identical branches), and the
    // propagation resumes.
    while (SeedUnique(/*own=*/true) || SeedUnique(/*own=*/false) ||
           SeedInOrder()) {
    }
    // A pair set aside and paired again by structure is a match by name.
    for (auto [b, n] : set_aside) {
      if (b2n_[b] == n) by_name_[b] = true;
    }
  }

  const std::vector<int>& b2n() const { return b2n_; }
  const std::vector<int>& n2b() const { return n2b_; }
  bool by_name(int b) const { return by_name_[b]; }

 private:
  void Match(int b, int n, bool by_name) {
    b2n_[b] = n;
    n2b_[n] = b;
    by_name_[b] = by_name;
    queue_.emplace_back(b, n);
  }

  bool InputsDisagree(int b, int n) const {
    const auto& bin = base_.inputs[b];
    const auto& nin = next_.inputs[n];
    for (size_t k = 0; k < bin.size() && k < nin.size(); ++k) {
      int pb = bin[k].node;
      int pn = nin[k].node;
      if (pb != kNone && pn != kNone && b2n_[pb] != kNone && b2n_[pb] != pn) {
        return true;
      }
    }
    return false;
  }

  bool Alike(int b, int n) const {
    const DigestNode& x = base_.node(b);
    const DigestNode& y = next_.node(n);
    return x.op_type == y.op_type && x.domain == y.domain;
  }

  // From each matched pair to its unmatched neighbours: the producers of
  // the same input positions, and the consumers that read the same output
  // at the same input position with the same op type, where that is one
  // node on each side.
  void Propagate() {
    while (!queue_.empty()) {
      auto [b, n] = queue_.front();
      queue_.pop_front();
      const auto& bin = base_.inputs[b];
      const auto& nin = next_.inputs[n];
      for (size_t k = 0; k < bin.size() && k < nin.size(); ++k) {
        int pb = bin[k].node;
        int pn = nin[k].node;
        if (pb == kNone || pn == kNone || b2n_[pb] != kNone ||
            n2b_[pn] != kNone || bin[k].slot != nin[k].slot || !Alike(pb, pn) ||
            named_base_[pb] != named_next_[pn]) {
          continue;
        }
        Match(pb, pn, false);
      }
      std::map<std::string, std::pair<std::vector<int>, std::vector<int>>>
          groups;
      for (const Consumer& c : base_.consumers[b]) {
        if (b2n_[c.node] != kNone) continue;
        groups[ConsumerKey(base_, c, named_base_[c.node])].first.push_back(
            c.node);
      }
      if (groups.empty()) continue;
      for (const Consumer& c : next_.consumers[n]) {
        if (n2b_[c.node] != kNone) continue;
        auto it = groups.find(ConsumerKey(next_, c, named_next_[c.node]));
        if (it != groups.end()) it->second.second.push_back(c.node);
      }
      for (auto& [key, sides] : groups) {
        if (sides.first.size() == 1 && sides.second.size() == 1 &&
            b2n_[sides.first[0]] == kNone && n2b_[sides.second[0]] == kNone) {
          Match(sides.first[0], sides.second[0], false);
        }
      }
    }
  }

  static std::string ConsumerKey(const LevelGraph& g, const Consumer& c,
                                 bool named) {
    const DigestNode& n = g.node(c.node);
    return fmt::format("{}:{}:{}|{}|{}", c.slot, c.input, n.domain, n.op_type,
                       named ? 'N' : 'U');
  }

  // A node's op type and its neighbours as matched so far (the partner's
  // index on the new side; "?" for a neighbour not matched yet).
  std::string NeighbourSignature(const LevelGraph& g, int i,
                                 bool base_side) const {
    const DigestNode& n = g.node(i);
    std::string key = n.domain + "|" + n.op_type + "|";
    auto id = [&](int node) -> std::string {
      int partner = base_side ? b2n_[node] : node;
      if (base_side ? b2n_[node] == kNone : n2b_[node] == kNone) return "?";
      return fmt::format("{}", partner);
    };
    for (const Source& s : g.inputs[i]) {
      key += s.node == kNone ? std::string("c") : id(s.node);
      key += fmt::format(":{},", s.slot);
    }
    key += '|';
    std::vector<std::string> outs;
    for (const Consumer& c : g.consumers[i]) {
      outs.push_back(fmt::format("{}:{}:{}", id(c.node), c.input, c.slot));
    }
    std::sort(outs.begin(), outs.end());
    for (const std::string& o : outs) key += o + ",";
    return key;
  }

  using Groups =
      std::map<std::string, std::pair<std::vector<int>, std::vector<int>>>;

  Groups Group(bool own) const {
    Groups groups;
    for (int b = 0; b < base_.size(); ++b) {
      if (b2n_[b] != kNone) continue;
      std::string key =
          own ? OwnSignature(base_, b) : NeighbourSignature(base_, b, true);
      key += named_base_[b] ? "|N" : "|U";
      groups[key].first.push_back(b);
    }
    for (int n = 0; n < next_.size(); ++n) {
      if (n2b_[n] != kNone) continue;
      std::string key =
          own ? OwnSignature(next_, n) : NeighbourSignature(next_, n, false);
      key += named_next_[n] ? "|N" : "|U";
      auto it = groups.find(key);
      if (it != groups.end()) it->second.second.push_back(n);
    }
    return groups;
  }

  static bool HasMatchedNeighbour(const LevelGraph& g, int i,
                                  const std::vector<int>& matched) {
    for (const Source& s : g.inputs[i]) {
      if (s.node != kNone && matched[s.node] != kNone) return true;
    }
    for (const Consumer& c : g.consumers[i]) {
      if (matched[c.node] != kNone) return true;
    }
    return false;
  }

  bool SeedUnique(bool own) {
    bool any = false;
    for (auto& [key, sides] : Group(own)) {
      if (sides.first.size() != 1 || sides.second.size() != 1) continue;
      // A neighbour signature with no matched neighbour says only the op
      // type: too little to call two nodes the same.
      if (!own && !HasMatchedNeighbour(base_, sides.first[0], b2n_)) continue;
      Match(sides.first[0], sides.second[0], false);
      any = true;
    }
    Propagate();
    return any;
  }

  bool SeedInOrder() {
    bool any = false;
    for (auto& [key, sides] : Group(/*own=*/true)) {
      if (sides.first.size() != sides.second.size()) continue;
      for (size_t i = 0; i < sides.first.size(); ++i) {
        Match(sides.first[i], sides.second[i], false);
        any = true;
      }
      // One group at a time: its matches may settle the others through
      // their neighbours.
      if (any) break;
    }
    Propagate();
    return any;
  }

  const LevelGraph& base_;
  const LevelGraph& next_;
  std::vector<int> b2n_;
  std::vector<int> n2b_;
  std::vector<bool> by_name_;
  // Whose name also names a node on the other side. Structure pairs such a
  // node only with another such node: a node whose name exists on both
  // sides is never taken for an added or removed one (a block inserted
  // before it reads like it to its producer).
  std::vector<bool> named_base_;
  std::vector<bool> named_next_;
  std::deque<std::pair<int, int>> queue_;
};

std::string SourceText(const LevelGraph& g, const Source& s) {
  if (s.node == kNone) return "a constant or graph input";
  return fmt::format("{}:{}", g.node(s.node).name, s.slot);
}

void CompareTensors(std::string_view what, const std::vector<DigestTensor>& a,
                    const std::vector<DigestTensor>& b,
                    std::vector<std::string>* out) {
  if (a.size() != b.size()) {
    out->push_back(fmt::format("{}s: {} -> {}", what, a.size(), b.size()));
  }
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (a[k].dtype != b[k].dtype) {
      out->push_back(fmt::format("{} {} dtype: {} -> {}", what, k,
                                 a[k].dtype.empty() ? "?" : a[k].dtype,
                                 b[k].dtype.empty() ? "?" : b[k].dtype));
    }
    if (a[k].has_shape != b[k].has_shape || a[k].shape != b[k].shape) {
      out->push_back(fmt::format("{} {} shape: {} -> {}", what, k,
                                 ShapeText(a[k]), ShapeText(b[k])));
    }
    if (a[k].layout != b[k].layout) {
      out->push_back(fmt::format("{} {} layout: {} -> {}", what, k,
                                 a[k].layout.empty() ? "?" : a[k].layout,
                                 b[k].layout.empty() ? "?" : b[k].layout));
    }
  }
}

// What differs between two matched nodes, one line each. Names are not
// compared (a rename is a matter of matching); nor are fused_from (the
// fusion comparison's) and status (the trace's).
std::vector<std::string> Compare(const LevelGraph& base, int b,
                                 const LevelGraph& next, int n,
                                 const std::vector<int>& b2n) {
  const DigestNode& x = base.node(b);
  const DigestNode& y = next.node(n);
  std::vector<std::string> out;
  if (x.op_type != y.op_type) {
    out.push_back(fmt::format("op_type: {} -> {}", x.op_type, y.op_type));
  }
  if (x.domain != y.domain) {
    out.push_back(fmt::format("domain: {} -> {}",
                              x.domain.empty() ? "ai.onnx" : x.domain,
                              y.domain.empty() ? "ai.onnx" : y.domain));
  }
  // Attributes: both lists are sorted by name.
  size_t i = 0, j = 0;
  while (i < x.attributes.size() || j < y.attributes.size()) {
    const bool take_x = j >= y.attributes.size() ||
                        (i < x.attributes.size() &&
                         x.attributes[i].first < y.attributes[j].first);
    const bool take_y = i >= x.attributes.size() ||
                        (j < y.attributes.size() &&
                         y.attributes[j].first < x.attributes[i].first);
    if (take_x) {
      out.push_back(fmt::format("attribute {}: {} -> (none)",
                                x.attributes[i].first, x.attributes[i].second));
      ++i;
    } else if (take_y) {
      out.push_back(fmt::format("attribute {}: (none) -> {}",
                                y.attributes[j].first, y.attributes[j].second));
      ++j;
    } else {
      const std::string& a = x.attributes[i].second;
      const std::string& c = y.attributes[j].second;
      if (a != c && !(NamesGraph(a) && NamesGraph(c))) {
        out.push_back(
            fmt::format("attribute {}: {} -> {}", x.attributes[i].first, a, c));
      }
      ++i;
      ++j;
    }
  }
  CompareTensors("input", x.inputs, y.inputs, &out);
  // Where each input comes from: the base producer's partner must be the
  // new producer.
  for (size_t k = 0; k < x.inputs.size() && k < y.inputs.size(); ++k) {
    const Source& sb = base.inputs[b][k];
    const Source& sn = next.inputs[n][k];
    bool same =
        sb.node == kNone
            ? sn.node == kNone
            : sn.node != kNone && b2n[sb.node] == sn.node && sb.slot == sn.slot;
    if (!same) {
      out.push_back(fmt::format("input {} from: {} -> {}", k,
                                SourceText(base, sb), SourceText(next, sn)));
    }
  }
  CompareTensors("output", x.outputs, y.outputs, &out);
  return out;
}

NodeChange ChangeOf(std::string kind, const DigestNode* b,
                    const DigestNode* n) {
  NodeChange c;
  c.kind = std::move(kind);
  if (b != nullptr) {
    c.base_name = b->name;
    c.base_node_id = b->node_id;
    c.base_op_type = b->op_type;
  }
  if (n != nullptr) {
    c.new_name = n->name;
    c.new_node_id = n->node_id;
    c.new_op_type = n->op_type;
  }
  return c;
}

void OpTypeShifts(const DigestLevel& base, const DigestLevel& next,
                  LevelDiff* out) {
  std::map<std::string, std::pair<int64_t, int64_t>> counts;
  for (const DigestNode& n : base.nodes) ++counts[n.op_type].first;
  for (const DigestNode& n : next.nodes) ++counts[n.op_type].second;
  for (const auto& [op, c] : counts) {
    if (c.first != c.second) out->op_types.push_back({op, c.first, c.second});
  }
}

// Fusion groups of a compiled level: each compiled node made of two or
// more framework nodes, keyed by its sorted member names.
std::map<std::vector<std::string>, int> FusionGroups(const DigestLevel& l) {
  std::map<std::vector<std::string>, int> groups;
  for (size_t i = 0; i < l.nodes.size(); ++i) {
    if (l.nodes[i].fused_from.size() >= 2) {
      std::vector<std::string> members = l.nodes[i].fused_from;
      std::sort(members.begin(), members.end());
      groups.emplace(std::move(members), static_cast<int>(i));
    }
  }
  return groups;
}

size_t Overlap(const std::vector<std::string>& a,
               const std::vector<std::string>& b) {
  size_t count = 0;
  for (const std::string& s : a) {
    count += std::binary_search(b.begin(), b.end(), s);
  }
  return count;
}

// Groups fused in one version and not the other. A base group with no
// identical new group is "changed" when a new group (itself not in the
// base) shares members with it — the same fusion, other members — and
// "lost" otherwise; new groups left over are "gained".
void DiffFusions(const DigestLevel& base, const DigestLevel& next,
                 LevelDiff* out) {
  std::map<std::vector<std::string>, int> bg = FusionGroups(base);
  std::map<std::vector<std::string>, int> ng = FusionGroups(next);
  std::vector<std::pair<const std::vector<std::string>*, int>> new_only;
  for (const auto& [members, node] : ng) {
    if (!bg.contains(members)) new_only.emplace_back(&members, node);
  }
  std::vector<bool> used(new_only.size(), false);
  auto fill_base = [&](FusionChange& f, const std::vector<std::string>& g,
                       int node) {
    f.base_group = g;
    f.base_compiled = base.nodes[node].name;
    f.base_compiled_op_type = base.nodes[node].op_type;
    f.base_compiled_id = base.nodes[node].node_id;
  };
  auto fill_new = [&](FusionChange& f, const std::vector<std::string>& g,
                      int node) {
    f.new_group = g;
    f.new_compiled = next.nodes[node].name;
    f.new_compiled_op_type = next.nodes[node].op_type;
    f.new_compiled_id = next.nodes[node].node_id;
  };
  std::vector<FusionChange> changes;
  for (const auto& [members, node] : bg) {
    if (ng.contains(members)) continue;
    size_t best = 0;
    int pick = kNone;
    for (size_t k = 0; k < new_only.size(); ++k) {
      if (used[k]) continue;
      size_t o = Overlap(members, *new_only[k].first);
      if (o > best) {
        best = o;
        pick = static_cast<int>(k);
      }
    }
    FusionChange f;
    fill_base(f, members, node);
    if (pick != kNone) {
      used[pick] = true;
      f.kind = "changed";
      fill_new(f, *new_only[pick].first, new_only[pick].second);
      ++out->fusions_changed;
    } else {
      f.kind = "lost";
      ++out->fusions_lost;
    }
    changes.push_back(std::move(f));
  }
  for (size_t k = 0; k < new_only.size(); ++k) {
    if (used[k]) continue;
    FusionChange f;
    f.kind = "gained";
    fill_new(f, *new_only[k].first, new_only[k].second);
    ++out->fusions_gained;
    changes.push_back(std::move(f));
  }
  out->fusions = std::move(changes);
}

// Matches and compares two levels; `level_name` is the LevelDiff's level.
LevelDiff DiffPair(const DigestLevel& base, const DigestLevel& next,
                   std::string level_name,
                   const std::vector<std::pair<int, int>>& links) {
  LevelGraph bg(base);
  LevelGraph ng(next);
  LevelDiff out;
  out.level = std::move(level_name);
  out.base_fingerprint = base.fingerprint;
  out.new_fingerprint = next.fingerprint;
  out.base_nodes = bg.size();
  out.new_nodes = ng.size();

  Matcher matcher(bg, ng);
  matcher.Run(links);
  const std::vector<int>& b2n = matcher.b2n();
  const std::vector<int>& n2b = matcher.n2b();

  for (int b = 0; b < bg.size(); ++b) {
    int n = b2n[b];
    if (n == kNone) {
      out.changes.push_back(ChangeOf("removed", &bg.node(b), nullptr));
      ++out.removed;
      continue;
    }
    out.matches.emplace_back(b, n);
    const bool by_name = matcher.by_name(b);
    ++(by_name ? out.matched_by_name : out.matched_by_structure);
    std::vector<std::string> lines = Compare(bg, b, ng, n, b2n);
    if (lines.empty() && by_name) continue;
    NodeChange c = ChangeOf(lines.empty() ? "renamed" : "changed", &bg.node(b),
                            &ng.node(n));
    c.matched_by = by_name ? "name" : "structure";
    c.changes = std::move(lines);
    ++(c.kind == "renamed" ? out.renamed : out.changed);
    out.changes.push_back(std::move(c));
  }
  for (int n = 0; n < ng.size(); ++n) {
    if (n2b[n] != kNone) continue;
    out.changes.push_back(ChangeOf("added", nullptr, &ng.node(n)));
    ++out.added;
  }
  OpTypeShifts(base, next, &out);
  return out;
}

const DigestLevel* Find(const RunDigest& d, std::string_view level) {
  for (const DigestLevel& l : d.levels) {
    if (l.level == level) return &l;
  }
  return nullptr;
}

}  // namespace

void DiffStructure(const RunDigest& base, const RunDigest& next,
                   const DiffOptions& /*options*/, DiffReport* report) {
  for (std::string_view level : {"framework", "compiled"}) {
    const DigestLevel* b = Find(base, level);
    const DigestLevel* n = Find(next, level);
    if (b == nullptr || n == nullptr) continue;
    LevelDiff diff = DiffPair(*b, *n, std::string(level), {});
    if (level == "compiled") DiffFusions(*b, *n, &diff);
    report->structure.push_back(std::move(diff));
  }
}

void DiffLevels(const RunDigest& run, const DiffOptions& /*options*/,
                DiffReport* report) {
  const DigestLevel* fw = Find(run, "framework");
  const DigestLevel* cc = Find(run, "compiled");
  if (fw == nullptr || cc == nullptr) return;
  // The linker's links: a compiled node made of one framework node is that
  // node, whatever its name.
  std::unordered_map<std::string_view, int> fw_index;
  for (size_t i = 0; i < fw->nodes.size(); ++i) {
    fw_index.emplace(fw->nodes[i].name, static_cast<int>(i));
  }
  std::vector<std::pair<int, int>> links;
  for (size_t i = 0; i < cc->nodes.size(); ++i) {
    if (cc->nodes[i].fused_from.size() != 1) continue;
    auto it = fw_index.find(cc->nodes[i].fused_from[0]);
    if (it != fw_index.end()) links.emplace_back(it->second, i);
  }
  LevelDiff diff = DiffPair(*fw, *cc, "framework->compiled", links);
  // Every framework node stands alone in the framework level: each
  // compiled node made of several is a fusion the compiler gained.
  DigestLevel alone;
  DiffFusions(alone, *cc, &diff);
  report->structure.push_back(std::move(diff));
}

}  // namespace mi::diff
