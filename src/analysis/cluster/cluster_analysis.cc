#include "analysis/cluster/cluster_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace mi::analysis {

extern const std::string_view kLinkPeaksJson;

namespace {

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Ms(int64_t ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

std::string StepKey(int64_t step, std::string_view label) {
  return step >= 0 ? std::to_string(step) : "label:" + std::string(label);
}

struct Ref {
  size_t rank;  // index into summary.ranks
  size_t coll;  // index into its collectives
};

struct Instance {
  std::string matched_by;
  int64_t sequence = -1;  // within the group, as matched
  std::vector<Ref> refs;
};

// The link type of a collective from the rank's per-transport rows: the
// transport that moved the most bytes for the op (SDMA is HCCL's
// aggregate of the others, LOCAL the on-chip copy: neither is a link).
std::string LinkTypeFromRows(const ClusterRankSummary& r,
                             const ClusterRankCollective& c) {
  std::string best;
  int64_t best_size = -1;
  for (const ClusterBandwidthRow& b : r.bandwidth) {
    if (b.op_name != c.name || (!c.group.empty() && b.group != c.group)) {
      continue;
    }
    if (b.transport == "SDMA" || b.transport == "LOCAL") continue;
    if (b.size_bytes > best_size) {
      best_size = b.size_bytes;
      best = b.transport;
    }
  }
  return best_size > 0 ? best : std::string();
}

// NCCL within one host: the NVLink generation of the device (B200 and
// its kin NVLink 5, H100 / H200 NVLink 4); "" when the ranks are on
// different hosts or the device is not one of these.
std::string NvlinkOf(const std::vector<ClusterRankSummary>& ranks,
                     const std::vector<Ref>& refs) {
  const ClusterRankSummary& r0 = ranks[refs[0].rank];
  for (const Ref& ref : refs) {
    if (ranks[ref.rank].host != r0.host) return "";
  }
  const std::string& chip = r0.chip;
  for (std::string_view gen5 : {"B200", "B100", "B300", "GB200"}) {
    if (chip.find(gen5) != std::string::npos) return "NVLink5";
  }
  for (std::string_view gen4 : {"H100", "H200", "H800", "H20", "GH200"}) {
    if (chip.find(gen4) != std::string::npos) return "NVLink4";
  }
  return "";
}

const LinkPeak* FindPeak(const std::vector<LinkPeak>& peaks,
                         std::string_view type, std::string_view chip) {
  if (type.empty()) return nullptr;
  const LinkPeak* any_chip = nullptr;
  const LinkPeak* first = nullptr;
  for (const LinkPeak& p : peaks) {
    if (!EqualsIgnoringCase(p.link_type, type)) continue;
    if (!chip.empty() && p.chip == chip) return &p;
    if (p.chip.empty() && !any_chip) any_chip = &p;
    if (!first) first = &p;
  }
  return any_chip ? any_chip : first;
}

std::string PeakOrigin(const LinkPeak& p, std::string_view chip) {
  if (!p.chip.empty() && p.chip != chip) {
    return p.origin + " (chip not known from the profile; the " + p.chip +
           " figure is assumed)";
  }
  return p.origin;
}

struct Deltas {
  int64_t excess = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> by_key;  // rank, median
};

}  // namespace

std::string_view BuiltinLinkPeaksJson() { return kLinkPeaksJson; }

double BusBandwidthFactor(std::string_view type, int n) {
  if (n <= 0) return -1;
  const double d = static_cast<double>(n);
  if (type == "allreduce") return 2.0 * (d - 1) / d;
  if (type == "reducescatter" || type == "allgather" || type == "alltoall") {
    return (d - 1) / d;
  }
  if (type == "broadcast" || type == "reduce" || type == "send" ||
      type == "receive") {
    return 1.0;
  }
  return -1;
}

std::vector<size_t> DurationOutliers(const std::vector<int64_t>& t) {
  // Dixon's Q (one-sided, 99.5 %) up to 100 ranks, three sigma above; the
  // statistic's neighbours change at 8, 11 and 14 values as
  // msprof-analyze's table does (r10, r11, r21, r22).
  static constexpr double kDixon995[] = {
      0,     0,     0,     0.994, 0.920, 0.823, 0.744, 0.680, 0.723, 0.676,
      0.638, 0.707, 0.675, 0.649, 0.672, 0.649, 0.629, 0.611, 0.595, 0.580,
      0.568, 0.556, 0.545, 0.536, 0.526, 0.519, 0.510, 0.503, 0.496, 0.489,
      0.484, 0.478, 0.473, 0.468, 0.463, 0.458, 0.454, 0.450, 0.446, 0.442,
      0.439, 0.435, 0.432, 0.429, 0.425, 0.423, 0.420, 0.417, 0.414, 0.412,
      0.409, 0.407, 0.405, 0.402, 0.400, 0.398, 0.396, 0.394, 0.392, 0.391,
      0.388, 0.387, 0.385, 0.383, 0.382, 0.380, 0.379, 0.377, 0.376, 0.374,
      0.372, 0.371, 0.370, 0.368, 0.368, 0.366, 0.365, 0.364, 0.363, 0.361,
      0.360, 0.359, 0.358, 0.356, 0.356, 0.355, 0.353, 0.352, 0.352, 0.351,
      0.350, 0.349, 0.348, 0.347, 0.346, 0.345, 0.344, 0.344, 0.343, 0.341,
      0.341};
  const size_t n = t.size();
  std::vector<size_t> out;
  if (n < 3) return out;
  const size_t min_index =
      static_cast<size_t>(std::min_element(t.begin(), t.end()) - t.begin());
  if (n <= 100) {
    std::vector<int64_t> s = t;
    std::sort(s.begin(), s.end());
    if (std::set<int64_t>(s.begin(), s.end()).size() <= 3) return out;
    size_t lo = 1, hi = n - 1;
    if (n > 13) {
      lo = 2, hi = n - 3;
    } else if (n > 10) {
      lo = 2, hi = n - 2;
    } else if (n > 7) {
      hi = n - 2;
    }
    const double den = static_cast<double>(s[hi] - s[0]);
    const double q = den > 0 ? static_cast<double>(s[lo] - s[0]) / den : 0;
    if (q > kDixon995[n]) out.push_back(min_index);
    return out;
  }
  double mean = 0;
  for (int64_t v : t) mean += static_cast<double>(v);
  mean /= static_cast<double>(n);
  double var = 0;
  for (int64_t v : t) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / static_cast<double>(n));
  for (size_t i = 0; i < n; ++i) {
    if (t[i] < mean - 3 * sd) out.push_back(i);
  }
  const int64_t mx = *std::max_element(t.begin(), t.end());
  if (mx > mean + 3 * sd &&
      std::find(out.begin(), out.end(), min_index) == out.end()) {
    out.push_back(min_index);
  }
  return out;
}

StatusOr<std::vector<LinkPeak>> ParseLinkPeaks(std::string_view json,
                                               std::string_view what) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("link_peaks") ||
      !doc["link_peaks"].is_array()) {
    return InvalidArgumentError(fmt::format(
        "{}: expected a JSON object with a \"link_peaks\" array", what));
  }
  std::vector<LinkPeak> out;
  size_t i = 0;
  for (const auto& e : doc["link_peaks"]) {
    if (!e.is_object() || !e.contains("link_type") ||
        !e["link_type"].is_string() || !e.contains("peak_gbps") ||
        !e["peak_gbps"].is_number() || e["peak_gbps"].get<double>() <= 0) {
      return InvalidArgumentError(
          fmt::format("{}: link_peaks[{}]: expected {{\"link_type\": string, "
                      "\"peak_gbps\": positive number, \"chip\", \"origin\"}}",
                      what, i));
    }
    LinkPeak p;
    p.link_type = e["link_type"].get<std::string>();
    p.peak_gbps = e["peak_gbps"].get<double>();
    if (e.contains("chip") && e["chip"].is_string()) {
      p.chip = e["chip"].get<std::string>();
    }
    if (e.contains("origin") && e["origin"].is_string()) {
      p.origin = e["origin"].get<std::string>();
    }
    out.push_back(std::move(p));
    ++i;
  }
  return out;
}

Status MergeRankSummaries(ClusterSummary& into, ClusterSummary&& from) {
  for (const ClusterRankSummary& f : from.ranks) {
    for (const ClusterRankSummary& r : into.ranks) {
      if (r.rank == f.rank) {
        const std::string a = r.files.empty() ? "?" : r.files.front();
        const std::string b = f.files.empty() ? "?" : f.files.front();
        return InvalidArgumentError(
            fmt::format("rank {} is in two inputs: {} and {}", f.rank, a, b));
      }
    }
  }
  for (ClusterRankSummary& f : from.ranks) into.ranks.push_back(std::move(f));
  std::stable_sort(into.ranks.begin(), into.ranks.end(),
                   [](const ClusterRankSummary& a,
                      const ClusterRankSummary& b) { return a.rank < b.rank; });
  for (auto& r : from.cluster_step_trace) {
    into.cluster_step_trace.push_back(std::move(r));
  }
  for (auto& r : from.cluster_communication) {
    into.cluster_communication.push_back(std::move(r));
  }
  return Status::Ok();
}

ClusterReport AnalyzeClusterSummary(const ClusterSummary& summary,
                                    const ClusterAnalysisOptions& options) {
  ClusterReport rep;
  const auto& ranks = summary.ranks;
  const size_t R = ranks.size();
  if (options.link_peaks.empty()) {
    auto builtin = ParseLinkPeaks(kLinkPeaksJson, "link_peaks.json");
    if (builtin.ok()) rep.link_peaks = std::move(*builtin);
  } else {
    rep.link_peaks = options.link_peaks;
  }
  rep.cluster_step_trace = summary.cluster_step_trace;
  rep.cluster_communication = summary.cluster_communication;

  // World size and missing ranks.
  {
    int32_t ws = -1;
    for (const auto& r : ranks) ws = std::max(ws, r.world_size);
    std::set<int32_t> union_ranks;
    for (const auto& r : ranks) {
      for (const auto& g : r.process_groups) {
        union_ranks.insert(g.global_ranks.begin(), g.global_ranks.end());
      }
    }
    if (ws > 0) {
      rep.world_size = ws;
      rep.world_size_from = "world_size";
    } else if (!union_ranks.empty()) {
      rep.world_size = *union_ranks.rbegin() + 1;
      rep.world_size_from = "process groups";
    } else if (R > 0) {
      int32_t mx = -1;
      for (const auto& r : ranks) mx = std::max(mx, r.rank);
      rep.world_size = std::max<int32_t>(mx + 1, static_cast<int32_t>(R));
      rep.world_size_from = "ranks";
    }
    std::set<int32_t> have;
    for (const auto& r : ranks) have.insert(r.rank);
    for (int32_t k = 0; k < rep.world_size; ++k) {
      if (!have.count(k)) rep.missing_ranks.push_back(k);
    }
  }

  // Ranks.
  std::set<std::string> hosts;
  for (const auto& r : ranks) {
    ClusterRankInfo info;
    info.rank = r.rank;
    info.rank_from = r.rank_from;
    info.host = r.host;
    info.devices = r.devices;
    info.files = r.files;
    info.steps = static_cast<int64_t>(r.steps.size());
    info.collectives = static_cast<int64_t>(r.collectives.size());
    for (const auto& s : r.steps) {
      info.wall_ns += s.wall_ns;
      info.compute_ns += s.compute_ns;
      info.communication_ns += s.communication_ns;
      info.exposed_communication_ns += s.exposed_communication_ns;
      info.idle_ns += s.idle_ns;
    }
    if (!r.host.empty()) hosts.insert(r.host);
    rep.ranks.push_back(std::move(info));
  }

  // Steps across ranks, in order of their earliest start.
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> step_rows;
  std::map<std::string, int64_t> step_first;
  for (size_t ri = 0; ri < R; ++ri) {
    for (size_t si = 0; si < ranks[ri].steps.size(); ++si) {
      const auto& s = ranks[ri].steps[si];
      const std::string key = StepKey(s.step, s.label);
      step_rows[key].emplace_back(ri, si);
      auto [it, fresh] = step_first.emplace(key, s.start_ns);
      if (!fresh) it->second = std::min(it->second, s.start_ns);
    }
  }
  std::vector<std::string> step_order;
  for (const auto& [k, v] : step_first) step_order.push_back(k);
  std::sort(step_order.begin(), step_order.end(),
            [&](const std::string& a, const std::string& b) {
              return step_first[a] < step_first[b];
            });
  for (const std::string& key : step_order) {
    ClusterStep cs;
    const auto& rows = step_rows[key];
    const auto& s0 = ranks[rows[0].first].steps[rows[0].second];
    cs.step = s0.step;
    cs.label = s0.label;
    std::vector<int64_t> walls, computes;
    int64_t max_compute = -1;
    for (auto [ri, si] : rows) {
      const auto& s = ranks[ri].steps[si];
      ClusterStepRank x;
      x.rank = ranks[ri].rank;
      x.start_ns = s.start_ns;
      x.wall_ns = s.wall_ns;
      x.compute_ns = s.compute_ns;
      x.communication_ns = s.communication_ns;
      x.exposed_communication_ns = s.exposed_communication_ns;
      x.overlapped_communication_ns = s.overlapped_communication_ns;
      x.idle_ns = s.idle_ns;
      x.host_bound_ns = s.host_bound_ns;
      x.data_loading_ns = s.data_loading_ns;
      x.has_step_trace = s.has_step_trace;
      x.step_trace = s.step_trace;
      walls.push_back(s.wall_ns);
      computes.push_back(s.compute_ns);
      if (s.compute_ns > max_compute) {
        max_compute = s.compute_ns;
        cs.slowest_rank = x.rank;
      }
      cs.max_wall_ns = std::max(cs.max_wall_ns, s.wall_ns);
      cs.ranks.push_back(std::move(x));
    }
    cs.median_wall_ns = Median(walls);
    const double mean = std::accumulate(computes.begin(), computes.end(), 0.0) /
                        static_cast<double>(computes.size());
    if (mean > 0) {
      const int64_t mx = *std::max_element(computes.begin(), computes.end());
      const int64_t mn = *std::min_element(computes.begin(), computes.end());
      cs.compute_max_over_mean = (static_cast<double>(mx) - mean) / mean;
      cs.compute_spread_over_mean = static_cast<double>(mx - mn) / mean;
    }
    rep.steps.push_back(std::move(cs));
  }

  // Match collective instances.
  std::vector<Instance> instances;
  {
    std::map<std::string, size_t> by_key;
    for (size_t ri = 0; ri < R; ++ri) {
      std::map<std::string, int64_t> counters;
      for (size_t ci = 0; ci < ranks[ri].collectives.size(); ++ci) {
        const auto& c = ranks[ri].collectives[ci];
        std::string key, how;
        int64_t sequence = c.sequence;
        if (StartsWithIgnoringCase(c.name, "hcom_") && !c.group.empty()) {
          key = "s|" + std::to_string(c.step) + "|" + c.name + "|" + c.group;
          how = "step_name_group";
        } else if (!c.group.empty()) {
          int64_t seq = c.sequence;
          int64_t& counter = counters["g|" + c.group];
          if (seq < 0) seq = counter;
          ++counter;
          sequence = seq;
          key = "g|" + c.group + "|" + std::to_string(seq);
          how = "group_sequence";
        } else {
          const std::string base =
              "o|" + c.type + "|" + std::to_string(c.bytes);
          key = base + "|" + std::to_string(counters[base]++);
          how = "order_size";
        }
        // The same key twice on one rank: the next occurrence.
        const int64_t occurrence = counters["k|" + key]++;
        if (occurrence > 0) key += "#" + std::to_string(occurrence);
        auto [it, fresh] = by_key.emplace(key, instances.size());
        if (fresh) instances.push_back({how, sequence, {}});
        instances[it->second].refs.push_back({ri, ci});
      }
    }
  }
  rep.collective_instances = static_cast<int64_t>(instances.size());

  // Clocks: collectives end together, so ends that disagree by more than
  // a transfer takes are clock offsets; estimate them and take them off.
  std::vector<int64_t> offset(R, 0);
  {
    std::vector<int64_t> spreads, transfers;
    std::vector<std::vector<int64_t>> deltas(R);
    for (const Instance& in : instances) {
      if (in.refs.size() < 2) continue;
      std::vector<int64_t> ends;
      int64_t last_start = std::numeric_limits<int64_t>::min();
      int64_t transfer = 0;
      for (const Ref& ref : in.refs) {
        const auto& x = ranks[ref.rank].collectives[ref.coll];
        ends.push_back(x.end_ns);
        if (x.start_ns > last_start) {
          last_start = x.start_ns;
          transfer = x.end_ns - x.start_ns;
        }
      }
      const int64_t med = Median(ends);
      spreads.push_back(*std::max_element(ends.begin(), ends.end()) -
                        *std::min_element(ends.begin(), ends.end()));
      transfers.push_back(transfer);
      for (const Ref& ref : in.refs) {
        deltas[ref.rank].push_back(
            ranks[ref.rank].collectives[ref.coll].end_ns - med);
      }
    }
    if (!spreads.empty() && Median(spreads) > Median(transfers)) {
      rep.clock.aligned = true;
      for (size_t ri = 0; ri < R; ++ri) offset[ri] = Median(deltas[ri]);
      const int64_t ref = offset.empty() ? 0 : offset[0];
      for (int64_t& o : offset) o -= ref;
    }
    rep.clock.rank_offsets_ns = offset;
  }

  std::vector<ClusterCollective> all;
  all.reserve(instances.size());
  std::vector<int64_t> end_spreads;
  struct RankTally {
    int64_t collectives = 0, last = 0, lateness = 0, others_wait = 0,
            outliers = 0;
  };
  std::vector<RankTally> tally(R);
  for (const Instance& in : instances) {
    ClusterCollective c;
    const auto& c0 = ranks[in.refs[0].rank].collectives[in.refs[0].coll];
    c.group = c0.group;
    c.sequence = in.sequence;
    c.name = c0.name;
    c.type = c0.type;
    c.step = c0.step;
    c.step_label = c0.step_label;
    c.dtype = c0.dtype;
    c.algorithm = c0.algorithm;
    c.matched_by = in.matched_by;
    int64_t first_start = std::numeric_limits<int64_t>::max();
    int64_t last_start = std::numeric_limits<int64_t>::min();
    int64_t first_end = std::numeric_limits<int64_t>::max();
    int64_t last_end = std::numeric_limits<int64_t>::min();
    size_t last_ref = 0;
    for (size_t k = 0; k < in.refs.size(); ++k) {
      const auto& x = ranks[in.refs[k].rank].collectives[in.refs[k].coll];
      const int64_t o = offset[in.refs[k].rank];
      c.bytes = std::max(c.bytes, x.bytes);
      c.group_size = std::max(c.group_size, x.group_size);
      first_start = std::min(first_start, x.start_ns - o);
      first_end = std::min(first_end, x.end_ns - o);
      last_end = std::max(last_end, x.end_ns - o);
      if (x.start_ns - o > last_start) {
        last_start = x.start_ns - o;
        last_ref = k;
      }
    }
    const auto& lx =
        ranks[in.refs[last_ref].rank].collectives[in.refs[last_ref].coll];
    c.last_rank = ranks[in.refs[last_ref].rank].rank;
    c.arrival_skew_ns = last_start - first_start;
    c.end_spread_ns = last_end - first_end;
    c.transfer_ns = std::max<int64_t>(lx.end_ns - lx.start_ns, 0);
    std::vector<int64_t> durations;
    for (const Ref& ref : in.refs) {
      const auto& x = ranks[ref.rank].collectives[ref.coll];
      ClusterCollectiveRank cr;
      cr.rank = ranks[ref.rank].rank;
      cr.start_ns = x.start_ns;
      cr.end_ns = x.end_ns;
      cr.wait_ns =
          std::max<int64_t>(last_start - (x.start_ns - offset[ref.rank]), 0);
      cr.exposed_ns =
          std::max<int64_t>(x.end_ns - x.start_ns - x.overlapped_ns, 0);
      cr.task = x.task;
      cr.issued_by = x.issued_by;
      cr.node = x.node;
      cr.node_name = x.node_name;
      c.exposed_ns += cr.exposed_ns;
      c.wait_ns += cr.wait_ns;
      durations.push_back(x.end_ns - x.start_ns);
      c.ranks.push_back(std::move(cr));
    }
    std::sort(c.ranks.begin(), c.ranks.end(),
              [](const ClusterCollectiveRank& a,
                 const ClusterCollectiveRank& b) { return a.rank < b.rank; });
    const int n =
        c.group_size > 0 ? c.group_size : static_cast<int>(in.refs.size());
    c.busbw_factor = BusBandwidthFactor(c.type, n);
    if (c.bytes > 0 && c.transfer_ns > 0) {
      c.algbw_gbps =
          static_cast<double>(c.bytes) / static_cast<double>(c.transfer_ns);
      if (c.busbw_factor >= 0) c.busbw_gbps = c.algbw_gbps * c.busbw_factor;
    }
    const auto& r0 = ranks[in.refs[0].rank];
    c.link_type = LinkTypeFromRows(r0, c0);
    if (c.link_type.empty()) c.link_type = NvlinkOf(ranks, in.refs);
    if (const LinkPeak* p = FindPeak(rep.link_peaks, c.link_type, r0.chip)) {
      c.peak_gbps = p->peak_gbps;
      if (c.busbw_gbps >= 0) c.efficiency = c.busbw_gbps / c.peak_gbps;
    }
    if (in.refs.size() >= 2) {
      end_spreads.push_back(c.end_spread_ns);
      for (const Ref& ref : in.refs) ++tally[ref.rank].collectives;
      RankTally& t = tally[in.refs[last_ref].rank];
      ++t.last;
      t.lateness += c.arrival_skew_ns;
      t.others_wait += c.wait_ns;
      for (size_t i : DurationOutliers(durations)) {
        ++tally[in.refs[i].rank].outliers;
      }
    }
    all.push_back(std::move(c));
  }

  // Clocks.
  rep.clock.hosts = static_cast<int32_t>(hosts.size());
  if (!end_spreads.empty()) {
    rep.clock.max_end_spread_ns =
        *std::max_element(end_spreads.begin(), end_spreads.end());
    rep.clock.median_end_spread_ns = Median(end_spreads);
  }
  if (end_spreads.empty()) {
    // Nothing run by several ranks: no bound, and no figure that would
    // read as one.
    rep.clock.note =
        "each rank's times are its own host's clock; no collective was run "
        "by several ranks, so nothing bounds the clock skew between them";
  } else {
    rep.clock.note = fmt::format(
        "each rank's times are its own host's clock; a collective ends at "
        "nearly the same moment on every rank, so the spread of its ends "
        "bounds the clock skew: at most {} over {} collectives run by "
        "several ranks (median {}){}; arrival skews and waits below that are "
        "within clock error",
        Ms(rep.clock.max_end_spread_ns), end_spreads.size(),
        Ms(rep.clock.median_end_spread_ns),
        rep.clock.aligned
            ? ", after the ranks' clocks were aligned on the collectives' "
              "ends (their ends disagreed by more than a transfer takes)"
            : "");
  }

  // Collectives by exposed time; the listed ones and their indices.
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return all[a].exposed_ns > all[b].exposed_ns;
  });
  const size_t listed = options.max_collectives == 0
                            ? order.size()
                            : std::min(order.size(), options.max_collectives);
  std::vector<int64_t> listed_index(all.size(), -1);
  for (size_t k = 0; k < listed; ++k) {
    listed_index[order[k]] = static_cast<int64_t>(k);
  }

  // Bandwidth per link type: collectives with a size (bus bandwidth), then
  // the profiler's per-transport rows (link bandwidth) for link types no
  // sized collective covers.
  {
    std::map<std::string, ClusterLinkBandwidth> by_type;
    std::map<std::string, double> weighted;
    std::map<std::string, std::string> chip_of;
    for (size_t i = 0; i < all.size(); ++i) {
      const ClusterCollective& c = all[i];
      if (c.link_type.empty() || c.busbw_gbps < 0) continue;
      ClusterLinkBandwidth& b = by_type[c.link_type];
      b.link_type = c.link_type;
      ++b.collectives;
      b.bytes += c.bytes;
      b.transfer_ns += c.transfer_ns;
      weighted[c.link_type] +=
          c.busbw_gbps * static_cast<double>(c.transfer_ns);
    }
    std::map<std::string, ClusterLinkBandwidth> rows;
    for (const auto& r : ranks) {
      for (const ClusterBandwidthRow& b : r.bandwidth) {
        if (b.transport.empty() || b.transport == "SDMA" ||
            b.op_name == "Total Op Info" || b.size_bytes <= 0 ||
            b.transit_ns <= 0) {
          continue;
        }
        ClusterLinkBandwidth& x = rows[b.transport];
        x.link_type = b.transport;
        ++x.collectives;
        x.bytes += b.size_bytes;
        x.transfer_ns += b.transit_ns;
        chip_of[b.transport] = r.chip;
      }
    }
    for (auto& [type, b] : by_type) {
      if (b.transfer_ns > 0) {
        b.busbw_gbps = weighted[type] / static_cast<double>(b.transfer_ns);
      }
    }
    for (auto& [type, b] : rows) {
      if (by_type.count(type)) continue;
      b.busbw_gbps =
          static_cast<double>(b.bytes) / static_cast<double>(b.transfer_ns);
      by_type[type] = b;
    }
    for (auto& [type, b] : by_type) {
      if (const LinkPeak* p = FindPeak(rep.link_peaks, type, chip_of[type])) {
        b.peak_gbps = p->peak_gbps;
        b.peak_origin = PeakOrigin(*p, chip_of[type]);
        if (b.busbw_gbps >= 0) b.efficiency = b.busbw_gbps / b.peak_gbps;
      }
      rep.bandwidth.push_back(b);
    }
  }

  // Overlap per rank.
  for (size_t ri = 0; ri < R; ++ri) {
    ClusterRankOverlap o;
    o.rank = ranks[ri].rank;
    int64_t st_overlapped = 0, st_comm = 0;
    bool st = false;
    for (const auto& s : ranks[ri].steps) {
      o.compute_ns += s.compute_ns;
      o.communication_ns += s.communication_ns;
      o.overlapped_ns += s.overlapped_communication_ns;
      o.exposed_communication_ns += s.exposed_communication_ns;
      if (s.has_step_trace && s.step_trace.overlapped_ns >= 0 &&
          s.step_trace.communication_ns >= 0) {
        st = true;
        st_overlapped += s.step_trace.overlapped_ns;
        st_comm += s.step_trace.communication_ns;
      }
    }
    if (o.communication_ns > 0) {
      o.overlap_share = static_cast<double>(o.overlapped_ns) /
                        static_cast<double>(o.communication_ns);
    }
    if (st && st_comm > 0) {
      o.step_trace_overlap_share =
          static_cast<double>(st_overlapped) / static_cast<double>(st_comm);
    }
    rep.overlap.push_back(o);
  }

  // Communication matrix: the "total" statistic of each link, in-group
  // ranks mapped to global ones where the group lists them.
  {
    std::set<std::tuple<std::string, std::string, int32_t, int32_t>> seen;
    for (const auto& r : ranks) {
      for (const ClusterLinkRow& l : r.links) {
        if (!l.statistic.ends_with("total")) continue;
        ClusterMatrixEntry m;
        m.group = l.group;
        m.statistic = l.statistic;
        m.src_rank = l.src_rank;
        m.dst_rank = l.dst_rank;
        for (const auto& g : r.process_groups) {
          if (g.name != l.group || g.global_ranks.empty()) continue;
          const auto n = static_cast<int32_t>(g.global_ranks.size());
          if (l.src_rank >= 0 && l.src_rank < n && l.dst_rank >= 0 &&
              l.dst_rank < n) {
            m.src_rank = g.global_ranks[l.src_rank];
            m.dst_rank = g.global_ranks[l.dst_rank];
            m.global = true;
          }
        }
        if (!seen.emplace(m.group + "|" + l.step, m.statistic, m.src_rank,
                          m.dst_rank)
                 .second) {
          continue;
        }
        m.transport = l.transport;
        m.size_bytes = std::max<int64_t>(l.size_bytes, 0);
        m.transit_ns = std::max<int64_t>(l.transit_ns, 0);
        m.bandwidth_gbps = l.bandwidth_gbps;
        rep.matrix.push_back(std::move(m));
      }
    }
  }

  // Critical path per step: in the order the collectives were reached,
  // the last rank's time since its previous collective (its compute) and
  // the transfer.
  {
    std::map<std::string, std::vector<size_t>> by_step;
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].ranks.size() < 2) continue;
      by_step[StepKey(all[i].step, all[i].step_label)].push_back(i);
    }
    for (const std::string& key : step_order) {
      auto f = by_step.find(key);
      if (f == by_step.end()) continue;
      std::vector<size_t>& list = f->second;
      auto arrival = [&](size_t i) {
        for (const auto& r : all[i].ranks) {
          if (r.rank == all[i].last_rank) return r.start_ns;
        }
        return int64_t{0};
      };
      std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        return arrival(a) < arrival(b);
      });
      ClusterCriticalPath p;
      const auto& rows = step_rows[key];
      p.step = ranks[rows[0].first].steps[rows[0].second].step;
      p.label = ranks[rows[0].first].steps[rows[0].second].label;
      std::map<int32_t, int64_t> rank_cursor;  // previous collective's end
      for (auto [ri, si] : rows) {
        rank_cursor[ranks[ri].rank] = ranks[ri].steps[si].start_ns;
      }
      for (size_t i : list) {
        const ClusterCollective& c = all[i];
        ClusterPathLink link;
        link.collective = listed_index[i];
        link.name = c.name;
        link.group = c.group;
        link.sequence = c.sequence;
        link.last_rank = c.last_rank;
        const int64_t arrive = arrival(i);
        auto cur = rank_cursor.find(c.last_rank);
        if (cur != rank_cursor.end()) {
          link.compute_before_ns = std::max<int64_t>(arrive - cur->second, 0);
        }
        link.transfer_ns = c.transfer_ns;
        for (const auto& r : c.ranks) rank_cursor[r.rank] = r.end_ns;
        p.total_ns += link.compute_before_ns + link.transfer_ns;
        p.links.push_back(std::move(link));
      }
      rep.critical_path.push_back(std::move(p));
    }
  }

  // Slow ranks: the ranks the others waited for, well beyond the clock
  // bound, and why.
  for (size_t ri = 0; ri < R && R >= 2; ++ri) {
    const RankTally& t = tally[ri];
    if (t.last == 0) continue;
    double others_mean = 0;
    for (size_t q = 0; q < R; ++q) {
      if (q != ri) others_mean += static_cast<double>(tally[q].others_wait);
    }
    others_mean /= static_cast<double>(R - 1);
    const int64_t lateness = t.lateness / t.last;
    const double share =
        t.collectives > 0
            ? static_cast<double>(t.last) / static_cast<double>(t.collectives)
            : 0;
    const bool waited_for =
        static_cast<double>(t.others_wait) > 2 * others_mean &&
        lateness > rep.clock.median_end_spread_ns;
    const bool often_last = R > 2 &&
                            share > options.slow_rank_last_arrival_share &&
                            lateness > rep.clock.max_end_spread_ns;
    if (!waited_for && !often_last) continue;
    ClusterSlowRank s;
    s.rank = ranks[ri].rank;
    s.collectives = t.collectives;
    s.last_arrivals = t.last;
    s.last_arrival_share = share;
    s.mean_lateness_ns = lateness;
    s.others_wait_ns = t.others_wait;
    s.duration_outlier_count = t.outliers;

    // Reasons: this rank against the median of the other ranks, step by
    // step.
    Deltas compute, host, data, late;
    std::map<std::string, std::pair<int64_t, int64_t>> op_delta;
    std::map<std::string, ClusterNodeDelta> node_delta;
    int64_t median_wall_total = 0;
    for (const auto& st : ranks[ri].steps) {
      const std::string key = StepKey(st.step, st.label);
      std::vector<int64_t> c_o, h_o, d_o, l_o, w_o;
      std::map<std::string, std::vector<int64_t>> ops_o;
      std::map<std::string, std::vector<int64_t>> nodes_o;
      size_t others = 0;
      for (auto [q, qi] : step_rows[key]) {
        if (q == ri) continue;
        ++others;
        const auto& o = ranks[q].steps[qi];
        c_o.push_back(o.compute_ns);
        h_o.push_back(o.host_bound_ns);
        d_o.push_back(o.data_loading_ns);
        l_o.push_back(o.start_ns - offset[q]);
        w_o.push_back(o.wall_ns);
        for (const auto& op : o.op_types)
          ops_o[op.op_type].push_back(op.time_ns);
        for (const auto& n : o.top_nodes) nodes_o[n.name].push_back(n.time_ns);
      }
      if (others == 0) continue;
      median_wall_total += Median(w_o);
      compute.excess += st.compute_ns - Median(c_o);
      host.excess += st.host_bound_ns - Median(h_o);
      data.excess += st.data_loading_ns - Median(d_o);
      late.excess += st.start_ns - offset[ri] - Median(l_o);
      auto med_with_zeros = [&](std::vector<int64_t> v) {
        v.resize(others, 0);
        return Median(std::move(v));
      };
      std::set<std::string> seen_ops;
      for (const auto& op : st.op_types) {
        seen_ops.insert(op.op_type);
        auto& d = op_delta[op.op_type];
        d.first += op.time_ns;
        d.second += med_with_zeros(ops_o[op.op_type]);
      }
      for (auto& [name, v] : ops_o) {
        if (!seen_ops.count(name)) op_delta[name].second += med_with_zeros(v);
      }
      for (const auto& n : st.top_nodes) {
        ClusterNodeDelta& d = node_delta[n.name];
        d.name = n.name;
        d.op_type = n.op_type;
        d.level = n.level;
        d.node = n.node;
        d.rank_ns += n.time_ns;
        d.median_ns += med_with_zeros(nodes_o[n.name]);
      }
    }
    const int64_t floor_ns = std::max<int64_t>(10'000, median_wall_total / 100);
    if (compute.excess > floor_ns) {
      ClusterSlowReason r;
      r.kind = "compute";
      r.excess_ns = compute.excess;
      // Op types and nodes that explain at least 1 % of the excess (and a
      // microsecond): jitter on every op is not a reason.
      const int64_t least = std::max<int64_t>(1000, compute.excess / 100);
      for (const auto& [op, d] : op_delta) {
        if (d.first - d.second >= least) {
          r.op_types.push_back({op, d.first, d.second, d.first - d.second});
        }
      }
      std::sort(r.op_types.begin(), r.op_types.end(),
                [](const ClusterOpTypeDelta& a, const ClusterOpTypeDelta& b) {
                  return a.excess_ns > b.excess_ns;
                });
      if (r.op_types.size() > 5) r.op_types.resize(5);
      for (auto& [name, d] : node_delta) {
        d.excess_ns = d.rank_ns - d.median_ns;
        if (d.excess_ns >= least) r.nodes.push_back(d);
      }
      std::sort(r.nodes.begin(), r.nodes.end(),
                [](const ClusterNodeDelta& a, const ClusterNodeDelta& b) {
                  return a.excess_ns > b.excess_ns;
                });
      if (r.nodes.size() > 5) r.nodes.resize(5);
      std::string ops;
      for (const auto& d : r.op_types) {
        if (!ops.empty()) ops += ", ";
        ops += fmt::format("{} +{}", d.op_type, Ms(d.excess_ns));
      }
      r.message = fmt::format(
          "rank {} computes {} more than the median of the other ranks{}",
          s.rank, Ms(r.excess_ns), ops.empty() ? "" : " (" + ops + ")");
      s.reasons.push_back(std::move(r));
    }
    if (host.excess > floor_ns) {
      ClusterSlowReason r;
      r.kind = "host_bound";
      r.excess_ns = host.excess;
      r.message = fmt::format(
          "rank {}'s devices wait {} more than the median rank for the host "
          "to launch work",
          s.rank, Ms(r.excess_ns));
      s.reasons.push_back(std::move(r));
    }
    if (data.excess > floor_ns) {
      ClusterSlowReason r;
      r.kind = "data_loading";
      r.excess_ns = data.excess;
      r.message = fmt::format(
          "rank {} spends {} more than the median rank in "
          "DataLoader ops",
          s.rank, Ms(r.excess_ns));
      s.reasons.push_back(std::move(r));
    }
    // A late start counts above the clock bound (step starts are compared
    // across hosts' clocks) and 10 us.
    if (late.excess > std::max<int64_t>(10'000, rep.clock.max_end_spread_ns)) {
      ClusterSlowReason r;
      r.kind = "late_start";
      r.excess_ns = late.excess;
      r.message = fmt::format(
          "rank {}'s steps start {} after the median rank's (more than the "
          "clock-skew bound of {})",
          s.rank, Ms(r.excess_ns), Ms(rep.clock.max_end_spread_ns));
      s.reasons.push_back(std::move(r));
    }
    // A slower link: its HCCL transit time above the other ranks'.
    {
      std::map<std::string, std::vector<int64_t>> transit;  // key -> others
      int64_t mine = 0, median_sum = 0;
      bool any = false;
      for (const Instance& in : instances) {
        int64_t own = -1;
        std::vector<int64_t> others;
        for (const Ref& ref : in.refs) {
          const auto& x = ranks[ref.rank].collectives[ref.coll];
          if (x.transit_ns < 0) continue;
          if (ref.rank == ri) {
            own = x.transit_ns;
          } else {
            others.push_back(x.transit_ns);
          }
        }
        if (own < 0 || others.empty()) continue;
        any = true;
        mine += own;
        median_sum += Median(others);
      }
      if (any && mine - median_sum > floor_ns) {
        ClusterSlowReason r;
        r.kind = "slower_link";
        r.excess_ns = mine - median_sum;
        r.message = fmt::format(
            "rank {}'s collectives spend {} more in transfer (HCCL transit "
            "time) than the median of the other ranks",
            s.rank, Ms(r.excess_ns));
        s.reasons.push_back(std::move(r));
      }
    }
    std::sort(s.reasons.begin(), s.reasons.end(),
              [](const ClusterSlowReason& a, const ClusterSlowReason& b) {
                return a.excess_ns > b.excess_ns;
              });
    rep.slow_ranks.push_back(std::move(s));
  }
  std::sort(rep.slow_ranks.begin(), rep.slow_ranks.end(),
            [](const ClusterSlowRank& a, const ClusterSlowRank& b) {
              return a.others_wait_ns > b.others_wait_ns;
            });

  // Findings.
  int64_t total_wall = 0;
  for (const auto& r : rep.ranks) total_wall += r.wall_ns;
  for (const ClusterSlowRank& s : rep.slow_ranks) {
    ClusterFinding f;
    f.rule_id = "cluster_slow_rank";
    f.title = "A slow rank holds the others back";
    f.severity = "warning";
    std::string why;
    for (const auto& r : s.reasons) {
      why += (why.empty() ? "" : "; ") + r.message;
    }
    f.message = fmt::format(
        "rank {} arrives last at {} of {} collectives, {} late on average; "
        "the other ranks waited {} for it in all{}",
        s.rank, s.last_arrivals, s.collectives, Ms(s.mean_lateness_ns),
        Ms(s.others_wait_ns),
        why.empty() ? " (no reason stands out in its step figures)"
                    : ". Why: " + why);
    f.suggestion =
        "open this rank's timeline at the step and compare it with a fast "
        "rank's: the op types and nodes listed are where its extra time "
        "goes; balance the work, or look at its host (launch, data "
        "loading) and its links";
    f.time_ns = s.others_wait_ns;
    f.share = s.last_arrival_share;
    f.threshold = options.slow_rank_last_arrival_share;
    f.ranks = {s.rank};
    for (const auto& r : s.reasons) {
      for (const auto& n : r.nodes) f.nodes.push_back(n.name);
    }
    rep.findings.push_back(std::move(f));
  }
  for (const ClusterStep& st : rep.steps) {
    if (st.ranks.size() < 2 ||
        st.compute_max_over_mean <= options.imbalance_threshold) {
      continue;
    }
    ClusterFinding f;
    f.rule_id = "cluster_load_imbalance";
    f.title = "Compute is uneven across ranks";
    f.severity = "warning";
    int64_t mx = 0, sum = 0;
    for (const auto& r : st.ranks) {
      mx = std::max(mx, r.compute_ns);
      sum += r.compute_ns;
    }
    const int64_t mean = sum / static_cast<int64_t>(st.ranks.size());
    f.message = fmt::format(
        "step {}: rank {} computes {}, {:.1f}% above the mean rank's {} "
        "(max - min = {:.1f}% of the mean)",
        st.label, st.slowest_rank, Ms(mx), st.compute_max_over_mean * 100,
        Ms(mean), st.compute_spread_over_mean * 100);
    f.suggestion =
        "every collective waits for the rank with the most compute: spread "
        "the work (batch, sequence lengths, pipeline stages, experts) more "
        "evenly";
    f.threshold = options.imbalance_threshold;
    f.time_ns = mx - mean;
    f.share = std::min(1.0, st.compute_max_over_mean);
    f.ranks = {st.slowest_rank};
    if (st.step >= 0) f.steps = {st.step};
    rep.findings.push_back(std::move(f));
  }
  {
    int64_t exposed = 0;
    for (const auto& r : rep.ranks) exposed += r.exposed_communication_ns;
    const double share = total_wall > 0 ? static_cast<double>(exposed) /
                                              static_cast<double>(total_wall)
                                        : 0;
    if (share > 0.1) {
      ClusterFinding f;
      f.rule_id = "cluster_exposed_communication";
      f.title = "Communication is not hidden behind compute";
      f.severity = share > 0.3 ? "warning" : "info";
      f.message = fmt::format(
          "{:.1f}% of the ranks' step time ({} of {}) is communication no "
          "compute runs beside",
          share * 100, Ms(exposed), Ms(total_wall));
      f.suggestion =
          "overlap collectives with compute (bucketed gradient all-reduce, "
          "prefetching all-gathers), or reduce their size; the collectives "
          "with the most exposed time are listed first";
      f.threshold = 0.1;
      f.time_ns = exposed;
      f.share = share;
      for (size_t k = 0; k < std::min<size_t>(listed, 10); ++k) {
        f.collectives.push_back(static_cast<int64_t>(k));
      }
      rep.findings.push_back(std::move(f));
    }
  }
  for (const ClusterLinkBandwidth& b : rep.bandwidth) {
    if (b.efficiency < 0 || b.efficiency >= 0.8) continue;
    ClusterFinding f;
    f.rule_id = "cluster_low_bandwidth";
    f.title = "Links run below their peak";
    f.severity = "info";
    f.message = fmt::format(
        "{}: {:.2f} GB/s over {} transfers, {:.1f}% of the {:.1f} GB/s peak",
        b.link_type, b.busbw_gbps, b.collectives, b.efficiency * 100,
        b.peak_gbps);
    f.suggestion =
        "small messages do not reach a link's peak: fuse small collectives "
        "into larger buckets; check the link's configuration when large "
        "ones are slow too";
    f.threshold = 0.8;
    f.share = b.efficiency;
    rep.findings.push_back(std::move(f));
  }
  if (!rep.missing_ranks.empty()) {
    ClusterFinding f;
    f.rule_id = "cluster_missing_ranks";
    f.title = "Ranks of the job are missing";
    f.severity = "warning";
    std::string list;
    for (size_t k = 0; k < rep.missing_ranks.size() && k < 20; ++k) {
      list += (k ? ", " : "") + std::to_string(rep.missing_ranks[k]);
    }
    if (rep.missing_ranks.size() > 20) list += ", ...";
    f.message = fmt::format(
        "{} of {} ranks (world size from {}) have no profile: {}",
        rep.missing_ranks.size(), rep.world_size, rep.world_size_from, list);
    f.suggestion =
        "profile every rank (or add their folders) to see who the others "
        "wait for; figures across ranks cover the ranks read only";
    f.ranks = rep.missing_ranks;
    rep.findings.push_back(std::move(f));
  }
  std::stable_sort(rep.findings.begin(), rep.findings.end(),
                   [](const ClusterFinding& a, const ClusterFinding& b) {
                     auto sev = [](const std::string& s) {
                       return s == "error" ? 0 : s == "warning" ? 1 : 2;
                     };
                     if (sev(a.severity) != sev(b.severity)) {
                       return sev(a.severity) < sev(b.severity);
                     }
                     return a.time_ns > b.time_ns;
                   });

  for (size_t k = 0; k < listed; ++k) {
    rep.collectives.push_back(std::move(all[order[k]]));
  }
  return rep;
}

}  // namespace mi::analysis
