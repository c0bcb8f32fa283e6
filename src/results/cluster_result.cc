// Write() of the cluster report (cluster.json,
// docs/reference/schemas/cluster.schema.json) and of the rank summaries
// (docs/reference/schemas/cluster-summary.schema.json).

#include <string>
#include <vector>

#include "model_inspector/cluster.h"

namespace mi {
namespace {

// -1 (or any negative) is "not known": null.
void OptInt(ResultWriter& w, std::string_view key, int64_t v) {
  w.Key(key);
  if (v < 0) {
    w.Null();
  } else {
    w.Int(v);
  }
}

void OptDouble(ResultWriter& w, std::string_view key, double v) {
  w.Key(key);
  if (!(v >= 0)) {
    w.Null();
  } else {
    w.Double(v);
  }
}

void Strings(ResultWriter& w, std::string_view key,
             const std::vector<std::string>& v) {
  w.Key(key).BeginArray();
  for (const std::string& s : v) w.String(s);
  w.EndArray();
}

template <typename T>
void Ints(ResultWriter& w, std::string_view key, const std::vector<T>& v) {
  w.Key(key).BeginArray();
  for (T i : v) w.Int(static_cast<int64_t>(i));
  w.EndArray();
}

void StepTraceFigures(ResultWriter& w, const ClusterStepTraceFigures& f) {
  w.BeginObject();
  OptInt(w, "computing_ns", f.computing_ns);
  OptInt(w, "communication_not_overlapped_ns",
         f.communication_not_overlapped_ns);
  OptInt(w, "overlapped_ns", f.overlapped_ns);
  OptInt(w, "communication_ns", f.communication_ns);
  OptInt(w, "free_ns", f.free_ns);
  OptInt(w, "stage_ns", f.stage_ns);
  OptInt(w, "bubble_ns", f.bubble_ns);
  OptInt(w, "communication_not_overlapped_excluding_receive_ns",
         f.communication_not_overlapped_excluding_receive_ns);
  OptInt(w, "preparing_ns", f.preparing_ns);
  w.EndObject();
}

void StepTraceOrNull(ResultWriter& w, bool has,
                     const ClusterStepTraceFigures& f) {
  w.Key("step_trace");
  if (has) {
    StepTraceFigures(w, f);
  } else {
    w.Null();
  }
}

void WritePeak(ResultWriter& w, const LinkPeak& p) {
  w.BeginObject();
  w.Field("link_type", p.link_type).Field("chip", p.chip);
  w.FieldDouble("peak_gbps", p.peak_gbps).Field("origin", p.origin);
  w.EndObject();
}

void WriteClusterTables(ResultWriter& w,
                        const std::vector<ClusterStepTraceRow>& step_trace,
                        const std::vector<ClusterCommunicationOp>& comm) {
  w.Key("cluster_step_trace").BeginArray();
  for (const ClusterStepTraceRow& r : step_trace) {
    w.BeginObject();
    w.Field("step", r.step).Field("type", r.type);
    Ints(w, "ranks", r.ranks);
    w.Key("figures");
    StepTraceFigures(w, r.figures);
    w.EndObject();
  }
  w.EndArray();
  w.Key("cluster_communication").BeginArray();
  for (const ClusterCommunicationOp& r : comm) {
    w.BeginObject();
    Ints(w, "group_ranks", r.group_ranks);
    w.Field("step", r.step).Field("op_name", r.op_name);
    w.Field("group", r.group).FieldInt("rank", r.rank);
    OptInt(w, "start_ns", r.start_ns);
    OptInt(w, "elapse_ns", r.elapse_ns);
    OptInt(w, "transit_ns", r.transit_ns);
    OptInt(w, "wait_ns", r.wait_ns);
    OptInt(w, "synchronization_ns", r.synchronization_ns);
    OptInt(w, "idle_ns", r.idle_ns);
    w.EndObject();
  }
  w.EndArray();
}

void WriteFindingRow(ResultWriter& w, const ClusterFinding& f) {
  w.BeginObject();
  w.Field("rule", f.rule_id).Field("title", f.title);
  w.Field("severity", f.severity).Field("message", f.message);
  w.Field("suggestion", f.suggestion);
  w.FieldDouble("threshold", f.threshold);
  w.FieldInt("time_ns", f.time_ns).FieldDouble("share", f.share);
  Ints(w, "ranks", f.ranks);
  Ints(w, "steps", f.steps);
  Ints(w, "collectives", f.collectives);
  Strings(w, "nodes", f.nodes);
  w.EndObject();
}

}  // namespace

void ClusterReport::Write(ResultWriter& w) const {
  w.BeginObject();
  w.Field("schema", "model-inspector/cluster/1");
  OptInt(w, "world_size", world_size);
  w.Field("world_size_from", world_size_from);

  w.Key("ranks").BeginArray();
  for (const ClusterRankInfo& r : ranks) {
    w.BeginObject();
    w.FieldInt("rank", r.rank).Field("rank_from", r.rank_from);
    w.Field("host", r.host);
    Strings(w, "devices", r.devices);
    Strings(w, "files", r.files);
    w.FieldInt("steps", r.steps).FieldInt("collectives", r.collectives);
    w.FieldInt("wall_ns", r.wall_ns).FieldInt("compute_ns", r.compute_ns);
    w.FieldInt("communication_ns", r.communication_ns);
    w.FieldInt("exposed_communication_ns", r.exposed_communication_ns);
    w.FieldInt("idle_ns", r.idle_ns);
    w.EndObject();
  }
  w.EndArray();
  Ints(w, "missing_ranks", missing_ranks);

  w.Key("steps").BeginArray();
  for (const ClusterStep& s : steps) {
    w.BeginObject();
    OptInt(w, "step", s.step);
    w.Field("label", s.label);
    w.FieldInt("max_wall_ns", s.max_wall_ns);
    w.FieldInt("median_wall_ns", s.median_wall_ns);
    OptInt(w, "slowest_rank", s.slowest_rank);
    w.FieldDouble("compute_max_over_mean", s.compute_max_over_mean);
    w.FieldDouble("compute_spread_over_mean", s.compute_spread_over_mean);
    w.Key("ranks").BeginArray();
    for (const ClusterStepRank& r : s.ranks) {
      w.BeginObject();
      w.FieldInt("rank", r.rank).FieldInt("start_ns", r.start_ns);
      w.FieldInt("wall_ns", r.wall_ns).FieldInt("compute_ns", r.compute_ns);
      w.FieldInt("communication_ns", r.communication_ns);
      w.FieldInt("exposed_communication_ns", r.exposed_communication_ns);
      w.FieldInt("overlapped_communication_ns", r.overlapped_communication_ns);
      w.FieldInt("idle_ns", r.idle_ns);
      w.FieldInt("host_bound_ns", r.host_bound_ns);
      w.FieldInt("data_loading_ns", r.data_loading_ns);
      StepTraceOrNull(w, r.has_step_trace, r.step_trace);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();

  w.FieldInt("collective_instances", collective_instances);
  w.Key("collectives").BeginArray();
  for (const ClusterCollective& c : collectives) {
    w.BeginObject();
    w.Field("group", c.group);
    OptInt(w, "sequence", c.sequence);
    w.Field("name", c.name).Field("type", c.type);
    OptInt(w, "step", c.step);
    w.Field("step_label", c.step_label);
    OptInt(w, "group_size", c.group_size);
    OptInt(w, "bytes", c.bytes);
    w.Field("dtype", c.dtype).Field("algorithm", c.algorithm);
    w.Field("matched_by", c.matched_by);
    OptInt(w, "last_rank", c.last_rank);
    w.FieldInt("arrival_skew_ns", c.arrival_skew_ns);
    w.FieldInt("end_spread_ns", c.end_spread_ns);
    w.FieldInt("transfer_ns", c.transfer_ns);
    OptDouble(w, "algbw_gbps", c.algbw_gbps);
    OptDouble(w, "busbw_factor", c.busbw_factor);
    OptDouble(w, "busbw_gbps", c.busbw_gbps);
    w.Field("link_type", c.link_type);
    OptDouble(w, "peak_gbps", c.peak_gbps);
    OptDouble(w, "efficiency", c.efficiency);
    w.FieldInt("exposed_ns", c.exposed_ns).FieldInt("wait_ns", c.wait_ns);
    w.Key("ranks").BeginArray();
    for (const ClusterCollectiveRank& r : c.ranks) {
      w.BeginObject();
      w.FieldInt("rank", r.rank).FieldInt("start_ns", r.start_ns);
      w.FieldInt("end_ns", r.end_ns).FieldInt("wait_ns", r.wait_ns);
      w.FieldInt("exposed_ns", r.exposed_ns);
      OptInt(w, "task", r.task);
      w.Field("issued_by", r.issued_by);
      OptInt(w, "node", r.node);
      w.Field("node_name", r.node_name);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();

  w.Key("slow_ranks").BeginArray();
  for (const ClusterSlowRank& s : slow_ranks) {
    w.BeginObject();
    w.FieldInt("rank", s.rank).FieldInt("collectives", s.collectives);
    w.FieldInt("last_arrivals", s.last_arrivals);
    w.FieldDouble("last_arrival_share", s.last_arrival_share);
    w.FieldInt("mean_lateness_ns", s.mean_lateness_ns);
    w.FieldInt("others_wait_ns", s.others_wait_ns);
    w.FieldInt("duration_outlier_count", s.duration_outlier_count);
    w.Key("reasons").BeginArray();
    for (const ClusterSlowReason& r : s.reasons) {
      w.BeginObject();
      w.Field("kind", r.kind).Field("message", r.message);
      w.FieldInt("excess_ns", r.excess_ns);
      w.Key("op_types").BeginArray();
      for (const ClusterOpTypeDelta& d : r.op_types) {
        w.BeginObject();
        w.Field("op_type", d.op_type).FieldInt("rank_ns", d.rank_ns);
        w.FieldInt("median_ns", d.median_ns).FieldInt("excess_ns", d.excess_ns);
        w.EndObject();
      }
      w.EndArray();
      w.Key("nodes").BeginArray();
      for (const ClusterNodeDelta& d : r.nodes) {
        w.BeginObject();
        w.Field("name", d.name).Field("op_type", d.op_type);
        w.Field("level", d.level);
        OptInt(w, "node", d.node);
        w.FieldInt("rank_ns", d.rank_ns).FieldInt("median_ns", d.median_ns);
        w.FieldInt("excess_ns", d.excess_ns);
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();

  w.Key("overlap").BeginArray();
  for (const ClusterRankOverlap& o : overlap) {
    w.BeginObject();
    w.FieldInt("rank", o.rank).FieldInt("compute_ns", o.compute_ns);
    w.FieldInt("communication_ns", o.communication_ns);
    w.FieldInt("overlapped_ns", o.overlapped_ns);
    w.FieldDouble("overlap_share", o.overlap_share);
    w.FieldInt("exposed_communication_ns", o.exposed_communication_ns);
    OptDouble(w, "step_trace_overlap_share", o.step_trace_overlap_share);
    w.EndObject();
  }
  w.EndArray();

  w.Key("bandwidth").BeginArray();
  for (const ClusterLinkBandwidth& b : bandwidth) {
    w.BeginObject();
    w.Field("link_type", b.link_type).FieldInt("collectives", b.collectives);
    w.FieldInt("bytes", b.bytes).FieldInt("transfer_ns", b.transfer_ns);
    OptDouble(w, "busbw_gbps", b.busbw_gbps);
    OptDouble(w, "peak_gbps", b.peak_gbps);
    OptDouble(w, "efficiency", b.efficiency);
    w.Field("peak_origin", b.peak_origin);
    w.EndObject();
  }
  w.EndArray();

  w.Key("matrix").BeginArray();
  for (const ClusterMatrixEntry& m : matrix) {
    w.BeginObject();
    w.Field("group", m.group).Field("statistic", m.statistic);
    w.FieldInt("src_rank", m.src_rank).FieldInt("dst_rank", m.dst_rank);
    w.FieldBool("global", m.global).Field("transport", m.transport);
    w.FieldInt("size_bytes", m.size_bytes);
    w.FieldInt("transit_ns", m.transit_ns);
    OptDouble(w, "bandwidth_gbps", m.bandwidth_gbps);
    w.EndObject();
  }
  w.EndArray();

  w.Key("critical_path").BeginArray();
  for (const ClusterCriticalPath& p : critical_path) {
    w.BeginObject();
    OptInt(w, "step", p.step);
    w.Field("label", p.label).FieldInt("total_ns", p.total_ns);
    w.Key("links").BeginArray();
    for (const ClusterPathLink& l : p.links) {
      w.BeginObject();
      OptInt(w, "collective", l.collective);
      w.Field("name", l.name).Field("group", l.group);
      OptInt(w, "sequence", l.sequence);
      OptInt(w, "last_rank", l.last_rank);
      w.FieldInt("compute_before_ns", l.compute_before_ns);
      w.FieldInt("transfer_ns", l.transfer_ns);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();

  w.Key("findings").BeginArray();
  for (const ClusterFinding& f : findings) WriteFindingRow(w, f);
  w.EndArray();

  w.Key("clock").BeginObject();
  w.FieldInt("hosts", clock.hosts);
  w.FieldInt("max_end_spread_ns", clock.max_end_spread_ns);
  w.FieldInt("median_end_spread_ns", clock.median_end_spread_ns);
  w.Field("note", clock.note);
  w.FieldBool("aligned", clock.aligned);
  Ints(w, "rank_offsets_ns", clock.rank_offsets_ns);
  w.EndObject();

  w.Key("link_peaks").BeginArray();
  for (const LinkPeak& p : link_peaks) WritePeak(w, p);
  w.EndArray();
  WriteClusterTables(w, cluster_step_trace, cluster_communication);
  w.EndObject();
}

void WriteClusterSummary(ResultWriter& w, const ClusterSummary& summary) {
  w.BeginObject();
  w.Field("schema", "model-inspector/cluster-summary/1");
  w.Key("ranks").BeginArray();
  for (const ClusterRankSummary& r : summary.ranks) {
    w.BeginObject();
    w.FieldInt("rank", r.rank).Field("rank_from", r.rank_from);
    OptInt(w, "world_size", r.world_size);
    w.Field("host", r.host);
    Strings(w, "devices", r.devices);
    Strings(w, "files", r.files);
    w.Field("chip", r.chip);
    w.Key("process_groups").BeginArray();
    for (const ClusterProcessGroup& g : r.process_groups) {
      w.BeginObject();
      w.Field("name", g.name).Field("long_name", g.long_name);
      w.Field("description", g.description);
      Ints(w, "global_ranks", g.global_ranks);
      OptInt(w, "group_rank", g.group_rank);
      w.EndObject();
    }
    w.EndArray();
    w.Key("steps").BeginArray();
    for (const ClusterRankStep& s : r.steps) {
      w.BeginObject();
      OptInt(w, "step", s.step);
      w.Field("label", s.label);
      w.FieldInt("start_ns", s.start_ns).FieldInt("end_ns", s.end_ns);
      w.FieldInt("wall_ns", s.wall_ns).FieldInt("compute_ns", s.compute_ns);
      w.FieldInt("communication_ns", s.communication_ns);
      w.FieldInt("exposed_communication_ns", s.exposed_communication_ns);
      w.FieldInt("overlapped_communication_ns", s.overlapped_communication_ns);
      w.FieldInt("idle_ns", s.idle_ns);
      w.FieldInt("host_bound_ns", s.host_bound_ns);
      w.FieldInt("data_loading_ns", s.data_loading_ns);
      OptInt(w, "first_device_start_ns", s.first_device_start_ns);
      w.Key("op_types").BeginArray();
      for (const ClusterOpTime& o : s.op_types) {
        w.BeginObject();
        w.Field("op_type", o.op_type).FieldInt("time_ns", o.time_ns);
        w.FieldInt("count", o.count);
        w.EndObject();
      }
      w.EndArray();
      w.Key("top_nodes").BeginArray();
      for (const ClusterNodeTime& n : s.top_nodes) {
        w.BeginObject();
        w.Field("name", n.name).Field("op_type", n.op_type);
        w.Field("level", n.level);
        OptInt(w, "node", n.node);
        w.FieldInt("time_ns", n.time_ns).FieldInt("count", n.count);
        w.EndObject();
      }
      w.EndArray();
      StepTraceOrNull(w, s.has_step_trace, s.step_trace);
      w.EndObject();
    }
    w.EndArray();
    w.Key("collectives").BeginArray();
    for (const ClusterRankCollective& c : r.collectives) {
      w.BeginObject();
      w.Field("name", c.name).Field("type", c.type);
      w.Field("group", c.group);
      OptInt(w, "group_size", c.group_size);
      OptInt(w, "sequence", c.sequence);
      OptInt(w, "step", c.step);
      w.Field("step_label", c.step_label);
      w.FieldInt("start_ns", c.start_ns).FieldInt("end_ns", c.end_ns);
      OptInt(w, "bytes", c.bytes);
      OptInt(w, "in_elements", c.in_elements);
      OptInt(w, "out_elements", c.out_elements);
      w.Field("dtype", c.dtype).Field("algorithm", c.algorithm);
      w.Field("protocol", c.protocol);
      OptInt(w, "transit_ns", c.transit_ns);
      OptInt(w, "wait_ns", c.wait_ns);
      OptInt(w, "synchronization_ns", c.synchronization_ns);
      OptInt(w, "idle_ns", c.idle_ns);
      w.FieldInt("overlapped_ns", c.overlapped_ns);
      OptInt(w, "task", c.task);
      w.Field("issued_by", c.issued_by);
      OptInt(w, "node", c.node);
      w.Field("node_name", c.node_name).Field("node_level", c.node_level);
      w.EndObject();
    }
    w.EndArray();
    w.Key("bandwidth").BeginArray();
    for (const ClusterBandwidthRow& b : r.bandwidth) {
      w.BeginObject();
      w.Field("step", b.step).Field("op_name", b.op_name);
      w.Field("group", b.group).FieldBool("p2p", b.p2p);
      w.Field("transport", b.transport);
      OptInt(w, "size_bytes", b.size_bytes);
      OptInt(w, "transit_ns", b.transit_ns);
      OptDouble(w, "bandwidth_gbps", b.bandwidth_gbps);
      w.EndObject();
    }
    w.EndArray();
    w.Key("links").BeginArray();
    for (const ClusterLinkRow& l : r.links) {
      w.BeginObject();
      w.Field("step", l.step).Field("statistic", l.statistic);
      w.Field("group", l.group).FieldBool("p2p", l.p2p);
      w.FieldInt("src_rank", l.src_rank).FieldInt("dst_rank", l.dst_rank);
      w.Field("transport", l.transport);
      OptInt(w, "size_bytes", l.size_bytes);
      OptInt(w, "transit_ns", l.transit_ns);
      OptDouble(w, "bandwidth_gbps", l.bandwidth_gbps);
      w.Field("op_name", l.op_name);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  WriteClusterTables(w, summary.cluster_step_trace,
                     summary.cluster_communication);
  w.EndObject();
}

}  // namespace mi
