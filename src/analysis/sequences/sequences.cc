#include "analysis/sequences/sequences.h"

#include <algorithm>
#include <string_view>

#include "base/u64_map.h"

namespace mi::analysis {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// The tasks to sequence, all tracks concatenated (track by track, each in
// start order), with their symbols.
struct Positions {
  std::vector<TaskId> task;
  std::vector<uint32_t> symbol;
  std::vector<TrackId> track;
  // End (exclusive) of the run of positions on the same track and run.
  std::vector<uint32_t> segment_end;
  std::vector<int64_t> duration_prefix;  // size + 1
  std::vector<std::string> symbol_names;
};

Positions Collect(const Model& model, const Trace& trace,
                  const SequenceParams& params) {
  Positions p;
  std::vector<std::vector<TaskId>> by_track(trace.track_count());
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    TaskKind kind = trace.task_kind(t);
    if (kind != TaskKind::kCompute && kind != TaskKind::kDataMovement) continue;
    TrackId track = trace.task_track(t);
    if (track.value() < by_track.size()) by_track[track.value()].push_back(t);
  }
  // Symbols: interned ids of the trace's pool, or of the model's pool when
  // it is another one (bit 32 set), mapped to dense local ids.
  U64Map<uint32_t> symbol_of;
  auto intern = [&](uint64_t key, std::string_view text) {
    auto [id, added] =
        symbol_of.Emplace(key, static_cast<uint32_t>(p.symbol_names.size()));
    if (added) p.symbol_names.emplace_back(text);
    return *id;
  };
  const bool shared_pool =
      model.node_count() == 0 || &model.strings() == &trace.strings();
  for (auto& tasks : by_track) {
    std::stable_sort(tasks.begin(), tasks.end(), [&](TaskId a, TaskId b) {
      return trace.task_start_ns(a) < trace.task_start_ns(b);
    });
    size_t begin = p.task.size();
    for (TaskId t : tasks) {
      uint32_t symbol;
      StringId op = trace.task_op_type(t);
      NodeId node = trace.task_node(t);
      if (params.by == SequenceSymbol::kName ||
          (op == StringPool::kEmpty && !node.valid())) {
        symbol =
            intern(trace.task_name(t).value(), trace.str(trace.task_name(t)));
      } else if (op != StringPool::kEmpty) {
        symbol = intern(op.value(), trace.str(op));
      } else {
        StringId node_op = model.node_op_type(node);
        symbol = intern((shared_pool ? 0 : uint64_t{1} << 32) | node_op.value(),
                        model.str(node_op));
      }
      p.task.push_back(t);
      p.symbol.push_back(symbol);
      p.track.push_back(trace.task_track(t));
    }
    // Segments: split where the run (iteration) changes.
    size_t end = p.task.size();
    p.segment_end.resize(end);
    for (size_t i = end; i-- > begin;) {
      bool last = i + 1 == end ||
                  trace.task_run(p.task[i]) != trace.task_run(p.task[i + 1]);
      p.segment_end[i] =
          last ? static_cast<uint32_t>(i + 1) : p.segment_end[i + 1];
    }
  }
  p.duration_prefix.assign(p.task.size() + 1, 0);
  for (size_t i = 0; i < p.task.size(); ++i) {
    p.duration_prefix[i + 1] =
        p.duration_prefix[i] + trace.task_duration_ns(p.task[i]);
  }
  return p;
}

struct Entry {
  uint32_t length = 0;
  uint32_t first = 0;       // position of the first occurrence
  uint32_t prefix = kNone;  // entry of symbols [0, length - 1)
  uint32_t suffix = kNone;  // entry of symbols [1, length)
  uint64_t count = 0;
  int64_t total_ns = 0;
  uint32_t last_end = 0;  // end of the last counted occurrence
  bool closed = true;
};

}  // namespace

SequenceReport FindFrequentSequences(const Model& model, const Trace& trace,
                                     const SequenceParams& params) {
  SequenceReport report;
  Positions p = Collect(model, trace, params);
  const uint32_t n_pos = static_cast<uint32_t>(p.task.size());
  report.tasks = n_pos;
  report.total_ns = p.duration_prefix.back();
  const uint32_t min_count = std::max<uint32_t>(params.min_count, 1);
  const uint32_t max_length = std::max<uint32_t>(params.max_length, 1);
  if (n_pos == 0 || params.top == 0 || params.min_length > max_length) {
    return report;
  }

  // Length 1: one entry per symbol.
  std::vector<Entry> entries(p.symbol_names.size());
  std::vector<uint32_t> prev(n_pos), cur(n_pos);
  for (uint32_t i = 0; i < n_pos; ++i) {
    Entry& e = entries[p.symbol[i]];
    if (e.count == 0) e.first = i;
    e.length = 1;
    ++e.count;
    e.total_ns += p.duration_prefix[i + 1] - p.duration_prefix[i];
  }
  for (uint32_t i = 0; i < n_pos; ++i) {
    prev[i] = entries[p.symbol[i]].count >= min_count ? p.symbol[i] : kNone;
  }

  for (uint32_t n = 2; n <= max_length; ++n) {
    U64Map<uint32_t> ids;
    bool any = false;
    for (uint32_t i = 0; i < n_pos; ++i) {
      cur[i] = kNone;
      if (i + n > p.segment_end[i]) continue;  // crosses a track or run
      uint32_t head = prev[i], tail = prev[i + 1];
      if (head == kNone || tail == kNone) continue;
      uint64_t key = (uint64_t{head} << 32) | p.symbol[i + n - 1];
      auto [id, added] =
          ids.Emplace(key, static_cast<uint32_t>(entries.size()));
      if (added) {
        Entry e;
        e.length = n;
        e.first = i;
        e.prefix = head;
        e.suffix = tail;
        entries.push_back(e);
      }
      Entry& e = entries[*id];
      if (e.last_end <= i) {
        ++e.count;
        e.total_ns += p.duration_prefix[i + n] - p.duration_prefix[i];
        e.last_end = i + n;
      }
      cur[i] = *id;
    }
    for (uint32_t i = 0; i < n_pos; ++i) {
      if (cur[i] == kNone) continue;
      if (entries[cur[i]].count < min_count) {
        cur[i] = kNone;
      } else {
        any = true;
      }
    }
    if (!any) break;
    prev.swap(cur);
  }

  // Closed: no one-symbol extension occurs as often.
  for (const Entry& e : entries) {
    if (e.length < 2 || e.count < min_count) continue;
    if (entries[e.prefix].count == e.count) entries[e.prefix].closed = false;
    if (entries[e.suffix].count == e.count) entries[e.suffix].closed = false;
  }
  std::vector<uint32_t> chosen;
  for (uint32_t id = 0; id < entries.size(); ++id) {
    const Entry& e = entries[id];
    if (e.length >= params.min_length && e.length <= max_length &&
        e.count >= min_count && e.closed) {
      chosen.push_back(id);
    }
  }
  std::sort(chosen.begin(), chosen.end(), [&](uint32_t a, uint32_t b) {
    const Entry& x = entries[a];
    const Entry& y = entries[b];
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    if (x.count != y.count) return x.count > y.count;
    if (x.length != y.length) return x.length > y.length;
    return x.first < y.first;
  });
  // A repeated block shows up in every rotation ("A B C X", "B C X A",
  // ...), with about the same count: keep the first (most time) of each
  // rotation class, so the list is not filled with one block.
  std::vector<std::vector<uint32_t>> kept_rotations;
  std::vector<uint32_t> top;
  for (uint32_t id : chosen) {
    if (top.size() >= params.top) break;
    const Entry& e = entries[id];
    std::vector<uint32_t> canonical(p.symbol.begin() + e.first,
                                    p.symbol.begin() + e.first + e.length);
    std::vector<uint32_t> rotated = canonical;
    for (uint32_t k = 1; k < e.length; ++k) {
      std::rotate(rotated.begin(), rotated.begin() + 1, rotated.end());
      canonical = std::min(canonical, rotated);
    }
    if (std::find(kept_rotations.begin(), kept_rotations.end(), canonical) !=
        kept_rotations.end()) {
      continue;
    }
    kept_rotations.push_back(std::move(canonical));
    top.push_back(id);
  }
  chosen = std::move(top);

  for (uint32_t id : chosen) {
    const Entry& e = entries[id];
    FrequentSequence s;
    s.count = e.count;
    s.total_ns = e.total_ns;
    for (uint32_t k = 0; k < e.length; ++k) {
      s.symbols.push_back(p.symbol_names[p.symbol[e.first + k]]);
      s.first_tasks.push_back(p.task[e.first + k]);
    }
    // Tracks: a scan for this sequence (only for the few reported).
    for (uint32_t i = 0; i + e.length <= n_pos; ++i) {
      if (i + e.length > p.segment_end[i]) continue;
      bool match = true;
      for (uint32_t k = 0; k < e.length && match; ++k) {
        match = p.symbol[i + k] == p.symbol[e.first + k];
      }
      if (match && (s.tracks.empty() || s.tracks.back() != p.track[i])) {
        s.tracks.push_back(p.track[i]);
      }
    }
    std::sort(s.tracks.begin(), s.tracks.end());
    s.tracks.erase(std::unique(s.tracks.begin(), s.tracks.end()),
                   s.tracks.end());
    report.sequences.push_back(std::move(s));
  }
  return report;
}

}  // namespace mi::analysis
