#pragma once

// Frequent kernel sequences: the consecutive runs of
// tasks that recur on a stream — "Conv Relu Conv Add Relu", "MatMul Add
// Gelu" — with how often and how long they ran: candidates for fusion.
// HTA offers this for PyTorch traces; this works for every backend.
//
// Per track, the execution tasks (compute and data movement) in start
// order form a sequence of symbols (op type or task name); a window never
// spans two tracks or two runs (iterations). Every n-gram of length
// min_length..max_length is counted, non-overlapping (greedy from the
// left, which gives the most occurrences), with the summed duration of the
// tasks of the counted occurrences.
//
// Fast and exact: an n-gram's id is looked up from the pair (id of its
// first n-1 symbols, its last symbol) in a hash map of integers — no
// string hashing, no collisions — and only windows whose two (n-1)-grams
// both occur at least `min_count` times are extended (a longer sequence
// cannot occur more often than its parts). O(tasks x max_length).
//
// Only closed sequences are reported: one whose extension by a symbol on
// either side occurs as often says nothing the extension does not (with
// "A B C" 10 times and "A B" 10 times, only "A B C" is listed). Of the
// rotations of one sequence ("A B C X", "B C X A", ... — the same repeated
// block entered at another op), only the one with the most time is listed.

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "base/ids.h"
#include "model/model.h"
#include "model_inspector/results/diagnosis.h"
#include "model_inspector/status.h"
#include "trace/trace.h"

namespace mi::analysis {

enum class SequenceSymbol : uint8_t { kOpType, kName };

struct SequenceParams {
  // kOpType: the task's op type, else its node's, else its name.
  SequenceSymbol by = SequenceSymbol::kOpType;
  uint32_t min_length = 2;
  uint32_t max_length = 6;
  size_t top = 20;
  uint32_t min_count = 2;
};

struct FrequentSequence {
  std::vector<std::string> symbols;
  uint64_t count = 0;           // non-overlapping occurrences over all tracks
  int64_t total_ns = 0;         // summed duration of the counted occurrences
  std::vector<TrackId> tracks;  // tracks where it occurs, ascending
  std::vector<TaskId> first_tasks;  // its first occurrence
};

struct SequenceReport {
  // Closed sequences, by total time (then count, then length), at most
  // `top`.
  std::vector<FrequentSequence> sequences;
  uint64_t tasks = 0;    // tasks sequenced
  int64_t total_ns = 0;  // their summed duration
};

SequenceReport FindFrequentSequences(const Model& model, const Trace& trace,
                                     const SequenceParams& params);

// The sequences as the public result, from the public options.
// InvalidArgument for `by` other than op_type / name, lengths outside
// 2 <= min <= max <= 32, or top outside 1..10000.
StatusOr<SequencesResult> RunSequences(const Model& model, const Trace& trace,
                                       const SequenceOptions& options);

// Registry entry (registry/builtin_analyses.cc).
const AnalysisDescriptor& SequencesAnalysis();

}  // namespace mi::analysis
