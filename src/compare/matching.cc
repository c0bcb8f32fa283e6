// Pairs the probes of two runs and measures each pair
// (docs/design/compare.md "Matching"):
//  - by name: the same probe (node, kind, index, step) on both sides: two
//    runs of one model, two inputs, PyTorch against its ONNX export (one
//    probe namespace, python/model_inspector/backends/base.py);
//  - through fused_from: a framework run (A) against a run of its compiled
//    graph (B). Each compiled node's output k is set against the framework
//    tensor it computes: the framework tensor of the same name when the
//    compiler kept the name, else output k of the last framework node of
//    its group (the group's result), else, for a layout conversion
//    (ReorderOutput), the tensor its producer computes. A blocked NCHWc
//    output [N, C/b, H, W, b] is un-blocked to NCHW before it is compared;
//    a tensor of the same elements in another shape (a Gemm's 2-D view of a
//    3-D MatMul) is compared flat.

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model_inspector/compare.h"

namespace mi {
namespace {

using ProbeKey = std::tuple<std::string, std::string, int32_t, int64_t>;

ProbeKey KeyOf(const std::string& node, const std::string& kind, int32_t index,
               std::optional<int64_t> step) {
  return {node, kind, index, step.value_or(-1)};
}

uint64_t ElementCount(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return n;
}

// ONNX Runtime's NCHWc layout (its nchwc transformer; MLAS block size 8
// with AVX2, 16 with AVX-512): channels padded to a multiple of the block b
// and stored [N, C/b, H, W, b]. Its tensors come out either as that 5-D
// shape or as [N, C padded, H, W] over the blocked memory (what a graph
// output of a com.microsoft.nchwc node holds).
constexpr int64_t kNchwcBlocks[] = {8, 16};

int64_t PaddedChannels(int64_t channels, int64_t block) {
  return (channels + block - 1) / block * block;
}

// The blocks `b`'s shape is a blocked form of `plain` with (none: not one).
std::vector<int64_t> NchwcBlocks(const std::vector<int64_t>& blocked,
                                 const std::vector<int64_t>& plain) {
  std::vector<int64_t> out;
  if (plain.size() != 4) return out;
  if (blocked.size() == 5) {
    int64_t b = blocked[4];
    if (b > 1 && blocked[0] == plain[0] && blocked[2] == plain[2] &&
        blocked[3] == plain[3] &&
        blocked[1] * b == PaddedChannels(plain[1], b)) {
      out.push_back(b);
    }
    return out;
  }
  if (blocked.size() != 4 || blocked[0] != plain[0] || blocked[2] != plain[2] ||
      blocked[3] != plain[3]) {
    return out;
  }
  for (int64_t b : kNchwcBlocks) {
    if (blocked[1] == PaddedChannels(plain[1], b)) out.push_back(b);
  }
  return out;
}

// Blocked -> NCHW: element (n, c, h, w) is at (n, c / b, h, w, c % b) of
// the blocked [N, ceil(C / b), H, W, b] memory.
NpyArray Unblock(const NpyArray& in, int64_t b,
                 const std::vector<int64_t>& plain) {
  const int64_t n_ = plain[0], c_ = plain[1], h_ = plain[2], w_ = plain[3];
  const int64_t blocks = PaddedChannels(c_, b) / b;
  const size_t size = TensorDtypeSize(in.dtype);
  NpyArray out;
  out.dtype = in.dtype;
  out.shape = plain;
  out.data.resize(static_cast<size_t>(n_ * c_ * h_ * w_) * size);
  for (int64_t n = 0; n < n_; ++n) {
    for (int64_t c = 0; c < c_; ++c) {
      for (int64_t h = 0; h < h_; ++h) {
        for (int64_t w = 0; w < w_; ++w) {
          int64_t src = (((n * blocks + c / b) * h_ + h) * w_ + w) * b + c % b;
          int64_t dst = ((n * c_ + c) * h_ + h) * w_ + w;
          std::memcpy(&out.data[static_cast<size_t>(dst) * size],
                      &in.data[static_cast<size_t>(src) * size], size);
        }
      }
    }
  }
  return out;
}

class Matcher {
 public:
  Matcher(const ProbeSet& a, const ProbeSet& b, const CompareOptions& options,
          CompareReport* report)
      : a_(a), b_(b), options_(options), report_(*report) {
    for (size_t i = 0; i < a.probes.size(); ++i) {
      const ProbeTensor& r = a.probes[i];
      a_index_.emplace(KeyOf(r.node, r.kind, r.index, r.step), i);
    }
    for (size_t i = 0; i < b.probes.size(); ++i) {
      const ProbeTensor& r = b.probes[i];
      b_by_name_.emplace(std::make_pair(r.probe, r.step.value_or(-1)), i);
    }
  }

  Status ByName() {
    std::vector<size_t> order(a_.probes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return a_.probes[x].order < a_.probes[y].order;
    });
    std::vector<bool> used_b(b_.probes.size(), false);
    for (size_t i : order) {
      const ProbeTensor& ra = a_.probes[i];
      auto it = b_by_name_.find(std::make_pair(ra.probe, ra.step.value_or(-1)));
      if (it == b_by_name_.end()) {
        report_.only_in_a.push_back(ra.probe);
        continue;
      }
      used_b[it->second] = true;
      CompareEntry e;
      e.matched_by = "name";
      MI_RETURN_IF_ERROR(Measure(ra, b_.probes[it->second], &e));
      e.order = ra.order;
      report_.entries.push_back(std::move(e));
    }
    for (size_t i = 0; i < b_.probes.size(); ++i) {
      if (!used_b[i]) report_.only_in_b.push_back(b_.probes[i].probe);
    }
    return Status::Ok();
  }

  Status ByFusedFrom() {
    // Framework order and tensor producers.
    for (size_t i = 0; i < a_.nodes.size(); ++i) {
      const LevelNode& n = a_.nodes[i];
      fw_position_.emplace(n.name, static_cast<int64_t>(i));
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        if (!n.outputs[k].empty()) {
          fw_producer_.emplace(n.outputs[k],
                               std::make_pair(n.name, static_cast<int32_t>(k)));
        }
      }
    }
    if (a_.nodes.empty()) {
      // Without A's graph: the order of its probes.
      for (const ProbeTensor& r : a_.probes) {
        auto [it, added] = fw_position_.emplace(r.node, r.order);
        if (!added) it->second = std::min(it->second, r.order);
      }
    }
    for (size_t i = 0; i < b_.nodes.size(); ++i) {
      const LevelNode& n = b_.nodes[i];
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        if (!n.outputs[k].empty()) {
          compiled_producer_.emplace(n.outputs[k], i);
        }
      }
    }
    FindBlocks();
    std::vector<bool> used_b(b_.probes.size(), false);
    for (size_t ci = 0; ci < b_.nodes.size(); ++ci) {
      const LevelNode& c = b_.nodes[ci];
      CompareGroup group;
      bool grouped = !c.fused_from.empty();
      if (grouped) {
        group.compiled_node = c.name;
        group.op_type = c.op_type;
        group.fused_from = c.fused_from;
      }
      std::string why_not;
      size_t outputs = std::max<size_t>(c.outputs.size(), 1);
      for (size_t k = 0; k < outputs; ++k) {
        std::optional<Target> target = TargetOf(ci, static_cast<int32_t>(k), 0);
        // Every step of the output (recurrent ops), the whole output first.
        std::vector<size_t> b_records;
        for (size_t i = 0; i < b_.probes.size(); ++i) {
          const ProbeTensor& r = b_.probes[i];
          if (r.node == c.name && r.kind == "output" &&
              r.index == static_cast<int32_t>(k)) {
            b_records.push_back(i);
          }
        }
        if (!target) {
          for (size_t i : b_records) {
            used_b[i] = true;
            report_.only_in_b.push_back(b_.probes[i].probe);
          }
          continue;
        }
        if (b_records.empty()) {
          if (k == 0 && why_not.empty()) {
            why_not =
                fmt::format("no probe on output {} of the compiled node", k);
          }
          continue;
        }
        for (size_t i : b_records) {
          used_b[i] = true;
          const ProbeTensor& rb = b_.probes[i];
          auto it = a_index_.find(
              KeyOf(target->node, "output", target->index, rb.step));
          if (it == a_index_.end()) {
            if (why_not.empty()) {
              why_not = fmt::format("framework node '{}' output {} not probed",
                                    target->node, target->index);
            }
            continue;
          }
          CompareEntry e;
          e.matched_by = target->how;
          MI_RETURN_IF_ERROR(Measure(a_.probes[it->second], rb, &e));
          e.order = rb.order;
          if (grouped && group.entry < 0 && e.verdict != "not_compared") {
            group.entry = static_cast<int64_t>(report_.entries.size());
            group.compared_with = target->node;
            group.reason = e.matched_by == "tensor_name"
                               ? "the same tensor name on both levels"
                           : e.matched_by == "fused_from"
                               ? "against the last framework node of the group"
                               : "through its layout conversion";
            if (!e.layout.empty()) group.reason += " (" + e.layout + ")";
          } else if (grouped && e.verdict == "not_compared" &&
                     why_not.empty() && !e.reasons.empty()) {
            why_not = e.reasons.front();
          }
          report_.entries.push_back(std::move(e));
        }
      }
      if (grouped) {
        if (group.entry >= 0) {
          group.status = "matched";
          ++report_.groups_matched;
        } else {
          group.status = "unmatched";
          group.reason = why_not.empty() ? "no output to compare" : why_not;
          ++report_.groups_unmatched;
        }
        report_.groups.push_back(std::move(group));
      }
    }
    for (size_t i = 0; i < b_.probes.size(); ++i) {
      if (!used_b[i] && b_.probes[i].kind == "output") {
        report_.only_in_b.push_back(b_.probes[i].probe);
      }
    }
    // Entries in B's execution order (the compiled run's).
    std::stable_sort(report_.entries.begin(), report_.entries.end(),
                     [](const CompareEntry& x, const CompareEntry& y) {
                       return x.order < y.order;
                     });
    // Group entry indices follow the sort.
    for (CompareGroup& g : report_.groups) {
      if (g.entry < 0) continue;
      for (size_t i = 0; i < report_.entries.size(); ++i) {
        if (report_.entries[i].node_b == g.compiled_node &&
            report_.entries[i].verdict != "not_compared") {
          g.entry = static_cast<int64_t>(i);
          break;
        }
      }
    }
    return Status::Ok();
  }

 private:
  struct Target {
    std::string node;
    int32_t index = 0;
    std::string how;
  };

  // The NCHWc block of the run: each blocked output whose framework
  // tensor is known allows the blocks its padded channel count fits; the
  // run's block is in all of them.
  void FindBlocks() {
    for (size_t ci = 0; ci < b_.nodes.size(); ++ci) {
      const LevelNode& c = b_.nodes[ci];
      if (c.domain == "com.microsoft.nchwc" && c.op_type != "ReorderOutput") {
        blocked_nodes_.insert(c.name);
      }
    }
    bool first = true;
    for (const ProbeTensor& rb : b_.probes) {
      if (blocked_nodes_.count(rb.node) == 0 || rb.kind != "output") continue;
      size_t ci = 0;
      while (ci < b_.nodes.size() && b_.nodes[ci].name != rb.node) ++ci;
      if (ci == b_.nodes.size()) continue;
      std::optional<Target> t = TargetOf(ci, rb.index, 0);
      if (!t) continue;
      auto it = a_index_.find(KeyOf(t->node, "output", t->index, rb.step));
      if (it == a_index_.end()) continue;
      std::vector<int64_t> allowed =
          NchwcBlocks(rb.shape, a_.probes[it->second].shape);
      if (allowed.empty()) continue;
      std::set<int64_t> these(allowed.begin(), allowed.end());
      if (first) {
        run_blocks_ = these;
        first = false;
      } else {
        std::set<int64_t> both;
        for (int64_t b : run_blocks_) {
          if (these.count(b) > 0) both.insert(b);
        }
        if (!both.empty()) run_blocks_ = both;
      }
    }
  }

  // The framework tensor output k of compiled node `ci` computes.
  std::optional<Target> TargetOf(size_t ci, int32_t k, int depth) {
    const LevelNode& c = b_.nodes[ci];
    if (static_cast<size_t>(k) < c.outputs.size()) {
      auto it = fw_producer_.find(c.outputs[k]);
      if (it != fw_producer_.end()) {
        return Target{it->second.first, it->second.second, "tensor_name"};
      }
    }
    if (!c.fused_from.empty()) {
      const std::string* last = nullptr;
      int64_t last_position = -1;
      for (const std::string& f : c.fused_from) {
        auto it = fw_position_.find(f);
        int64_t position = it == fw_position_.end() ? -1 : it->second;
        if (last == nullptr || position > last_position) {
          last = &f;
          last_position = position;
        }
      }
      return Target{*last, k, depth == 0 ? "fused_from" : "layout"};
    }
    // A layout conversion inserted by the compiler: what its input holds.
    if (depth < 4 && c.op_type == "ReorderOutput" && !c.inputs.empty()) {
      auto it = compiled_producer_.find(c.inputs[0]);
      if (it != compiled_producer_.end()) {
        const LevelNode& p = b_.nodes[it->second];
        int32_t pk = 0;
        for (size_t j = 0; j < p.outputs.size(); ++j) {
          if (p.outputs[j] == c.inputs[0]) pk = static_cast<int32_t>(j);
        }
        std::optional<Target> t = TargetOf(it->second, pk, depth + 1);
        if (t) t->how = "layout";
        return t;
      }
    }
    return std::nullopt;
  }

  Status Measure(const ProbeTensor& ra, const ProbeTensor& rb,
                 CompareEntry* e) {
    e->probe_a = ra.probe;
    e->probe_b = rb.probe;
    e->node_a = ra.node;
    e->node_b = rb.node;
    e->kind = rb.kind;
    e->step = rb.step;
    e->dtype_a = ra.dtype;
    e->dtype_b = rb.dtype;
    e->shape_a = ra.shape;
    e->shape_b = rb.shape;
    bool same_shape = ra.shape == rb.shape;
    // A blocked output of a com.microsoft.nchwc node: the blocks its shape
    // allows, narrowed by what the run's other blocked tensors allow.
    std::vector<int64_t> blocks;
    if (blocked_nodes_.count(rb.node) > 0 || rb.shape.size() == 5) {
      for (int64_t b : NchwcBlocks(rb.shape, ra.shape)) {
        if (run_blocks_.empty() || run_blocks_.count(b) > 0) {
          blocks.push_back(b);
        }
      }
    }
    bool nchwc = !blocks.empty() && (!same_shape || rb.shape.size() == 4);
    bool same_count = ElementCount(ra.shape) == ElementCount(rb.shape);
    if (!nchwc && !same_shape && same_count) e->layout = "reshape";
    auto not_compared = [e](std::string why) {
      e->verdict = "not_compared";
      e->reasons.push_back(std::move(why));
      return Status::Ok();
    };
    if (!same_shape && !nchwc && !same_count) {
      return not_compared(fmt::format("shapes differ: [{}] and [{}]",
                                      fmt::join(ra.shape, ","),
                                      fmt::join(rb.shape, ",")));
    }
    if (!ra.array_path.empty() && !rb.array_path.empty()) {
      MI_ASSIGN_OR_RETURN(NpyArray xa, ReadNpy(ra.array_path));
      MI_ASSIGN_OR_RETURN(NpyArray xb, ReadNpy(rb.array_path));
      bool sampled = xa.shape != ra.shape || xb.shape != rb.shape;
      if (sampled) {
        // A sampled tensor (the store keeps an evenly strided sample of a
        // large one): comparable when both sides kept the same sample.
        if (xa.count() != xb.count() || nchwc) {
          return not_compared(
              "the kept tensors are samples of different sizes");
        }
        e->layout = "sampled";
      }
      // Blocked: un-block with each block the shapes allow and keep the
      // closest (only ambiguous when every channel count is a multiple of
      // both of ORT's blocks and the run shows no padding).
      std::optional<TensorMetrics> best;
      int64_t best_block = 0;
      std::vector<int64_t> tries = nchwc ? blocks : std::vector<int64_t>{0};
      for (int64_t b : tries) {
        NpyArray unblocked;
        const NpyArray* y = &xb;
        if (b > 0) {
          unblocked = Unblock(xb, b, ra.shape);
          y = &unblocked;
        }
        StatusOr<TensorMetrics> m = CompareTensors(xa.view(), y->view());
        if (!m.ok()) return not_compared(m.status().message());
        if (!best || m->cosine.value_or(-2) > best->cosine.value_or(-2)) {
          best = *m;
          best_block = b;
        }
      }
      if (best_block > 0) e->layout = fmt::format("nchwc{}", best_block);
      e->mode = "tensor";
      e->metrics = *best;
      CompareJudgement j = JudgeTensors(*best, options_.thresholds);
      e->verdict = j.pass ? "pass" : "fail";
      e->reasons = std::move(j.reasons);
      return Status::Ok();
    }
    if (ra.has_stats && rb.has_stats && !nchwc) {
      e->mode = "statistics";
      e->stats = CompareStats(ra.stats, rb.stats);
      CompareJudgement j = JudgeStats(*e->stats, options_.thresholds);
      e->verdict = j.pass ? "pass" : "fail";
      e->reasons = std::move(j.reasons);
      return Status::Ok();
    }
    return not_compared(nchwc ? "a blocked (NCHWc) tensor needs the kept "
                                "tensor, not statistics"
                              : "neither tensors nor statistics on both sides");
  }

  const ProbeSet& a_;
  const ProbeSet& b_;
  const CompareOptions& options_;
  CompareReport& report_;
  std::map<ProbeKey, size_t> a_index_;
  std::map<std::pair<std::string, int64_t>, size_t> b_by_name_;
  std::unordered_map<std::string, int64_t> fw_position_;
  std::unordered_map<std::string, std::pair<std::string, int32_t>> fw_producer_;
  std::unordered_map<std::string, size_t> compiled_producer_;
  // Compiled nodes whose outputs are blocked (NCHWc), and the blocks every
  // blocked tensor of the run allows (empty: not narrowed).
  std::set<std::string> blocked_nodes_;
  std::set<int64_t> run_blocks_;
};

}  // namespace

StatusOr<CompareReport> CompareProbeSets(const ProbeSet& a, const ProbeSet& b,
                                         const CompareOptions& options) {
  CompareReport report;
  report.a = a.label;
  report.b = b.label;
  report.level_a = a.level;
  report.level_b = b.level;
  report.thresholds = options.thresholds;
  bool b_fused =
      std::any_of(b.nodes.begin(), b.nodes.end(),
                  [](const LevelNode& n) { return !n.fused_from.empty(); });
  std::string match = options.match;
  if (match == "auto") {
    match = b_fused && a.level != "compiled" ? "fused_from" : "name";
  }
  Matcher matcher(a, b, options, &report);
  if (match == "name") {
    MI_RETURN_IF_ERROR(matcher.ByName());
  } else if (match == "fused_from") {
    if (b.nodes.empty()) {
      return InvalidArgumentError(
          "matching through fused_from needs the compiled graph of side B "
          "(its model); expected B to be a run of a compiled model");
    }
    MI_RETURN_IF_ERROR(matcher.ByFusedFrom());
  } else {
    return InvalidArgumentError(fmt::format(
        "unknown match mode '{}'; expected auto, name or fused_from", match));
  }
  report.match = match;
  for (size_t i = 0; i < report.entries.size(); ++i) {
    const CompareEntry& e = report.entries[i];
    if (e.verdict == "pass") {
      ++report.compared;
      ++report.passed;
    } else if (e.verdict == "fail") {
      ++report.compared;
      ++report.failed;
      if (report.first_divergent < 0) {
        report.first_divergent = static_cast<int64_t>(i);
        report.first_divergent_node = e.node_b;
      }
    } else {
      ++report.not_compared;
    }
  }
  report.pass = report.failed == 0;
  return report;
}

}  // namespace mi
