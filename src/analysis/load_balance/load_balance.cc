#include "analysis/load_balance/load_balance.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/strings.h"

namespace mi::analysis {
namespace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// Length of the union of the intervals.
int64_t UnionLength(Intervals& v) {
  std::sort(v.begin(), v.end());
  int64_t total = 0;
  int64_t start = 0;
  int64_t end = std::numeric_limits<int64_t>::min();
  for (const auto& [s, e] : v) {
    if (s > end) {
      if (end > start) total += end - start;
      start = s;
      end = e;
    } else {
      end = std::max(end, e);
    }
  }
  if (end > start) total += end - start;
  return total;
}

// The tasks of one source or device, by what they did.
struct Accumulator {
  Intervals busy, compute, communication, data_movement, sync;
  std::set<uint32_t> tracks;
  uint64_t tasks = 0;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();

  void Add(const Trace& trace, TaskId t) {
    int64_t start = trace.task_calibrated_start_ns(t);
    int64_t end = start + trace.task_duration_ns(t);
    ++tasks;
    tracks.insert(trace.task_track(t).value());
    first = std::min(first, start);
    last = std::max(last, end);
    if (IsSyncTask(trace, t)) {
      // Waiting is not work: apart from busy time.
      sync.emplace_back(start, end);
      return;
    }
    busy.emplace_back(start, end);
    if (IsCommunicationTask(trace, t)) {
      communication.emplace_back(start, end);
    } else if (trace.task_kind(t) == TaskKind::kCompute) {
      compute.emplace_back(start, end);
    } else if (trace.task_kind(t) == TaskKind::kDataMovement) {
      data_movement.emplace_back(start, end);
    } else {
      sync.emplace_back(start, end);
    }
  }

  LoadBalanceTimes Times() {
    LoadBalanceTimes out;
    out.tasks = tasks;
    out.busy_ns = UnionLength(busy);
    out.compute_ns = UnionLength(compute);
    out.communication_ns = UnionLength(communication);
    out.data_movement_ns = UnionLength(data_movement);
    out.sync_ns = UnionLength(sync);
    out.span_ns = tasks > 0 ? last - first : 0;
    out.idle_ns = out.span_ns - out.busy_ns;
    return out;
  }
};

// What a task's device is called: "GPU 0", else its process (Ascend
// timelines number devices by process: "Ascend Hardware (NPU)", "HCCL").
std::string DeviceName(const Trace& trace, TrackId track) {
  std::string name = TrackDeviceName(trace, track);
  return name.empty() ? TrackProcessName(trace, track) : name;
}

LoadBalanceImbalance Imbalance(const std::vector<LoadBalanceSource>& sources,
                               int64_t LoadBalanceTimes::*field) {
  LoadBalanceImbalance out;
  if (sources.empty()) return out;
  int64_t sum = 0;
  out.min_ns = std::numeric_limits<int64_t>::max();
  out.max_ns = std::numeric_limits<int64_t>::min();
  for (const LoadBalanceSource& s : sources) {
    int64_t v = s.times.*field;
    sum += v;
    out.min_ns = std::min(out.min_ns, v);
    if (v > out.max_ns) {  // ties: the first source
      out.max_ns = v;
      out.slowest_source = s.source;
      out.slowest_name = s.name;
    }
  }
  out.mean_ns = static_cast<double>(sum) / static_cast<double>(sources.size());
  out.max_over_mean =
      out.mean_ns > 0 ? static_cast<double>(out.max_ns) / out.mean_ns : 0;
  out.slowest_over_mean_ns = static_cast<double>(out.max_ns) - out.mean_ns;
  return out;
}

void WriteTimes(ResultWriter& w, const LoadBalanceTimes& t) {
  w.FieldUInt("tasks", t.tasks);
  w.FieldInt("busy_ns", t.busy_ns);
  w.FieldInt("compute_ns", t.compute_ns);
  w.FieldInt("communication_ns", t.communication_ns);
  w.FieldInt("data_movement_ns", t.data_movement_ns);
  w.FieldInt("sync_ns", t.sync_ns);
  w.FieldInt("span_ns", t.span_ns);
  w.FieldInt("idle_ns", t.idle_ns);
}

void WriteImbalance(ResultWriter& w, const LoadBalanceImbalance& i, bool any) {
  w.BeginObject();
  w.FieldInt("max_ns", i.max_ns).FieldInt("min_ns", i.min_ns);
  w.FieldDouble("mean_ns", i.mean_ns);
  w.FieldDouble("max_over_mean", i.max_over_mean);
  w.Key("slowest_source");
  any ? w.UInt(i.slowest_source) : w.Null();
  w.Field("slowest_name", i.slowest_name);
  w.FieldDouble("slowest_over_mean_ns", i.slowest_over_mean_ns);
  w.EndObject();
}

}  // namespace

LoadBalanceResult ComputeLoadBalance(const Trace& trace, int64_t source) {
  std::vector<Accumulator> by_source(trace.source_count());
  // Per source, its devices by name (first-seen device index kept).
  std::vector<std::map<std::string, std::pair<int32_t, Accumulator>>> by_device(
      trace.source_count());
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (!IsExecutionKind(trace.task_kind(t))) continue;
    TrackId track = trace.task_track(t);
    uint32_t s = trace.track_source(track).value();
    by_source[s].Add(trace, t);
    const TrackInfo& info = trace.track(track);
    int32_t device =
        info.kind == TrackKind::kDeviceStream ? info.device : int32_t{-1};
    auto [it, inserted] = by_device[s].try_emplace(DeviceName(trace, track),
                                                   device, Accumulator());
    it->second.second.Add(trace, t);
  }
  LoadBalanceResult out;
  for (uint32_t s = 0; s < by_source.size(); ++s) {
    if (by_source[s].tasks == 0) continue;
    LoadBalanceSource row;
    row.source = s;
    row.name = SourceName(trace, SourceId(s));
    int32_t rank = trace.source(SourceId(s)).rank;
    if (rank >= 0) row.rank = rank;
    row.devices = by_device[s].size();
    row.times = by_source[s].Times();
    out.sources.push_back(std::move(row));
    if (source >= 0 && s != source) continue;
    for (auto& [name, entry] : by_device[s]) {
      LoadBalanceDevice d;
      d.source = s;
      d.source_name = out.sources.back().name;
      d.device = entry.first;
      d.name = name;
      d.streams = entry.second.tracks.size();
      d.times = entry.second.Times();
      out.devices.push_back(std::move(d));
    }
  }
  out.busy = Imbalance(out.sources, &LoadBalanceTimes::busy_ns);
  out.compute = Imbalance(out.sources, &LoadBalanceTimes::compute_ns);
  for (LoadBalanceSource& s : out.sources) {
    s.busy_over_mean =
        out.busy.mean_ns > 0
            ? static_cast<double>(s.times.busy_ns) / out.busy.mean_ns
            : 0;
  }
  return out;
}

void LoadBalanceResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.Key("sources").BeginArray();
  for (const LoadBalanceSource& s : sources) {
    w.BeginObject();
    w.FieldUInt("source", s.source).Field("name", s.name);
    w.FieldOptional("rank", s.rank);
    w.FieldUInt("devices", s.devices);
    WriteTimes(w, s.times);
    w.FieldDouble("busy_over_mean", s.busy_over_mean);
    w.EndObject();
  }
  w.EndArray();
  w.Key("imbalance").BeginObject();
  w.Key("busy");
  WriteImbalance(w, busy, !sources.empty());
  w.Key("compute");
  WriteImbalance(w, compute, !sources.empty());
  w.EndObject();
  w.Key("devices").BeginArray();
  for (const LoadBalanceDevice& d : devices) {
    w.BeginObject();
    w.FieldUInt("source", d.source).Field("source_name", d.source_name);
    w.FieldInt("device", d.device).Field("name", d.name);
    w.FieldUInt("streams", d.streams);
    WriteTimes(w, d.times);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

const AnalysisDescriptor& LoadBalanceAnalysis() {
  static const AnalysisDescriptor d = [] {
    ParameterSpec source{"source", ParameterType::kInt, "-1",
                         "list the devices of this source only (its index in "
                         "trace.json sources[]); -1: of every source"};
    source.min = -1;
    return AnalysisDescriptor{
        .id = "load_balance",
        .title = "Load balance across sources",
        .summary =
            "per source (rank, profiled process): device busy time split "
            "into compute, collective communication (NCCL / HCCL / hcom_), "
            "copies and waits, idle time and tasks; the imbalance (max / mean "
            "of busy and of compute time, the slowest source and by how "
            "much); per device of each source",
        .needs = kNeedsTrace,
        .parameters = {source},
        .in_export = true,
        .fields =
            {
                {"sources", "one row per source with execution tasks"},
                {"sources[].source", "source index (trace.json sources[])"},
                {"sources[].name", "\"rank N\", else the file or folder"},
                {"sources[].rank", "distributed rank; null when not said"},
                {"sources[].devices", "devices (or processes) it ran on"},
                {"sources[].tasks", "execution tasks"},
                {"sources[].busy_ns",
                 "time some work task ran (compute, communication, copies; "
                 "not syncs)"},
                {"sources[].compute_ns",
                 "time some non-collective compute ran"},
                {"sources[].communication_ns", "time some collective ran"},
                {"sources[].data_movement_ns", "time some copy ran"},
                {"sources[].sync_ns",
                 "time some sync or wait ran (not part of busy)"},
                {"sources[].span_ns", "first task start to last task end"},
                {"sources[].idle_ns", "span - busy"},
                {"sources[].busy_over_mean", "busy / the mean busy time"},
                {"imbalance", "over the sources"},
                {"imbalance.busy", "of busy time"},
                {"imbalance.busy.max_ns", "the largest"},
                {"imbalance.busy.min_ns", "the smallest"},
                {"imbalance.busy.mean_ns", "the mean"},
                {"imbalance.busy.max_over_mean", "max / mean (1: even)"},
                {"imbalance.busy.slowest_source", "the source with the max"},
                {"imbalance.busy.slowest_name", "its name"},
                {"imbalance.busy.slowest_over_mean_ns", "max - mean"},
                {"imbalance.compute",
                 "of compute time (collectives left out: "
                 "a fast rank waits inside them)"},
                {"imbalance.compute.max_ns", "the largest"},
                {"imbalance.compute.min_ns", "the smallest"},
                {"imbalance.compute.mean_ns", "the mean"},
                {"imbalance.compute.max_over_mean", "max / mean (1: even)"},
                {"imbalance.compute.slowest_source", "the source with the max"},
                {"imbalance.compute.slowest_name", "its name"},
                {"imbalance.compute.slowest_over_mean_ns", "max - mean"},
                {"devices", "per device of each source (or of `source`)"},
                {"devices[].source", "source index"},
                {"devices[].source_name", "source name"},
                {"devices[].device", "device index; -1: host threads"},
                {"devices[].name", "\"GPU 0\", else the process"},
                {"devices[].streams", "tracks with execution tasks"},
                {"devices[].tasks", "execution tasks"},
                {"devices[].busy_ns", "as for sources"},
                {"devices[].compute_ns", "as for sources"},
                {"devices[].communication_ns", "as for sources"},
                {"devices[].data_movement_ns", "as for sources"},
                {"devices[].sync_ns", "as for sources"},
                {"devices[].span_ns", "as for sources"},
                {"devices[].idle_ns", "as for sources"},
            },
        .reference = {},
        .run = [](const AnalysisContext& ctx, const ParsedParams& params)
            -> StatusOr<std::unique_ptr<AnalysisResult>> {
          int64_t source = params.Int("source");
          if (source >= static_cast<int64_t>(ctx.trace->source_count())) {
            return InvalidArgumentError(fmt::format(
                "analysis 'load_balance': parameter 'source': the trace has "
                "sources 0..{}, found {}",
                ctx.trace->source_count() - 1, source));
          }
          return std::unique_ptr<AnalysisResult>(
              std::make_unique<LoadBalanceResult>(
                  ComputeLoadBalance(*ctx.trace, source)));
        }};
  }();
  return d;
}

}  // namespace mi::analysis
