#include "analysis/timing/calibration.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/timing/timing_common.h"

namespace mi::analysis {
namespace {

struct Anchor {
  TaskId from;
  TaskId to;
  int64_t from_ns;  // raw release time of the dependency
  int64_t to_ns;    // raw start (or end, for sync anchors) of the dependent
  uint32_t from_domain;
  uint32_t to_domain;
  AnchorKind kind;
};

// Clock domains: per source in order of its first track, its host clock
// (when it has host tracks), then one per device (or per stream).
std::vector<uint32_t> AssignDomains(const Trace& trace, bool per_stream,
                                    std::vector<ClockDomainOffset>* domains) {
  std::vector<uint32_t> domain_of(trace.track_count(), 0);
  domains->clear();
  std::vector<uint32_t> sources;
  std::map<uint32_t, std::vector<TrackId>> tracks_of;
  for (uint32_t i = 0; i < trace.track_count(); ++i) {
    uint32_t s = TrackSource(trace, TrackId(i));
    auto [it, inserted] = tracks_of.try_emplace(s);
    if (inserted) sources.push_back(s);
    it->second.push_back(TrackId(i));
  }
  for (uint32_t s : sources) {
    const std::vector<TrackId>& tracks = tracks_of[s];
    uint32_t host = UINT32_MAX;
    // (device, stream): the stream only with one domain per stream.
    std::map<std::pair<DeviceKey, int64_t>, uint32_t> by_key;
    for (TrackId t : tracks) {
      const TrackInfo& info = trace.track(t);
      uint32_t d;
      if (info.kind != TrackKind::kDeviceStream) {
        if (host == UINT32_MAX) {
          host = static_cast<uint32_t>(domains->size());
          ClockDomainOffset h;
          h.name = HostClockName(trace, SourceId(s));
          h.kind = ClockDomainOffset::Kind::kHost;
          h.source = s;
          domains->push_back(std::move(h));
        }
        d = host;
      } else {
        auto key = std::pair(DeviceKeyOf(info),
                             per_stream ? int64_t{t.value()} : int64_t{-1});
        auto [it, inserted] =
            by_key.emplace(key, static_cast<uint32_t>(domains->size()));
        if (inserted) {
          ClockDomainOffset dev;
          dev.name = per_stream ? TrackMentionName(trace, t)
                                : DeviceIndexName(trace, t);
          dev.kind = per_stream ? ClockDomainOffset::Kind::kStream
                                : ClockDomainOffset::Kind::kDevice;
          dev.source = s;
          dev.device = info.device;
          domains->push_back(std::move(dev));
        }
        d = it->second;
      }
      domain_of[t.value()] = d;
      (*domains)[d].tracks.push_back(t);
    }
  }
  return domain_of;
}

// A synchronous copy call: cudaMemcpy / hipMemcpy / cuMemcpy*, not Async.
bool IsSynchronousCopyCall(const Trace& trace, TaskId call) {
  if (trace.task_kind(call) != TaskKind::kRuntime) return false;
  std::string_view name = trace.str(trace.task_name(call));
  bool memcpy = name.starts_with("cudaMemcpy") ||
                name.starts_with("hipMemcpy") || name.starts_with("cuMemcpy");
  return memcpy && name.find("Async") == std::string_view::npos;
}

// Copies a synchronous copy call returns only after (CUDA runtime API,
// "API synchronization behavior"): device to host, and from pinned host
// memory to the device. A copy from pageable memory may return once the
// data is staged, and device-to-device copies do not block the host.
bool CopyCompletesInItsCall(const Trace& trace, TaskId copy) {
  std::string_view name = trace.str(trace.task_name(copy));
  auto has = [&](std::string_view part) {
    return name.find(part) != std::string_view::npos;
  };
  return has("DtoH") || has("Device -> Pageable") || has("Device -> Pinned") ||
         has("Pinned -> Device");
}

// Also marks the tracks that have work tasks.
std::vector<Anchor> CollectAnchors(const Model& model, const Trace& trace,
                                   const std::vector<uint32_t>& domain_of,
                                   std::vector<bool>* track_has_work) {
  std::vector<Anchor> anchors;
  auto domain = [&](TaskId t) {
    return domain_of[trace.task_track(t).value()];
  };
  auto add = [&](TaskId from, int64_t from_ns, TaskId to, int64_t to_ns,
                 AnchorKind kind) {
    anchors.push_back(
        {from, to, from_ns, to_ns, domain(from), domain(to), kind});
  };
  LaunchIndex launches(trace);
  // Per device stream: its tasks launched from their source's host clock,
  // as (launch end, task), for the sync anchors.
  std::vector<std::vector<std::pair<int64_t, TaskId>>> launched(
      trace.track_count());
  std::unordered_map<SourceIdKey, std::vector<TaskId>, SourceIdKeyHash>
      recorders;
  bool any_wait = false;
  std::vector<TaskId> sync_calls;
  track_has_work->assign(trace.track_count(), false);
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (!IsWorkTask(trace, t)) continue;
    (*track_has_work)[trace.task_track(t).value()] = true;
    if (!IsDeviceTrack(trace, trace.task_track(t))) {
      if (IsHostSynchronizeCall(trace, t)) sync_calls.push_back(t);
    } else {
      // Launch: the device task starts after its launching call starts.
      TaskId launch = launches.LaunchOf(t);
      if (launch.valid() && launch != t &&
          !IsDeviceTrack(trace, trace.task_track(launch))) {
        add(launch, trace.task_start_ns(launch), t, trace.task_start_ns(t),
            AnchorKind::kLaunch);
        launched[trace.task_track(t).value()].emplace_back(
            trace.task_end_ns(launch), t);
        // Sync copy: a synchronous copy ends before its call returns.
        if (trace.task_kind(t) == TaskKind::kDataMovement &&
            IsSynchronousCopyCall(trace, launch) &&
            CopyCompletesInItsCall(trace, t)) {
          add(t, trace.task_end_ns(t), launch, trace.task_end_ns(launch),
              AnchorKind::kSyncCopy);
        }
      }
    }
    if (trace.task_event_after(t) >= 0) {
      recorders[SourceIdKey{TaskSource(trace, t), trace.task_event_after(t)}]
          .push_back(t);
    }
    any_wait = any_wait || trace.task_event_before(t) >= 0;
  }
  // Event: a wait pairs with the latest record of the event that started
  // before it on the recorder's own clock order (records of one id are
  // ordered on their stream), else the first record.
  if (any_wait) {
    for (auto& [event, list] : recorders) {
      std::sort(list.begin(), list.end(), [&](TaskId a, TaskId b) {
        return trace.task_start_ns(a) < trace.task_start_ns(b);
      });
    }
    for (uint32_t i = 0; i < trace.task_count(); ++i) {
      TaskId t(i);
      if (trace.task_event_before(t) < 0 || !IsWorkTask(trace, t)) continue;
      auto it = recorders.find(
          SourceIdKey{TaskSource(trace, t), trace.task_event_before(t)});
      if (it == recorders.end()) continue;
      const std::vector<TaskId>& list = it->second;
      // Sequence matching: the k-th wait on an event id pairs with the
      // record that precedes it in raw time on the same domain when there
      // is one; across domains raw times are what calibration doubts, so
      // with a single record the pairing is unambiguous.
      TaskId from = list.front();
      if (list.size() > 1) {
        int64_t start = trace.task_start_ns(t);
        for (TaskId r : list) {
          if (trace.task_start_ns(r) <= start) from = r;
        }
      }
      if (from == t) continue;
      add(from, trace.task_end_ns(from), t, trace.task_start_ns(t),
          AnchorKind::kEvent);
    }
  }
  // Copy: the first task of a node consuming a copy node's output starts
  // after the copy ends; node executions are matched per source and run.
  struct Span {
    TaskId first;
    TaskId last;
  };
  std::unordered_map<SourceIdKey, Span, SourceIdKeyHash> spans;
  auto key = [](uint32_t source, NodeId n, uint32_t run) {
    return SourceIdKey{
        source,
        static_cast<int64_t>((static_cast<uint64_t>(n.value()) << 32) | run)};
  };
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    NodeId n = trace.task_node(t);
    if (!n.valid() || n.value() >= model.node_count() ||
        !IsExecutionKind(trace.task_kind(t)) || !IsWorkTask(trace, t)) {
      continue;
    }
    Span& s = spans[key(TaskSource(trace, t), n, trace.task_run(t))];
    if (!s.first.valid() ||
        trace.task_start_ns(t) < trace.task_start_ns(s.first)) {
      s.first = t;
    }
    if (!s.last.valid() || trace.task_end_ns(t) > trace.task_end_ns(s.last)) {
      s.last = t;
    }
  }
  for (const auto& [k, producer] : spans) {
    if (trace.task_kind(producer.last) != TaskKind::kDataMovement) continue;
    uint64_t packed = static_cast<uint64_t>(k.id);
    NodeId n(static_cast<uint32_t>(packed >> 32));
    uint32_t run = static_cast<uint32_t>(packed & 0xffffffffu);
    for (ValueId out : model.node_outputs(n)) {
      if (!out.valid()) continue;
      for (NodeId c : model.value_consumers(out)) {
        auto it = spans.find(key(k.source, c, run));
        if (it == spans.end() || c == n) continue;
        add(producer.last, trace.task_end_ns(producer.last), it->second.first,
            trace.task_start_ns(it->second.first), AnchorKind::kCopy);
      }
    }
  }
  // Sync: the last task launched on a stream before a synchronize call that
  // waited for that stream began ends before the call ends. Tasks on one
  // stream end in launch order, so the one ending last is the anchor.
  if (sync_calls.empty()) return anchors;
  HostSyncIndex syncs(trace);
  std::vector<std::pair<TaskId, HostSyncIndex::Targets>> calls;
  for (TaskId call : sync_calls) {
    HostSyncIndex::Targets targets = syncs.TargetsOf(call);
    if (targets.certain) calls.emplace_back(call, targets);
  }
  if (calls.empty()) return anchors;
  // Per stream: (launch end, the latest-ending task launched by then).
  std::vector<std::vector<std::pair<int64_t, TaskId>>> latest(
      trace.track_count());
  for (uint32_t track = 0; track < trace.track_count(); ++track) {
    auto& list = launched[track];
    if (list.empty()) continue;
    std::sort(list.begin(), list.end());
    TaskId best;
    for (const auto& [launch_end, t] : list) {
      if (!best.valid() || trace.task_end_ns(t) > trace.task_end_ns(best)) {
        best = t;
      }
      latest[track].emplace_back(launch_end, best);
    }
  }
  for (const auto& [call, targets] : calls) {
    for (TrackId stream : syncs.Streams(targets)) {
      const auto& list = latest[stream.value()];
      auto it =
          std::upper_bound(list.begin(), list.end(), trace.task_start_ns(call),
                           [](int64_t v, const std::pair<int64_t, TaskId>& e) {
                             return v < e.first;
                           });
      if (it == list.begin()) continue;
      TaskId k = (it - 1)->second;
      // Launched from the call's own host clock (the same process).
      TaskId launch = launches.LaunchOf(k);
      if (domain(launch) != domain(call)) continue;
      add(k, trace.task_end_ns(k), call, trace.task_end_ns(call),
          AnchorKind::kSync);
    }
  }
  return anchors;
}

// The tightest constraint of one ordered domain pair:
// offset(to) - offset(from) >= weight.
struct Constraint {
  uint32_t from;
  uint32_t to;
  int64_t weight;
  size_t anchor;
};

constexpr int64_t kOpenLow = INT64_MIN;
constexpr int64_t kOpenHigh = INT64_MAX;

// Bounds of every domain's offset given the pinned ones (longest paths for
// the lower bounds, shortest for the upper): Bellman-Ford, at most D + 1
// rounds. Returns false when they did not settle.
struct Bounds {
  std::vector<int64_t> lower, upper;
  std::vector<size_t> lower_by, upper_by;  // constraint index, or SIZE_MAX
  bool settled = true;
};
Bounds Solve(size_t domain_count, const std::vector<Constraint>& constraints,
             const std::vector<std::optional<int64_t>>& pinned) {
  Bounds b;
  b.lower.assign(domain_count, kOpenLow);
  b.upper.assign(domain_count, kOpenHigh);
  b.lower_by.assign(domain_count, SIZE_MAX);
  b.upper_by.assign(domain_count, SIZE_MAX);
  for (size_t d = 0; d < domain_count; ++d) {
    if (pinned[d]) b.lower[d] = b.upper[d] = *pinned[d];
  }
  bool changed = true;
  for (size_t round = 0; changed && round <= domain_count + 1; ++round) {
    changed = false;
    for (size_t i = 0; i < constraints.size(); ++i) {
      const Constraint& c = constraints[i];
      int64_t v;
      if (b.lower[c.from] != kOpenLow && !pinned[c.to] &&
          !__builtin_add_overflow(b.lower[c.from], c.weight, &v) &&
          v > b.lower[c.to]) {
        b.lower[c.to] = v;
        b.lower_by[c.to] = i;
        changed = true;
      }
      if (b.upper[c.to] != kOpenHigh && !pinned[c.from] &&
          !__builtin_sub_overflow(b.upper[c.to], c.weight, &v) &&
          v < b.upper[c.from]) {
        b.upper[c.from] = v;
        b.upper_by[c.from] = i;
        changed = true;
      }
    }
  }
  b.settled = !changed;
  return b;
}

// The middle of [a, b] (a <= b), without overflow.
int64_t Middle(int64_t a, int64_t b) {
  return a + static_cast<int64_t>(
                 (static_cast<uint64_t>(b) - static_cast<uint64_t>(a)) / 2);
}

std::string TimeBaseOf(const Trace& trace, uint32_t source, TimeBase* base) {
  *base = source == kNoSource || source >= trace.source_count()
              ? TimeBase::kUnknown
              : trace.source(SourceId(source)).time_base;
  switch (*base) {
    case TimeBase::kEpoch:
      return "the Unix epoch";
    case TimeBase::kSessionStart:
      return "its session start";
    case TimeBase::kUnknown:
      break;
  }
  return "an unknown base";
}

}  // namespace

std::string_view AnchorKindName(AnchorKind kind) {
  switch (kind) {
    case AnchorKind::kLaunch:
      return "launch";
    case AnchorKind::kEvent:
      return "event";
    case AnchorKind::kCopy:
      return "copy";
    case AnchorKind::kSync:
      return "sync";
    case AnchorKind::kSyncCopy:
      return "sync_copy";
  }
  return "launch";
}

CalibrationReport Calibrate(const Model& model, const Trace& trace,
                            const Links& /*links*/,
                            const CalibrationOptions& options) {
  CalibrationReport report;
  report.computed = true;
  report.per_stream = options.per_stream;
  std::vector<uint32_t> domain_of =
      AssignDomains(trace, options.per_stream, &report.domains);
  std::vector<bool> track_has_work;
  std::vector<Anchor> anchors =
      CollectAnchors(model, trace, domain_of, &track_has_work);
  report.anchors = anchors.size();
  std::vector<ClockDomainOffset>& domains = report.domains;
  const size_t domain_count = domains.size();

  // The tightest constraint per ordered domain pair.
  std::map<std::pair<uint32_t, uint32_t>, size_t> pair_index;
  std::vector<Constraint> constraints;
  for (size_t i = 0; i < anchors.size(); ++i) {
    const Anchor& a = anchors[i];
    ++report.anchors_by_kind[static_cast<size_t>(a.kind)];
    int64_t violation = a.from_ns - a.to_ns;
    if (violation > 0) {
      ++report.violations_before;
      report.worst_violation_before_ns =
          std::max(report.worst_violation_before_ns, violation);
    }
    if (a.from_domain == a.to_domain) continue;
    ++domains[a.from_domain].anchors;
    ++domains[a.to_domain].anchors;
    auto [it, inserted] = pair_index.try_emplace({a.from_domain, a.to_domain},
                                                 constraints.size());
    if (inserted) {
      constraints.push_back({a.from_domain, a.to_domain, violation, i});
    } else if (violation > constraints[it->second].weight) {
      constraints[it->second].weight = violation;
      constraints[it->second].anchor = i;
    }
  }

  // Groups of domains joined by anchors (union-find); each group's first
  // host domain is its reference.
  std::vector<uint32_t> parent(domain_count);
  for (uint32_t d = 0; d < domain_count; ++d) parent[d] = d;
  auto find = [&](uint32_t d) {
    while (parent[d] != d) d = parent[d] = parent[parent[d]];
    return d;
  };
  for (const Constraint& c : constraints) parent[find(c.from)] = find(c.to);
  std::map<uint32_t, uint32_t> reference_of_group;
  for (uint32_t d = 0; d < domain_count; ++d) {
    if (domains[d].kind == ClockDomainOffset::Kind::kHost) {
      reference_of_group.try_emplace(find(d), d);
    }
  }
  std::vector<std::optional<int64_t>> pinned(domain_count);
  for (uint32_t d = 0; d < domain_count; ++d) {
    auto it = reference_of_group.find(find(d));
    if (it == reference_of_group.end()) continue;
    domains[d].anchored = true;
    domains[d].reference_domain = static_cast<int32_t>(it->second);
    if (it->second == d) {
      domains[d].reference = true;
      pinned[d] = 0;
    }
  }

  // The feasible interval of each domain: references at 0, nothing else
  // fixed.
  Bounds projection = Solve(domain_count, constraints, pinned);
  report.converged = projection.settled;
  auto anchor_ref = [&](size_t constraint) {
    const Anchor& a = anchors[constraints[constraint].anchor];
    return AnchorRef{a.from, a.to, a.kind, a.from_ns, a.to_ns};
  };
  for (uint32_t d = 0; d < domain_count; ++d) {
    ClockDomainOffset& dom = domains[d];
    if (!dom.anchored || dom.reference) continue;
    if (projection.lower[d] != kOpenLow) dom.lower_ns = projection.lower[d];
    if (projection.upper[d] != kOpenHigh) dom.upper_ns = projection.upper[d];
    if (projection.lower_by[d] != SIZE_MAX) {
      dom.binding_lower = anchor_ref(projection.lower_by[d]);
    }
    if (projection.upper_by[d] != SIZE_MAX) {
      dom.binding_upper = anchor_ref(projection.upper_by[d]);
    }
    dom.contradiction =
        dom.lower_ns && dom.upper_ns && *dom.lower_ns > *dom.upper_ns;
  }

  // Estimates, one domain at a time, nearest its reference first (fewest
  // anchors between them), each within the interval the domains fixed
  // before it leave, so that together they satisfy the anchors.
  std::vector<std::vector<uint32_t>> adjacent(domain_count);
  for (const Constraint& c : constraints) {
    adjacent[c.from].push_back(c.to);
    adjacent[c.to].push_back(c.from);
  }
  std::vector<uint32_t> order;
  {
    std::vector<bool> seen(domain_count, false);
    std::vector<uint32_t> queue;
    for (uint32_t d = 0; d < domain_count; ++d) {
      if (domains[d].reference) {
        queue.push_back(d);
        seen[d] = true;
      }
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      uint32_t d = queue[head];
      if (!domains[d].reference) order.push_back(d);
      std::sort(adjacent[d].begin(), adjacent[d].end());
      for (uint32_t n : adjacent[d]) {
        if (!seen[n]) {
          seen[n] = true;
          queue.push_back(n);
        }
      }
    }
  }
  std::vector<int64_t> offset(domain_count, 0);
  // Domains of tracks without work (empty streams, annotation rows) are
  // not reported as unanchored.
  std::vector<bool> has_work(domain_count, false);
  for (uint32_t i = 0; i < trace.track_count(); ++i) {
    if (track_has_work[i]) has_work[domain_of[i]] = true;
  }
  for (size_t i = 0; i < order.size(); ++i) {
    uint32_t d = order[i];
    Bounds now = i == 0 ? projection : Solve(domain_count, constraints, pinned);
    int64_t lo = now.lower[d], hi = now.upper[d];
    int64_t estimate;
    if (lo != kOpenLow && hi != kOpenHigh && lo > hi) {
      domains[d].contradiction = true;
      estimate = Middle(hi, lo);  // the least worst violation
    } else if (lo <= 0 && hi >= 0) {
      estimate = 0;
    } else if (lo != kOpenLow && hi != kOpenHigh) {
      estimate = Middle(lo, hi);
    } else {
      estimate = lo != kOpenLow ? lo : hi;
    }
    offset[d] = estimate;
    pinned[d] = estimate;
  }
  for (uint32_t d = 0; d < domain_count; ++d) {
    ClockDomainOffset& dom = domains[d];
    dom.offset_ns = offset[d];
    if (dom.contradiction) ++report.contradictions;
    if (dom.lower_ns && dom.upper_ns && !dom.contradiction) {
      dom.error_bound_ns = std::max(dom.offset_ns - *dom.lower_ns,
                                    *dom.upper_ns - dom.offset_ns);
    }
    if (!dom.anchored && has_work[d]) {
      ++report.unanchored;
      report.notes.push_back(fmt::format(
          "{}: no anchor joins its clock to a host clock; left at offset 0",
          dom.name));
    }
  }

  // References no anchor joins: their times are compared as written, which
  // is only meaningful on one time base.
  std::vector<uint32_t> references;
  for (uint32_t d = 0; d < domain_count; ++d) {
    if (domains[d].reference) references.push_back(d);
  }
  if (references.size() > 1) {
    TimeBase first;
    TimeBaseOf(trace, domains[references[0]].source, &first);
    std::string bases;
    for (uint32_t r : references) {
      TimeBase base;
      std::string words = TimeBaseOf(trace, domains[r].source, &base);
      report.time_bases_differ = report.time_bases_differ || base != first;
      if (!bases.empty()) bases += ", ";
      bases += fmt::format("{} from {}", domains[r].name, words);
    }
    report.notes.push_back(
        report.time_bases_differ
            ? fmt::format("{} host clocks are not joined by any anchor and "
                          "count time from different bases ({}): times of "
                          "different sources are not comparable",
                          references.size(), bases)
            : fmt::format("{} host clocks are not joined by any anchor; each "
                          "is its own reference, compared as written ({})",
                          references.size(), bases));
  }

  report.track_offset_ns.assign(trace.track_count(), 0);
  for (uint32_t i = 0; i < trace.track_count(); ++i) {
    report.track_offset_ns[i] = offset[domain_of[i]];
  }
  for (const Anchor& a : anchors) {
    int64_t violation =
        (a.from_ns + offset[a.from_domain]) - (a.to_ns + offset[a.to_domain]);
    if (violation <= 0) continue;
    ++report.residual_violations;
    if (violation > report.worst_residual_ns) {
      report.worst_residual_ns = violation;
      report.worst_residual_from = a.from;
      report.worst_residual_to = a.to;
    }
  }
  return report;
}

void ApplyCalibration(const CalibrationReport& report, Trace* trace) {
  for (uint32_t i = 0;
       i < trace->track_count() && i < report.track_offset_ns.size(); ++i) {
    trace->mutable_track(TrackId(i)).clock_offset_ns =
        report.track_offset_ns[i];
  }
}

}  // namespace mi::analysis
