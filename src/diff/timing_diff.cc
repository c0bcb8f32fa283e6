// The timing and concurrency diff of two runs' digests
// (docs/design/diff.md "Timing", "Concurrency").
//
// Each series (total, op type, stream, node, unlinked task name) becomes a
// median and a spread (p75 - p25) over the runs of each trace. A change is
// significant when |delta| exceeds the noise:
//   max(noise_floor_ns, noise_floor_fraction * base median,
//       noise_spread_factor * sqrt(base spread^2 + new spread^2)).
// Concurrency compares, per op type, node and stream pair, the median time
// that overlapped other streams' work with the median busy time.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diff/diff_internal.h"
#include "diff/timing_stat.h"

namespace mi::diff {
namespace {

// The q-quantile of sorted values, linearly interpolated (numpy's default).
double Quantile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) +
         frac * static_cast<double>(sorted[hi] - sorted[lo]);
}

// Values per run, padded with 0 to the run count (a key absent from a run
// took no time there).
std::vector<int64_t> Padded(const std::vector<int64_t>& values,
                            int64_t run_count) {
  std::vector<int64_t> v = values;
  if (static_cast<int64_t>(v.size()) < run_count) v.resize(run_count, 0);
  return v;
}

}  // namespace

TimingStat StatOf(const std::vector<int64_t>& values, int64_t run_count) {
  std::vector<int64_t> v = Padded(values, run_count);
  TimingStat s;
  s.samples = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median_ns = std::llround(Quantile(v, 0.5));
  s.spread_ns = std::llround(Quantile(v, 0.75) - Quantile(v, 0.25));
  s.min_ns = v.front();
  s.max_ns = v.back();
  return s;
}

int64_t NoiseOf(const TimingStat& base, const TimingStat& next,
                const DiffOptions& options) {
  const double spread =
      std::sqrt(static_cast<double>(base.spread_ns) * base.spread_ns +
                static_cast<double>(next.spread_ns) * next.spread_ns);
  return std::llround(std::max(
      {static_cast<double>(options.noise_floor_ns),
       options.noise_floor_fraction * static_cast<double>(base.median_ns),
       options.noise_spread_factor * spread}));
}

namespace {

TimingDelta Compare(std::string key, const std::vector<int64_t>* base,
                    int64_t base_runs, const std::vector<int64_t>* next,
                    int64_t next_runs, const DiffOptions& options) {
  TimingDelta d;
  d.key = std::move(key);
  if (base != nullptr) d.base = StatOf(*base, base_runs);
  if (next != nullptr) d.next = StatOf(*next, next_runs);
  d.delta_ns = d.next.median_ns - d.base.median_ns;
  d.delta_pct = d.base.median_ns != 0
                    ? 100.0 * static_cast<double>(d.delta_ns) /
                          static_cast<double>(d.base.median_ns)
                    : 0;
  d.noise_ns = NoiseOf(d.base, d.next, options);
  if (base == nullptr) {
    d.verdict = "added";
  } else if (next == nullptr) {
    d.verdict = "removed";
  } else if (std::llabs(d.delta_ns) <= d.noise_ns) {
    d.verdict = "same";
  } else {
    d.verdict = d.delta_ns > 0 ? "slower" : "faster";
  }
  return d;
}

bool ByAbsDelta(const TimingDelta& a, const TimingDelta& b) {
  const int64_t x = std::llabs(a.delta_ns);
  const int64_t y = std::llabs(b.delta_ns);
  if (x != y) return x > y;
  return a.key < b.key;
}

// Series of both digests joined by key: every key of either.
std::vector<TimingDelta> CompareSeries(const std::vector<DigestSeries>& base,
                                       const RunDigest& base_run,
                                       const std::vector<DigestSeries>& next,
                                       const RunDigest& next_run,
                                       const DiffOptions& options) {
  std::map<std::string, std::pair<const DigestSeries*, const DigestSeries*>>
      joined;
  for (const DigestSeries& s : base) joined[s.key].first = &s;
  for (const DigestSeries& s : next) joined[s.key].second = &s;
  std::vector<TimingDelta> out;
  for (const auto& [key, p] : joined) {
    out.push_back(Compare(
        key, p.first ? &p.first->run_ns : nullptr, base_run.run_count,
        p.second ? &p.second->run_ns : nullptr, next_run.run_count, options));
  }
  std::stable_sort(out.begin(), out.end(), ByAbsDelta);
  return out;
}

struct OverlapInput {
  std::string scope;
  std::string key;
  TimingStat base_busy, next_busy, base_overlap, next_overlap;
};

// An overlap change worth reporting, or none (verdict empty): a change of
// the overlapped time beyond its noise that moves the fraction across the
// parallel / serial thresholds, or by at least the serial fraction.
OverlapChange JudgeOverlap(const OverlapInput& in, const DiffOptions& options) {
  OverlapChange c;
  c.scope = in.scope;
  c.key = in.key;
  c.base_busy_ns = in.base_busy.median_ns;
  c.new_busy_ns = in.next_busy.median_ns;
  c.base_overlap_ns = in.base_overlap.median_ns;
  c.new_overlap_ns = in.next_overlap.median_ns;
  c.base_fraction = c.base_busy_ns > 0
                        ? static_cast<double>(c.base_overlap_ns) /
                              static_cast<double>(c.base_busy_ns)
                        : 0;
  c.new_fraction = c.new_busy_ns > 0 ? static_cast<double>(c.new_overlap_ns) /
                                           static_cast<double>(c.new_busy_ns)
                                     : 0;
  c.cost_ns = std::max<int64_t>(0, c.base_overlap_ns - c.new_overlap_ns);
  const int64_t change = c.new_overlap_ns - c.base_overlap_ns;
  if (std::llabs(change) <=
      NoiseOf(in.base_overlap, in.next_overlap, options)) {
    return c;
  }
  if (c.base_fraction >= options.parallel_fraction &&
      c.new_fraction <= options.serial_fraction) {
    c.verdict = "parallel_to_serial";
  } else if (c.base_fraction <= options.serial_fraction &&
             c.new_fraction >= options.parallel_fraction) {
    c.verdict = "serial_to_parallel";
  } else if (std::abs(c.new_fraction - c.base_fraction) >=
             options.serial_fraction) {
    c.verdict = change < 0 ? "less_overlap" : "more_overlap";
  }
  return c;
}

}  // namespace

void DiffTiming(const RunDigest& base, const RunDigest& next,
                const DiffOptions& options, DiffReport* report) {
  if (!base.has_trace() || !next.has_trace()) return;
  report->has_timing = true;
  report->total = Compare("total", &base.total.run_ns, base.run_count,
                          &next.total.run_ns, next.run_count, options);
  report->op_types =
      CompareSeries(base.op_types, base, next.op_types, next, options);
  report->streams =
      CompareSeries(base.streams, base, next.streams, next, options);

  // Unlinked tasks by name: those of both runs compared, the rest listed.
  {
    std::map<std::string, const DigestSeries*> in_next;
    for (const DigestSeries& s : next.unlinked_tasks) in_next[s.key] = &s;
    std::set<std::string> in_base;
    for (const DigestSeries& s : base.unlinked_tasks) {
      in_base.insert(s.key);
      auto it = in_next.find(s.key);
      if (it == in_next.end()) {
        report->unmatched_base_tasks.push_back(s.key);
        continue;
      }
      report->unlinked_tasks.push_back(Compare(s.key, &s.run_ns, base.run_count,
                                               &it->second->run_ns,
                                               next.run_count, options));
    }
    for (const DigestSeries& s : next.unlinked_tasks) {
      if (!in_base.contains(s.key))
        report->unmatched_new_tasks.push_back(s.key);
    }
    std::stable_sort(report->unlinked_tasks.begin(),
                     report->unlinked_tasks.end(), ByAbsDelta);
    std::sort(report->unmatched_base_tasks.begin(),
              report->unmatched_base_tasks.end());
    std::sort(report->unmatched_new_tasks.begin(),
              report->unmatched_new_tasks.end());
  }

  std::vector<OverlapInput> overlap_inputs;
  // Op types: busy is the op type's time.
  {
    std::map<std::string, std::pair<const DigestSeries*, const DigestSeries*>>
        joined;
    for (const DigestSeries& s : base.op_types) joined[s.key].first = &s;
    for (const DigestSeries& s : next.op_types) joined[s.key].second = &s;
    for (const auto& [key, p] : joined) {
      if (p.first == nullptr || p.second == nullptr) continue;
      overlap_inputs.push_back(
          {"op", key, StatOf(p.first->run_ns, base.run_count),
           StatOf(p.second->run_ns, next.run_count),
           StatOf(p.first->overlapped_ns, base.run_count),
           StatOf(p.second->overlapped_ns, next.run_count)});
    }
  }

  // Matched nodes of each level both runs have: through the structural
  // matches where the structure diff recorded them, else by name.
  std::vector<TimingDelta> nodes;
  for (const DigestLevel& bl : base.levels) {
    const DigestLevel* nl = nullptr;
    for (const DigestLevel& l : next.levels) {
      if (l.level == bl.level) nl = &l;
    }
    if (nl == nullptr) continue;
    std::vector<std::pair<int64_t, int64_t>> matches;
    const LevelDiff* level_diff = nullptr;
    for (const LevelDiff& l : report->structure) {
      if (l.level == bl.level) level_diff = &l;
    }
    if (level_diff != nullptr) {
      matches = level_diff->matches;
    } else {
      // No structural diff of this level (a caller diffing timing alone):
      // nodes of one name are one node.
      std::unordered_map<std::string, int64_t> by_name;
      for (size_t j = 0; j < nl->nodes.size(); ++j) {
        by_name.emplace(nl->nodes[j].name, static_cast<int64_t>(j));
      }
      for (size_t i = 0; i < bl.nodes.size(); ++i) {
        auto it = by_name.find(bl.nodes[i].name);
        if (it != by_name.end()) {
          matches.emplace_back(static_cast<int64_t>(i), it->second);
        }
      }
    }
    for (const auto& [bi, ni] : matches) {
      if (bi < 0 || ni < 0 || static_cast<size_t>(bi) >= bl.nodes.size() ||
          static_cast<size_t>(ni) >= nl->nodes.size()) {
        continue;
      }
      const DigestNode& bn = bl.nodes[bi];
      const DigestNode& nn = nl->nodes[ni];
      if (bn.run_ns.empty() && nn.run_ns.empty()) continue;
      TimingDelta d = Compare(
          bn.name == nn.name ? bn.name : bn.name + " -> " + nn.name,
          bn.run_ns.empty() ? nullptr : &bn.run_ns, base.run_count,
          nn.run_ns.empty() ? nullptr : &nn.run_ns, next.run_count, options);
      d.level = bl.level;
      d.base_node_id = bn.node_id;
      d.new_node_id = nn.node_id;
      nodes.push_back(std::move(d));
      if (!bn.run_ns.empty() && !nn.run_ns.empty()) {
        overlap_inputs.push_back({"op", nodes.back().key,
                                  StatOf(bn.run_ns, base.run_count),
                                  StatOf(nn.run_ns, next.run_count),
                                  StatOf(bn.overlapped_ns, base.run_count),
                                  StatOf(nn.overlapped_ns, next.run_count)});
      }
    }
  }
  std::stable_sort(nodes.begin(), nodes.end(), ByAbsDelta);
  if (nodes.size() > options.max_nodes) nodes.resize(options.max_nodes);
  report->nodes = std::move(nodes);

  // Stream pairs: busy is the less busy stream's time, the most the pair
  // could have overlapped.
  {
    auto stream_runs = [](const RunDigest& d) {
      std::map<std::string, const std::vector<int64_t>*> m;
      for (const DigestSeries& s : d.streams) m[s.key] = &s.run_ns;
      return m;
    };
    const auto base_streams = stream_runs(base);
    const auto next_streams = stream_runs(next);
    auto pair_busy =
        [](const std::map<std::string, const std::vector<int64_t>*>& streams,
           const std::string& a, const std::string& b, int64_t runs) {
          std::vector<int64_t> v(runs, 0);
          auto ia = streams.find(a);
          auto ib = streams.find(b);
          if (ia == streams.end() || ib == streams.end()) return v;
          const std::vector<int64_t> pa = Padded(*ia->second, runs);
          const std::vector<int64_t> pb = Padded(*ib->second, runs);
          for (int64_t r = 0; r < runs; ++r) v[r] = std::min(pa[r], pb[r]);
          return v;
        };
    std::map<std::pair<std::string, std::string>,
             std::pair<const DigestStreamPair*, const DigestStreamPair*>>
        joined;
    for (const DigestStreamPair& p : base.stream_pairs) {
      joined[{p.stream_a, p.stream_b}].first = &p;
    }
    for (const DigestStreamPair& p : next.stream_pairs) {
      joined[{p.stream_a, p.stream_b}].second = &p;
    }
    // A pair whose streams both ran in the other run but never together
    // there has no entry in that run: its overlap was 0.
    const std::vector<int64_t> none;
    for (const auto& [key, p] : joined) {
      const auto& [a, b] = key;
      if ((p.first == nullptr &&
           !(base_streams.contains(a) && base_streams.contains(b))) ||
          (p.second == nullptr &&
           !(next_streams.contains(a) && next_streams.contains(b)))) {
        continue;  // a stream of the pair ran in one run only
      }
      overlap_inputs.push_back(
          {"streams", a + " <-> " + b,
           StatOf(pair_busy(base_streams, a, b, base.run_count),
                  base.run_count),
           StatOf(pair_busy(next_streams, a, b, next.run_count),
                  next.run_count),
           StatOf(p.first ? p.first->overlap_ns : none, base.run_count),
           StatOf(p.second ? p.second->overlap_ns : none, next.run_count)});
    }
  }

  for (const OverlapInput& in : overlap_inputs) {
    OverlapChange c = JudgeOverlap(in, options);
    if (c.verdict.empty()) continue;
    if (c.verdict == "parallel_to_serial") ++report->overlap_lost;
    report->overlap.push_back(std::move(c));
  }
  // Most overlap lost first, then most gained.
  std::stable_sort(report->overlap.begin(), report->overlap.end(),
                   [](const OverlapChange& a, const OverlapChange& b) {
                     const int64_t da = a.base_overlap_ns - a.new_overlap_ns;
                     const int64_t db = b.base_overlap_ns - b.new_overlap_ns;
                     if (da != db) return da > db;
                     return a.key < b.key;
                   });
}

}  // namespace mi::diff
