#include "analysis/timing/calibration.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/timing/timing_common.h"

namespace mi::analysis {
namespace {

struct Anchor {
  TaskId from;
  TaskId to;
  int64_t from_ns;  // raw release time of the dependency
  int64_t to_ns;    // raw start of the dependent task
  uint32_t from_domain;
  uint32_t to_domain;
  AnchorKind kind;
};

// Clock domains: 0 = host (reference), then one per device (or stream).
std::vector<uint32_t> AssignDomains(const Trace& trace, bool per_stream,
                                    std::vector<ClockDomainOffset>* domains) {
  std::vector<uint32_t> domain_of(trace.track_count(), 0);
  domains->clear();
  ClockDomainOffset host;
  host.name = "host";
  host.reference = true;
  domains->push_back(host);
  std::map<int64_t, uint32_t> by_key;
  for (uint32_t i = 0; i < trace.track_count(); ++i) {
    const TrackInfo& info = trace.track(TrackId(i));
    if (info.kind != TrackKind::kDeviceStream) {
      (*domains)[0].tracks.push_back(TrackId(i));
      continue;
    }
    int64_t key = per_stream ? i : DeviceKey(info);
    auto [it, inserted] =
        by_key.emplace(key, static_cast<uint32_t>(domains->size()));
    if (inserted) {
      ClockDomainOffset d;
      std::string device = info.device >= 0
                               ? fmt::format("device {}", info.device)
                               : fmt::format("device (pid {})", info.pid);
      d.name = per_stream ? fmt::format("stream {} ({})", info.stream, device)
                          : device;
      domains->push_back(std::move(d));
    }
    domain_of[i] = it->second;
    (*domains)[it->second].tracks.push_back(TrackId(i));
  }
  return domain_of;
}

std::vector<Anchor> CollectAnchors(const Model& model, const Trace& trace,
                                   const std::vector<uint32_t>& domain_of) {
  std::vector<Anchor> anchors;
  auto domain = [&](TaskId t) {
    return domain_of[trace.task_track(t).value()];
  };
  auto add = [&](TaskId from, int64_t from_ns, TaskId to, AnchorKind kind) {
    anchors.push_back({from, to, from_ns, trace.task_start_ns(to), domain(from),
                       domain(to), kind});
  };
  // Launch: the device task starts after its launching call starts.
  LaunchIndex launches(trace);
  std::unordered_map<int32_t, std::vector<TaskId>> recorders;
  bool any_wait = false;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (!IsWorkTask(trace, t)) continue;
    if (IsDeviceTrack(trace, trace.task_track(t))) {
      TaskId launch = launches.LaunchOf(t);
      if (launch.valid() && launch != t) {
        add(launch, trace.task_start_ns(launch), t, AnchorKind::kLaunch);
      }
    }
    if (trace.task_event_after(t) >= 0) {
      recorders[trace.task_event_after(t)].push_back(t);
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
      auto it = recorders.find(trace.task_event_before(t));
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
      add(from, trace.task_end_ns(from), t, AnchorKind::kEvent);
    }
  }
  // Copy: the first task of a node consuming a copy node's output starts
  // after the copy ends.
  struct Span {
    TaskId first;
    TaskId last;
  };
  std::unordered_map<uint64_t, Span> spans;
  auto key = [](NodeId n, uint32_t run) {
    return (static_cast<uint64_t>(n.value()) << 32) | run;
  };
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    NodeId n = trace.task_node(t);
    if (!n.valid() || n.value() >= model.node_count() ||
        !IsExecutionKind(trace.task_kind(t))) {
      continue;
    }
    Span& s = spans[key(n, trace.task_run(t))];
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
    NodeId n(static_cast<uint32_t>(k >> 32));
    uint32_t run = static_cast<uint32_t>(k & 0xffffffffu);
    for (ValueId out : model.node_outputs(n)) {
      if (!out.valid()) continue;
      for (NodeId c : model.value_consumers(out)) {
        auto it = spans.find(key(c, run));
        if (it == spans.end() || c == n) continue;
        add(producer.last, trace.task_end_ns(producer.last), it->second.first,
            AnchorKind::kCopy);
      }
    }
  }
  return anchors;
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
  std::vector<Anchor> anchors = CollectAnchors(model, trace, domain_of);
  report.anchors = anchors.size();
  const size_t domain_count = report.domains.size();

  // The tightest constraint per ordered domain pair.
  struct Constraint {
    int64_t weight;  // offset(to) - offset(from) >= weight
    size_t anchor;
  };
  std::map<std::pair<uint32_t, uint32_t>, Constraint> constraints;
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
    ++report.domains[a.from_domain].anchors;
    ++report.domains[a.to_domain].anchors;
    auto [it, inserted] = constraints.try_emplace({a.from_domain, a.to_domain},
                                                  Constraint{violation, i});
    if (!inserted && violation > it->second.weight) {
      it->second = {violation, i};
    }
  }

  // Bellman-Ford from all-zero: each round relaxes every violated
  // constraint by moving the non-reference side; D + 1 rounds settle any
  // consistent system of D domains.
  std::vector<int64_t> offset(domain_count, 0);
  std::vector<size_t> binding(domain_count, SIZE_MAX);
  bool changed = true;
  for (size_t round = 0; changed && round <= domain_count + 1; ++round) {
    changed = false;
    for (const auto& [pair, c] : constraints) {
      auto [from, to] = pair;
      if (offset[to] - offset[from] >= c.weight) continue;
      if (!report.domains[to].reference) {
        offset[to] = offset[from] + c.weight;
        binding[to] = c.anchor;
        changed = true;
      } else if (!report.domains[from].reference) {
        offset[from] = offset[to] - c.weight;
        binding[from] = c.anchor;
        changed = true;
      }
    }
  }
  report.converged = !changed;
  for (size_t d = 0; d < domain_count; ++d) {
    report.domains[d].offset_ns = offset[d];
    if (binding[d] != SIZE_MAX && offset[d] != 0) {
      report.domains[d].binding_from = anchors[binding[d]].from;
      report.domains[d].binding_to = anchors[binding[d]].to;
    }
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
