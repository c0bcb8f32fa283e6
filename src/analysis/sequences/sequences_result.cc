// Frequent sequences from the public options to the public result, and
// their registry entry.

#include <memory>
#include <string>

#include <fmt/format.h>

#include "analysis/sequences/sequences.h"

namespace mi::analysis {
namespace {

// Sequences longer than this are not searched (cost is linear in it).
constexpr size_t kMaxSequenceLength = 32;
constexpr size_t kMaxSequenceTop = 10000;

}  // namespace

StatusOr<SequencesResult> RunSequences(const Model& model, const Trace& trace,
                                       const SequenceOptions& options) {
  SequenceParams params;
  if (options.by == "op_type") {
    params.by = SequenceSymbol::kOpType;
  } else if (options.by == "name") {
    params.by = SequenceSymbol::kName;
  } else {
    return InvalidArgumentError(fmt::format(
        "sequences by: expected 'op_type' or 'name', found '{}'", options.by));
  }
  if (options.min_length < 2 || options.min_length > options.max_length ||
      options.max_length > kMaxSequenceLength) {
    return InvalidArgumentError(fmt::format(
        "sequence lengths: expected 2 <= min ({}) <= max ({}) <= {}",
        options.min_length, options.max_length, kMaxSequenceLength));
  }
  if (options.top < 1 || options.top > kMaxSequenceTop) {
    return InvalidArgumentError(
        fmt::format("sequences top: expected 1..{}, found {}", kMaxSequenceTop,
                    options.top));
  }
  params.min_length = static_cast<uint32_t>(options.min_length);
  params.max_length = static_cast<uint32_t>(options.max_length);
  params.top = options.top;
  SequenceReport report = FindFrequentSequences(model, trace, params);
  SequencesResult out;
  for (const auto& s : report.sequences) {
    SequenceInfo info;
    info.symbols = s.symbols;
    info.count = s.count;
    info.total_ns = s.total_ns;
    info.share = report.total_ns > 0
                     ? static_cast<double>(s.total_ns) / report.total_ns
                     : 0;
    for (TrackId t : s.tracks) info.tracks.push_back(t.value());
    for (TaskId t : s.first_tasks) info.first_tasks.push_back(t.value());
    out.sequences.push_back(std::move(info));
  }
  return out;
}

const AnalysisDescriptor& SequencesAnalysis() {
  static const AnalysisDescriptor d = [] {
    ParameterSpec min_length{"min_length", ParameterType::kInt, "2",
                             "shortest sequence listed"};
    min_length.min = 2;
    min_length.max = kMaxSequenceLength;
    ParameterSpec max_length{"max_length", ParameterType::kInt, "6",
                             "longest sequence searched"};
    max_length.min = 2;
    max_length.max = kMaxSequenceLength;
    ParameterSpec top{"top", ParameterType::kInt, "20", "sequences listed"};
    top.min = 1;
    top.max = kMaxSequenceTop;
    return AnalysisDescriptor{
        .id = "sequences",
        .title = "Frequent sequences",
        .summary =
            "the most time-consuming recurring sequences of consecutive "
            "tasks per stream (fusion candidates), with their count, time "
            "and where they occur",
        .needs = kNeedsNothing,
        .parameters = {{"by",
                        ParameterType::kString,
                        "op_type",
                        "sequence symbols: the op each task ran, or the "
                        "kernel / task name",
                        {"op_type", "name"}},
                       min_length,
                       max_length,
                       top},
        .in_export = true,
        .fields = {},
        .reference = "docs/reference/schemas/findings.schema.json",
        .run = [](const AnalysisContext& ctx, const ParsedParams& params)
            -> StatusOr<std::unique_ptr<AnalysisResult>> {
          SequenceOptions o;
          o.by = params.String("by");
          o.min_length = static_cast<size_t>(params.Int("min_length"));
          o.max_length = static_cast<size_t>(params.Int("max_length"));
          o.top = static_cast<size_t>(params.Int("top"));
          StatusOr<SequencesResult> r = RunSequences(*ctx.model, *ctx.trace, o);
          if (!r.ok()) return r.status();
          return std::unique_ptr<AnalysisResult>(
              std::make_unique<SequencesResult>(std::move(r).value()));
        }};
  }();
  return d;
}

}  // namespace mi::analysis
