#include "analysis/timing/timing_rules.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <unordered_set>

#include <fmt/format.h>

#include "analysis/timing/dependency_graph.h"
#include "analysis/timing/idle_overlap.h"
#include "analysis/timing/timing_common.h"

namespace mi::analysis {
namespace {

constexpr std::string_view kCopyNotOverlapped = "copy_not_overlapped";
constexpr std::string_view kHostSyncGap = "host_sync_gap";
constexpr std::string_view kFalseDependency = "false_dependency";
// False-dependency candidates checked against the graph (longest waits
// first) and findings reported, so that a pathological trace stays fast.
constexpr size_t kMaxFalseDependencyCandidates = 200;
constexpr size_t kMaxFalseDependencyFindings = 20;
constexpr size_t kMaxAncestorSearch = 100000;
constexpr size_t kMaxEvidenceTasks = 20;

const std::array<RuleSpec, 3> kRules = {{
    {kCopyNotOverlapped, "Copies that did not overlap compute",
     FindingSeverity::kWarning, 0.10, "share",
     "Data movement on a device ran while no compute ran on it: the device "
     "spent that share of its busy time only moving data.",
     "Overlap copies with compute: pinned host memory and asynchronous "
     "copies on a separate stream (non_blocking=True, prefetching the next "
     "batch), or keep the data on the device (fewer host round trips, "
     "memcpy nodes removed by placing ops on one device)."},
    {kHostSyncGap, "Host synchronize calls that left the device idle",
     FindingSeverity::kWarning, 100.0, "us",
     "The host blocked in a synchronize call; the device queue drained and "
     "the device stayed idle until the host launched work again.",
     "Remove the synchronisation (.item(), .cpu(), printing tensors, "
     "torch.cuda.synchronize, blocking copies) from the step loop, or move "
     "it after the next step's work has been launched."},
    {kFalseDependency, "Task waited behind an unrelated task on its stream",
     FindingSeverity::kInfo, 50.0, "us",
     "A task was ready (launched, its inputs done) but queued behind a long "
     "task of an unrelated node on the same stream, while another stream of "
     "the device was idle: stream order, not data, made it wait.",
     "Put independent branches on separate streams (or let the runtime's "
     "multi-stream scheduling do it), or reorder launches so the long task "
     "does not block ready work."},
}};

std::string Us(int64_t ns) { return fmt::format("{:.1f} us", ns / 1000.0); }

void CopyNotOverlapped(const Trace& trace, const IdleOverlapReport& idle,
                       double threshold, std::vector<Finding>* out) {
  const RuleSpec& rule = kRules[0];
  TaskClock clock(trace, Clock::kCalibrated);
  for (const DeviceOverlap& d : idle.devices) {
    int64_t busy = d.compute_ns + d.data_movement_ns - d.overlap_ns;
    int64_t exposed = d.data_movement_ns - d.overlap_ns;
    if (busy <= 0 || exposed <= 0) continue;
    double share = static_cast<double>(exposed) / static_cast<double>(busy);
    if (share <= threshold) continue;
    Finding f;
    f.rule_id = std::string(rule.id);
    f.severity = rule.severity;
    f.message = fmt::format(
        "On {}, {} of {} copy time ran while no compute ran ({:.1f}% of the "
        "copies): {:.1f}% of the device's busy time ({}), above the {:.1f}% "
        "threshold",
        d.device, Us(exposed), Us(d.data_movement_ns),
        100.0 * exposed / d.data_movement_ns, 100.0 * share, Us(busy),
        100.0 * threshold);
    f.suggestion = std::string(rule.suggestion);
    f.tasks = d.exposed_copies;
    for (TaskId t : f.tasks) {
      if (trace.task_node(t).valid()) f.nodes.push_back(trace.task_node(t));
    }
    f.time_ns = exposed;
    f.share = share;
    out->push_back(std::move(f));
  }
}

void HostSyncGaps(const Trace& trace, const IdleOverlapReport& idle,
                  double threshold_us, std::vector<Finding>* out) {
  const RuleSpec& rule = kRules[1];
  TaskClock clock(trace, Clock::kCalibrated);
  const int64_t threshold_ns = static_cast<int64_t>(threshold_us * 1000);
  std::vector<const SyncWait*> hits;
  int64_t total = 0;
  for (const SyncWait& w : idle.sync_waits) {
    if (w.device_idle_ns < threshold_ns) continue;
    hits.push_back(&w);
    total += w.device_idle_ns;
  }
  if (hits.empty()) return;
  const SyncWait& top = *hits.front();  // sync_waits: most idle first
  Finding f;
  f.rule_id = std::string(rule.id);
  f.severity = rule.severity;
  f.message = fmt::format(
      "{} host synchronize call{} left the device idle for {} in total "
      "(largest: {} in {} at {} on {}), each above the {:.0f} us threshold",
      hits.size(), hits.size() == 1 ? "" : "s", Us(total),
      Us(top.device_idle_ns), trace.str(trace.task_name(top.task)),
      Us(clock.start(top.task)),
      TrackMentionName(trace, trace.task_track(top.task)), threshold_us);
  f.suggestion = std::string(rule.suggestion);
  for (const SyncWait* w : hits) {
    if (f.tasks.size() >= kMaxEvidenceTasks) break;
    f.tasks.push_back(w->task);
  }
  if (top.device_before.valid()) f.tasks.push_back(top.device_before);
  if (top.device_after.valid()) f.tasks.push_back(top.device_after);
  f.time_ns = total;
  out->push_back(std::move(f));
}

// Whether `ancestor` is upstream of `node` in its graph (bounded search;
// "not found within the bound" counts as related, so that a finding is
// never claimed without evidence).
bool IsUpstream(const Model& model, NodeId ancestor, NodeId node) {
  if (model.node_graph(ancestor) != model.node_graph(node)) return true;
  std::unordered_set<uint32_t> seen{node.value()};
  std::deque<NodeId> queue{node};
  while (!queue.empty()) {
    if (seen.size() > kMaxAncestorSearch) return true;
    NodeId n = queue.front();
    queue.pop_front();
    for (ValueId v : model.node_inputs(n)) {
      if (!v.valid()) continue;
      NodeId p = model.value_producer(v);
      if (!p.valid()) continue;
      if (p == ancestor) return true;
      if (seen.insert(p.value()).second) queue.push_back(p);
    }
  }
  return false;
}

void FalseDependencies(const Model& model, const Trace& trace,
                       const Links& links, double threshold_us,
                       DependencyGraphCache* graphs,
                       std::vector<Finding>* out) {
  const RuleSpec& rule = kRules[2];
  TimingScope scope;  // whole trace, calibrated
  TaskClock clock(trace, scope.clock);
  std::shared_ptr<const DependencyGraph> graph =
      DependencyGraphOf(model, trace, links, scope, graphs);
  const DependencyGraph& g = *graph;
  const int64_t threshold_ns = static_cast<int64_t>(threshold_us * 1000);

  struct Candidate {
    TaskId task;
    TaskId blocker;
    int64_t ready_ns;
    int64_t wait_ns;
  };
  std::vector<Candidate> candidates;
  for (uint32_t v = 0; v < g.vertex_count(); ++v) {
    TaskId t = g.tasks[v];
    if (!IsDeviceTrack(trace, trace.task_track(t)) ||
        !IsExecutionKind(trace.task_kind(t))) {
      continue;
    }
    TaskId blocker;
    int64_t ready = INT64_MIN;
    for (uint32_t e = g.pred_begin[v]; e < g.pred_begin[v + 1]; ++e) {
      TaskId p = g.tasks[g.pred[e]];
      if (g.pred_kind[e] == DependencyKind::kTrackOrder) {
        blocker = p;
      } else {
        ready = std::max(ready, ReleaseTime(clock, p, t, g.pred_kind[e]));
      }
    }
    if (!blocker.valid() || ready == INT64_MIN) continue;
    // Waited behind the blocker: ready while it still ran, started when it
    // ended.
    if (ready >= clock.end(blocker) || ready < clock.start(blocker)) continue;
    int64_t wait = clock.start(t) - ready;
    if (wait < threshold_ns) continue;
    candidates.push_back({t, blocker, ready, wait});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     return a.wait_ns > b.wait_ns;
                   });
  if (candidates.size() > kMaxFalseDependencyCandidates) {
    candidates.resize(kMaxFalseDependencyCandidates);
  }
  // Busy time per device stream, to find an idle sibling stream.
  std::map<uint32_t, IntervalSet> stream_busy;
  auto busy_of = [&](TrackId track) -> const IntervalSet& {
    auto it = stream_busy.find(track.value());
    if (it != stream_busy.end()) return it->second;
    std::vector<std::pair<int64_t, int64_t>> intervals;
    for (TaskId t : g.tasks) {
      if (trace.task_track(t) == track && IsExecutionKind(trace.task_kind(t))) {
        intervals.emplace_back(clock.start(t), clock.end(t));
      }
    }
    return stream_busy.emplace(track.value(), IntervalSet(std::move(intervals)))
        .first->second;
  };
  size_t reported = 0;
  for (const Candidate& c : candidates) {
    if (reported >= kMaxFalseDependencyFindings) break;
    NodeId node = trace.task_node(c.task);
    NodeId blocker_node = trace.task_node(c.blocker);
    if (!node.valid() || !blocker_node.valid() || node == blocker_node ||
        node.value() >= model.node_count() ||
        blocker_node.value() >= model.node_count()) {
      continue;  // unrelated only when the graph says so
    }
    if (IsUpstream(model, blocker_node, node)) continue;
    const TrackInfo& own = trace.track(trace.task_track(c.task));
    TrackId idle_stream;
    int64_t best_idle = 0;
    int64_t window_end = clock.start(c.task);
    for (uint32_t i = 0; i < trace.track_count(); ++i) {
      const TrackInfo& info = trace.track(TrackId(i));
      if (i == trace.task_track(c.task).value() ||
          info.kind != TrackKind::kDeviceStream ||
          DeviceKeyOf(info) != DeviceKeyOf(own)) {
        continue;
      }
      int64_t idle =
          c.wait_ns - busy_of(TrackId(i)).Covered(c.ready_ns, window_end);
      if (idle > best_idle) {
        best_idle = idle;
        idle_stream = TrackId(i);
      }
    }
    if (!idle_stream.valid() || 2 * best_idle < c.wait_ns) continue;
    Finding f;
    f.rule_id = std::string(rule.id);
    f.severity = rule.severity;
    f.message = fmt::format(
        "{} ({}) on {} was ready at {} but waited {} behind {} ({}, {}), "
        "which it does not depend on, while {} was idle for {} of that "
        "wait; above the {:.0f} us threshold",
        trace.str(trace.task_name(c.task)), model.str(model.node_name(node)),
        TrackMentionName(trace, trace.task_track(c.task)), Us(c.ready_ns),
        Us(c.wait_ns), trace.str(trace.task_name(c.blocker)),
        model.str(model.node_name(blocker_node)), Us(clock.duration(c.blocker)),
        TrackMentionName(trace, idle_stream), Us(best_idle), threshold_us);
    f.suggestion = std::string(rule.suggestion);
    f.tasks = {c.task, c.blocker};
    f.nodes = {node, blocker_node};
    f.time_ns = c.wait_ns;
    out->push_back(std::move(f));
    ++reported;
  }
}

}  // namespace

std::span<const RuleSpec> TimingRuleSpecs() { return kRules; }

std::vector<Finding> EvaluateTimingRules(const Model& model, const Trace& trace,
                                         const Links& links,
                                         const DiagnosisOptions& options,
                                         DependencyGraphCache* graphs) {
  std::vector<Finding> findings;
  bool copies = options.Enabled(kCopyNotOverlapped);
  bool syncs = options.Enabled(kHostSyncGap);
  if (copies || syncs) {
    IdleOptions idle_options;
    idle_options.max_sync_waits = SIZE_MAX;
    IdleOverlapReport idle =
        ComputeIdleOverlap(model, trace, links, idle_options, graphs);
    if (copies) {
      CopyNotOverlapped(trace, idle, options.Threshold(kRules[0]), &findings);
    }
    if (syncs)
      HostSyncGaps(trace, idle, options.Threshold(kRules[1]), &findings);
  }
  if (options.Enabled(kFalseDependency)) {
    FalseDependencies(model, trace, links, options.Threshold(kRules[2]), graphs,
                      &findings);
  }
  return findings;
}

}  // namespace mi::analysis
