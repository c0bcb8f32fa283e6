#include "analysis/cluster/rank_reduce.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/intervals.h"
#include "base/strings.h"

namespace mi::analysis {
namespace {

Intervals Intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t s = std::max(a[i].first, b[j].first);
    const int64_t e = std::min(a[i].second, b[j].second);
    if (s < e) out.emplace_back(s, e);
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

// The step id of a run name: the digits after the last '#'
// ("ProfilerStep#3" -> 3), else the trailing digits; -1 when none.
int64_t StepIdOf(std::string_view name) {
  size_t hash = name.rfind('#');
  std::string_view digits;
  if (hash != std::string_view::npos) {
    digits = name.substr(hash + 1);
  } else {
    size_t i = name.size();
    while (i > 0 && IsAsciiDigit(name[i - 1])) --i;
    digits = name.substr(i);
  }
  if (digits.empty()) return -1;
  std::optional<int64_t> v = ParseInteger<int64_t>(digits);
  return v ? *v : -1;
}

struct DeviceTask {
  TaskId task;
  int64_t start;
  int64_t end;
};

bool IsDataLoading(std::string_view name) {
  return ContainsIgnoringCase(name, "DataLoader");
}

// A collective's own name: hcom_* ops, NCCL kernels (the device tasks a
// collective record stands for; Ascend's HCCL sub-tasks such as
// Notify_Wait are communication too, but parts of one op).
bool IsCollectiveOpName(std::string_view name) {
  return StartsWithIgnoringCase(name, "hcom_") ||
         StartsWithIgnoringCase(name, "nccl");
}

// hcom_<collective>__<G>_<k>[_<m>]: the group's last digits and k.
struct HcomName {
  std::string group_digits;
  int64_t sequence = -1;
};
HcomName ParseHcomName(std::string_view name) {
  HcomName out;
  size_t sep = name.find("__");
  if (!StartsWithIgnoringCase(name, "hcom_") || sep == std::string_view::npos) {
    return out;
  }
  std::vector<std::string_view> parts = Split(name.substr(sep + 2), '_');
  if (parts.size() >= 2) {
    out.group_digits = std::string(parts[0]);
    if (auto k = ParseInteger<int64_t>(parts[1])) out.sequence = *k;
  }
  return out;
}

// NCCL kernel names: ncclDevKernel_<Coll>_<ALGO>_<PROTO>(...),
// ncclKernel_<Coll>_<ALGO>_<PROTO>_<op>_<type>(...).
void ParseNcclName(std::string_view name, std::string* algorithm,
                   std::string* protocol) {
  size_t paren = name.find('(');
  std::vector<std::string_view> parts = Split(name.substr(0, paren), '_');
  if (parts.size() >= 4 && StartsWithIgnoringCase(parts[0], "nccl")) {
    *algorithm = std::string(parts[2]);
    *protocol = std::string(parts[3]);
  }
}

std::string NodeDisplayLevel(const Model& model, NodeId n) {
  return std::string(LayerLevelName(model.node_level(n)));
}

}  // namespace

std::string_view CollectiveTypeName(CollectiveType type) {
  switch (type) {
    case CollectiveType::kAllReduce:
      return "allreduce";
    case CollectiveType::kAllGather:
      return "allgather";
    case CollectiveType::kReduceScatter:
      return "reducescatter";
    case CollectiveType::kBroadcast:
      return "broadcast";
    case CollectiveType::kReduce:
      return "reduce";
    case CollectiveType::kAllToAll:
      return "alltoall";
    case CollectiveType::kSend:
      return "send";
    case CollectiveType::kReceive:
      return "receive";
    case CollectiveType::kBarrier:
      return "barrier";
    case CollectiveType::kGather:
      return "gather";
    case CollectiveType::kScatter:
      return "scatter";
    case CollectiveType::kUnknown:
      break;
  }
  return "unknown";
}

std::string CollectiveTypeOfName(std::string_view name) {
  std::string lower;
  for (char c : name) {
    if (c == '(') break;
    if (c != '_') lower.push_back(AsciiLower(c));
  }
  // Longest names first: reducescatter before reduce, allgather before
  // gather, alltoall before all*.
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"reducescatter", "reducescatter"},
      {"allreduce", "allreduce"},
      {"allgather", "allgather"},
      {"alltoall", "alltoall"},
      {"broadcast", "broadcast"},
      {"batchsendrecv", "send"},
      {"sendrecv", "send"},
      {"receive", "receive"},
      {"recv", "receive"},
      {"send", "send"},
      {"barrier", "barrier"},
      {"reduce", "reduce"},
      {"gather", "gather"},
      {"scatter", "scatter"},
  };
  for (const auto& [needle, type] : kTypes) {
    if (lower.find(needle) != std::string::npos) return std::string(type);
  }
  return "unknown";
}

std::vector<SourceId> RankSources(const Trace& trace) {
  std::vector<SourceId> out;
  for (uint32_t s = 0; s < trace.source_count(); ++s) {
    if (trace.source_track_count(SourceId(s)) > 0) out.push_back(SourceId(s));
  }
  if (out.empty() && trace.source_count() > 0) out.push_back(SourceId(0u));
  return out;
}

ClusterRankSummary ReduceRank(const Model& model, const Trace& trace,
                              const Links& links, SourceId source,
                              const RankReduceOptions& options) {
  (void)links;
  ClusterRankSummary out;
  const SourceInfo* info =
      source.value() < trace.source_count() ? &trace.source(source) : nullptr;
  const int64_t base = info ? info->base_ns : 0;
  if (info) {
    out.rank = info->rank;
    out.world_size = info->world_size;
    out.host = std::string(trace.str(info->host));
    for (StringId f : info->files) out.files.emplace_back(trace.str(f));
    if (out.files.empty() && info->key != StringPool::kEmpty) {
      out.files.emplace_back(trace.str(info->key));
    }
    for (const ProcessGroupInfo& g : info->process_groups) {
      ClusterProcessGroup pg;
      pg.name = std::string(trace.str(g.name));
      pg.long_name = std::string(trace.str(g.long_name));
      pg.description = std::string(trace.str(g.description));
      pg.global_ranks = g.global_ranks;
      pg.group_rank = g.group_rank;
      out.process_groups.push_back(std::move(pg));
    }
  }
  auto of_source = [&](TaskId t) {
    return trace.task_source(t) == source ||
           (trace.source_count() <= 1 && !trace.task_source(t).valid());
  };

  // Devices of the rank.
  {
    std::map<int32_t, std::string> devices;
    for (uint32_t k = 0; k < trace.track_count(); ++k) {
      const TrackInfo& tr = trace.track(TrackId(k));
      if (tr.source != source || tr.kind != TrackKind::kDeviceStream) continue;
      if (devices.count(tr.device)) continue;
      std::string name = TrackDeviceName(trace, TrackId(k));
      const std::string prefix = SourcePrefix(trace, source);
      if (!prefix.empty() && name.starts_with(prefix)) {
        name = name.substr(prefix.size());
      }
      if (name.empty()) {
        name = tr.device >= 0 ? "device " + std::to_string(tr.device)
                              : TrackProcessName(trace, TrackId(k));
      }
      devices[tr.device] = name;
    }
    for (auto& [d, name] : devices) {
      if (std::find(out.devices.begin(), out.devices.end(), name) ==
          out.devices.end()) {
        out.devices.push_back(name);
      }
    }
  }

  // The rank's tasks by what they are.
  Intervals compute_iv, comm_iv, copy_iv, data_iv;
  std::vector<DeviceTask> device_tasks;  // work on device streams
  std::vector<TaskId> collective_tasks;
  int64_t last_end = std::numeric_limits<int64_t>::min();
  int64_t first_start = std::numeric_limits<int64_t>::max();
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (!of_source(t)) continue;
    const int64_t s = trace.task_start_ns(t);
    const int64_t e = trace.task_end_ns(t);
    const TaskKind kind = trace.task_kind(t);
    if (kind == TaskKind::kHostOp &&
        IsDataLoading(trace.str(trace.task_name(t)))) {
      data_iv.emplace_back(s, e);
      continue;
    }
    if (!IsExecutionWork(trace, t)) continue;
    first_start = std::min(first_start, s);
    last_end = std::max(last_end, e);
    device_tasks.push_back({t, s, e});
    if (IsCommunicationTask(trace, t)) {
      comm_iv.emplace_back(s, e);
      if (IsCollectiveOpName(trace.str(trace.task_name(t)))) {
        collective_tasks.push_back(t);
      }
    } else if (kind == TaskKind::kCompute) {
      compute_iv.emplace_back(s, e);
    } else {
      copy_iv.emplace_back(s, e);
    }
  }
  compute_iv = MergeIntervals(std::move(compute_iv));
  comm_iv = MergeIntervals(std::move(comm_iv));
  data_iv = MergeIntervals(std::move(data_iv));
  Intervals busy_iv = compute_iv;
  busy_iv.insert(busy_iv.end(), comm_iv.begin(), comm_iv.end());
  busy_iv.insert(busy_iv.end(), copy_iv.begin(), copy_iv.end());
  busy_iv = MergeIntervals(std::move(busy_iv));
  const Intervals both_iv = Intersect(compute_iv, comm_iv);
  std::sort(device_tasks.begin(), device_tasks.end(),
            [](const DeviceTask& a, const DeviceTask& b) {
              return a.start < b.start;
            });

  // Steps: the source's runs in start order, prologue left out.
  struct Window {
    int64_t step = -1;
    std::string label;
    int64_t start = 0, end = 0;
    uint32_t run = std::numeric_limits<uint32_t>::max();
  };
  std::vector<Window> windows;
  {
    const auto& runs = trace.runs();
    std::vector<uint32_t> list;
    for (uint32_t r = 0; r < runs.size(); ++r) {
      const bool mine = runs[r].source == source ||
                        (!runs[r].source.valid() && trace.source_count() <= 1);
      if (mine) list.push_back(r);
    }
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return runs[a].start_ns < runs[b].start_ns;
    });
    for (size_t k = 0; k < list.size(); ++k) {
      const RunInfo& run = runs[list[k]];
      std::string_view name = trace.str(run.name);
      if (name.starts_with("before ")) continue;
      Window w;
      w.run = list[k];
      w.label = std::string(name);
      w.step = StepIdOf(name);
      w.start = run.start_ns;
      w.end = k + 1 < list.size() ? runs[list[k + 1]].start_ns : run.end_ns;
      if (k + 1 == list.size()) {
        // The last step keeps the device work it launched.
        for (const DeviceTask& d : device_tasks) {
          if (trace.task_run(d.task) == list[k]) w.end = std::max(w.end, d.end);
        }
      }
      w.end = std::max(w.end, w.start);
      windows.push_back(std::move(w));
    }
    if (windows.empty() && first_start <= last_end) {
      Window w;
      w.label = "whole trace";
      w.start = first_start;
      w.end = last_end;
      windows.push_back(std::move(w));
    }
  }
  auto window_of = [&](int64_t t) -> int {
    for (size_t k = windows.size(); k-- > 0;) {
      if (t >= windows[k].start && t < windows[k].end)
        return static_cast<int>(k);
    }
    return -1;
  };

  CorrelationIndex correlations(trace);
  auto launch_of = [&](TaskId t) -> TaskId {
    TaskId l = trace.task_launch(t);
    if (l.valid()) return l;
    return correlations.RuntimeCallOf(t);
  };

  // The profiler's step_trace rows of this source, by step id.
  std::map<std::string, const StepTraceRow*> step_trace;
  for (const StepTraceRow& r : trace.communication().step_trace) {
    if (r.source == source && trace.str(r.type).empty()) {
      step_trace[std::string(trace.str(r.step))] = &r;
    }
  }

  for (const Window& w : windows) {
    ClusterRankStep st;
    st.step = w.step;
    st.label = w.label;
    st.start_ns = w.start + base;
    st.end_ns = w.end + base;
    st.wall_ns = w.end - w.start;
    st.compute_ns = CoveredIn(compute_iv, w.start, w.end);
    st.communication_ns = CoveredIn(comm_iv, w.start, w.end);
    st.overlapped_communication_ns = CoveredIn(both_iv, w.start, w.end);
    st.exposed_communication_ns =
        st.communication_ns - st.overlapped_communication_ns;
    st.idle_ns = st.wall_ns - CoveredIn(busy_iv, w.start, w.end);
    st.data_loading_ns = CoveredIn(data_iv, w.start, w.end);
    // Host-bound idle: each gap of the devices' union inside the step,
    // ended by a task whose launch began after the gap began.
    {
      int64_t cursor = w.start;
      bool seen = false;
      auto it = std::lower_bound(
          device_tasks.begin(), device_tasks.end(), w.start,
          [](const DeviceTask& d, int64_t s) { return d.start < s; });
      // Tasks that started before the window and still run count as busy.
      for (const DeviceTask& d : device_tasks) {
        if (d.start >= w.start) break;
        cursor = std::max(cursor, d.end);
      }
      for (; it != device_tasks.end() && it->start < w.end; ++it) {
        if (!seen) {
          st.first_device_start_ns = it->start + base;
          seen = true;
        }
        if (it->start > cursor) {
          TaskId l = launch_of(it->task);
          // A launch that begins after its kernel did is a clock or
          // ordering fault of the trace, not the host holding the device.
          if (l.valid() && trace.task_start_ns(l) >= cursor &&
              trace.task_start_ns(l) <= it->start) {
            st.host_bound_ns += std::min(it->start, w.end) - cursor;
          }
        }
        cursor = std::max(cursor, it->end);
      }
    }
    // Compute by op type and the longest nodes.
    std::map<std::string, ClusterOpTime> types;
    struct NodeKey {
      int64_t node;
      std::string name;
      bool operator<(const NodeKey& o) const {
        return node != o.node ? node < o.node : name < o.name;
      }
    };
    std::map<NodeKey, ClusterNodeTime> nodes;
    auto first = std::lower_bound(
        device_tasks.begin(), device_tasks.end(), w.start,
        [](const DeviceTask& d, int64_t s) { return d.start < s; });
    for (auto it = first; it != device_tasks.end() && it->start < w.end; ++it) {
      TaskId t = it->task;
      if (trace.task_kind(t) != TaskKind::kCompute ||
          IsCommunicationTask(trace, t)) {
        continue;
      }
      NodeId n = trace.task_node(t);
      std::string_view op = trace.str(trace.task_op_type(t));
      if (op.empty() && n.valid() && n.value() < model.node_count()) {
        op = model.strings().Get(model.node_op_type(n));
      }
      if (op.empty()) op = trace.str(trace.task_name(t));
      const int64_t dur = it->end - it->start;
      ClusterOpTime& ot = types[std::string(op)];
      ot.op_type = std::string(op);
      ot.time_ns += dur;
      ++ot.count;
      NodeKey key;
      ClusterNodeTime nt;
      if (n.valid() && n.value() < model.node_count()) {
        key = {static_cast<int64_t>(n.value()), ""};
        nt.node = n.value();
        nt.name = std::string(model.strings().Get(model.node_name(n)));
        nt.level = NodeDisplayLevel(model, n);
      } else {
        std::string_view nn = trace.str(trace.task_node_name(t));
        if (nn.empty()) nn = trace.str(trace.task_name(t));
        key = {-1, std::string(nn)};
        nt.name = std::string(nn);
      }
      nt.op_type = std::string(op);
      ClusterNodeTime& slot = nodes.try_emplace(key, nt).first->second;
      slot.time_ns += dur;
      ++slot.count;
    }
    for (auto& [k, v] : types) st.op_types.push_back(std::move(v));
    std::sort(st.op_types.begin(), st.op_types.end(),
              [](const ClusterOpTime& a, const ClusterOpTime& b) {
                return a.time_ns != b.time_ns ? a.time_ns > b.time_ns
                                              : a.op_type < b.op_type;
              });
    for (auto& [k, v] : nodes) st.top_nodes.push_back(std::move(v));
    std::sort(st.top_nodes.begin(), st.top_nodes.end(),
              [](const ClusterNodeTime& a, const ClusterNodeTime& b) {
                return a.time_ns != b.time_ns ? a.time_ns > b.time_ns
                                              : a.name < b.name;
              });
    if (st.top_nodes.size() > options.top_nodes) {
      st.top_nodes.resize(options.top_nodes);
    }
    // The profiler's own split: the row of this step id, or the only row
    // when the rank has one step.
    const StepTraceRow* row = nullptr;
    if (auto f = step_trace.find(w.step >= 0 ? std::to_string(w.step) : "");
        f != step_trace.end()) {
      row = f->second;
    } else if (windows.size() == 1 && step_trace.size() == 1) {
      row = step_trace.begin()->second;
    }
    if (row) {
      st.has_step_trace = true;
      st.step_trace = {row->computing_ns,
                       row->communication_not_overlapped_ns,
                       row->overlapped_ns,
                       row->communication_ns,
                       row->free_ns,
                       row->stage_ns,
                       row->bubble_ns,
                       row->communication_not_overlapped_excluding_receive_ns,
                       row->preparing_ns};
    }
    out.steps.push_back(std::move(st));
  }

  // Collectives: the importers' records, else the collective tasks.
  auto fill_from_task = [&](ClusterRankCollective& c, TaskId t) {
    c.task = t.value();
    TaskId host = trace.task_parent(t);
    if (!host.valid()) host = launch_of(t);
    if (host.valid())
      c.issued_by = std::string(trace.str(trace.task_name(host)));
    NodeId n = trace.task_node(t);
    if (!n.valid() && host.valid()) n = trace.task_node(host);
    if (n.valid() && n.value() < model.node_count()) {
      c.node = n.value();
      c.node_name = std::string(model.strings().Get(model.node_name(n)));
      c.node_level = NodeDisplayLevel(model, n);
    }
  };
  auto set_step = [&](ClusterRankCollective& c, int64_t raw_start) {
    int k = window_of(raw_start);
    if (k >= 0) {
      c.step = windows[k].step;
      if (c.step_label.empty()) c.step_label = windows[k].label;
    }
  };
  bool have_records = false;
  for (const CollectiveRecord& r : trace.communication().collectives) {
    if (r.source != source) continue;
    have_records = true;
    ClusterRankCollective c;
    c.name = std::string(trace.str(r.name));
    c.type = r.type != CollectiveType::kUnknown
                 ? std::string(CollectiveTypeName(r.type))
                 : CollectiveTypeOfName(c.name);
    c.group = std::string(trace.str(r.group));
    c.group_size = r.group_size;
    c.sequence = r.sequence;
    c.step_label = std::string(trace.str(r.step_label));
    c.start_ns = r.start_ns + base;
    c.end_ns = r.end_ns + base;
    c.bytes = r.bytes;
    c.in_elements = r.in_elements;
    c.out_elements = r.out_elements;
    c.dtype = std::string(trace.str(r.dtype));
    c.algorithm = std::string(trace.str(r.algorithm));
    c.protocol = std::string(trace.str(r.protocol));
    c.transit_ns = r.transit_ns;
    c.wait_ns = r.wait_ns;
    c.synchronization_ns = r.synchronization_ns;
    c.idle_ns = r.idle_ns;
    c.overlapped_ns = CoveredIn(compute_iv, r.start_ns, r.end_ns);
    if (r.task.valid()) fill_from_task(c, r.task);
    set_step(c, r.start_ns);
    if (r.run >= 0 && static_cast<size_t>(r.run) < trace.runs().size()) {
      c.step = StepIdOf(trace.str(trace.runs()[r.run].name));
    }
    out.collectives.push_back(std::move(c));
  }
  if (!have_records) {
    // One per collective op task; an op the trace holds twice (Ascend's
    // timeline event and its kernel_details row) counts once.
    std::map<std::pair<std::string, int64_t>, bool> seen;
    for (TaskId t : collective_tasks) {
      std::string name(trace.str(trace.task_name(t)));
      if (!seen.emplace(std::make_pair(name, trace.task_start_ns(t)), true)
               .second) {
        continue;
      }
      ClusterRankCollective c;
      c.name = name;
      c.type = CollectiveTypeOfName(name);
      HcomName h = ParseHcomName(name);
      c.group = h.group_digits;
      c.sequence = h.sequence;
      if (StartsWithIgnoringCase(name, "nccl")) {
        ParseNcclName(name, &c.algorithm, &c.protocol);
      }
      c.start_ns = trace.task_start_ns(t) + base;
      c.end_ns = trace.task_end_ns(t) + base;
      c.overlapped_ns =
          CoveredIn(compute_iv, trace.task_start_ns(t), trace.task_end_ns(t));
      fill_from_task(c, t);
      set_step(c, trace.task_start_ns(t));
      out.collectives.push_back(std::move(c));
    }
  }
  std::stable_sort(
      out.collectives.begin(), out.collectives.end(),
      [](const ClusterRankCollective& a, const ClusterRankCollective& b) {
        return a.start_ns < b.start_ns;
      });

  // The profiler's communication tables, as read.
  for (const CommunicationBandwidthRow& r : trace.communication().bandwidth) {
    if (r.source != source) continue;
    out.bandwidth.push_back({std::string(trace.str(r.step)),
                             std::string(trace.str(r.op_name)),
                             std::string(trace.str(r.group)), r.p2p,
                             std::string(trace.str(r.transport)), r.size_bytes,
                             r.transit_ns, r.bandwidth_gbps});
  }
  for (const CommunicationLinkRow& r : trace.communication().links) {
    if (r.source != source) continue;
    out.links.push_back(
        {std::string(trace.str(r.step)), std::string(trace.str(r.statistic)),
         std::string(trace.str(r.group)), r.p2p, r.src_rank, r.dst_rank,
         std::string(trace.str(r.transport)), r.size_bytes, r.transit_ns,
         r.bandwidth_gbps, std::string(trace.str(r.op_name))});
  }
  return out;
}

}  // namespace mi::analysis
