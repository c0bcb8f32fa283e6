#include "analysis/steps/step_breakdown.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "base/intervals.h"
#include "base/strings.h"

namespace mi::analysis {
namespace {

Intervals Union(const Intervals& a, const Intervals& b) {
  Intervals v = a;
  v.insert(v.end(), b.begin(), b.end());
  return MergeIntervals(std::move(v));
}

// Per source: the cumulative unions of the categories in priority order
// (compute; + communication; + memcpy; + host).
struct SourceCover {
  Intervals compute, communication, memcpy, host;
  Intervals upto_compute, upto_communication, upto_memcpy, upto_host;
};

bool IsPrologue(std::string_view name) { return name.starts_with("before "); }

}  // namespace

StepBreakdownResult ComputeStepBreakdown(const Trace& trace) {
  StepBreakdownResult out;
  const auto& runs = trace.runs();
  if (runs.empty()) return out;
  const size_t sources = std::max<size_t>(trace.source_count(), 1);
  auto source_of_run = [&](uint32_t r) -> uint32_t {
    return runs[r].source.valid() ? runs[r].source.value() : 0;
  };
  // Per run: its tasks and the end of its last execution task.
  std::vector<uint64_t> run_tasks(runs.size(), 0);
  std::vector<int64_t> run_exec_end(runs.size(),
                                    std::numeric_limits<int64_t>::min());
  std::vector<SourceCover> cover(sources);
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    const uint32_t run = trace.task_run(t);
    const TaskKind kind = trace.task_kind(t);
    const int64_t start = trace.task_start_ns(t);
    const int64_t end = trace.task_end_ns(t);
    if (run < runs.size()) {
      ++run_tasks[run];
      if (IsExecutionKind(kind)) {
        run_exec_end[run] = std::max(run_exec_end[run], end);
      }
    }
    SourceId s = trace.task_source(t);
    SourceCover& c = cover[s.valid() && s.value() < sources ? s.value() : 0];
    if (kind == TaskKind::kCompute || kind == TaskKind::kDataMovement) {
      if (IsCommunicationTask(trace, t)) {
        c.communication.emplace_back(start, end);
      } else if (kind == TaskKind::kCompute) {
        c.compute.emplace_back(start, end);
      } else {
        c.memcpy.emplace_back(start, end);
      }
    } else if (kind == TaskKind::kHostOp || kind == TaskKind::kRuntime) {
      c.host.emplace_back(start, end);
    }
  }
  for (SourceCover& c : cover) {
    c.upto_compute = MergeIntervals(std::move(c.compute));
    c.upto_communication = Union(c.upto_compute, c.communication);
    c.upto_memcpy = Union(c.upto_communication, c.memcpy);
    c.upto_host = Union(c.upto_memcpy, c.host);
  }
  // Runs by source, in start order.
  std::map<uint32_t, std::vector<uint32_t>> by_source;
  for (uint32_t r = 0; r < runs.size(); ++r) {
    by_source[std::min<uint32_t>(source_of_run(r), sources - 1)].push_back(r);
  }
  int64_t steady_start = std::numeric_limits<int64_t>::max();
  int64_t steady_end = std::numeric_limits<int64_t>::min();
  for (auto& [source, list] : by_source) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return runs[a].start_ns < runs[b].start_ns;
    });
    const SourceCover& c = cover[source];
    for (size_t k = 0; k < list.size(); ++k) {
      const uint32_t r = list[k];
      StepRow row;
      row.run = r;
      row.source = source;
      row.name = RunName(trace, r);
      row.steady = !IsPrologue(trace.str(runs[r].name));
      row.start_ns = runs[r].start_ns;
      row.end_ns = k + 1 < list.size()
                       ? runs[list[k + 1]].start_ns
                       : std::max(runs[r].end_ns, run_exec_end[r]);
      row.end_ns = std::max(row.end_ns, row.start_ns);
      row.tasks = run_tasks[r];
      StepTimes& t = row.times;
      t.wall_ns = row.end_ns - row.start_ns;
      const int64_t a = CoveredIn(c.upto_compute, row.start_ns, row.end_ns);
      const int64_t b =
          CoveredIn(c.upto_communication, row.start_ns, row.end_ns);
      const int64_t m = CoveredIn(c.upto_memcpy, row.start_ns, row.end_ns);
      const int64_t h = CoveredIn(c.upto_host, row.start_ns, row.end_ns);
      t.compute_ns = a;
      t.communication_ns = b - a;
      t.memcpy_ns = m - b;
      t.host_ns = h - m;
      t.idle_ns = t.wall_ns - h;
      if (row.steady) {
        ++out.steady_steps;
        StepTimes& s = out.steady_total;
        s.wall_ns += t.wall_ns;
        s.compute_ns += t.compute_ns;
        s.communication_ns += t.communication_ns;
        s.memcpy_ns += t.memcpy_ns;
        s.host_ns += t.host_ns;
        s.idle_ns += t.idle_ns;
        steady_start = std::min(steady_start, row.start_ns);
        steady_end = std::max(steady_end, row.end_ns);
      } else {
        out.setup_ns += t.wall_ns;
      }
      out.steps.push_back(std::move(row));
    }
  }
  if (steady_end > steady_start) {
    out.steady_start_ns = steady_start;
    out.steady_end_ns = steady_end;
  }
  return out;
}

namespace {

void WriteTimes(ResultWriter& w, const StepTimes& t) {
  w.FieldInt("wall_ns", t.wall_ns);
  w.FieldInt("compute_ns", t.compute_ns);
  w.FieldInt("communication_ns", t.communication_ns);
  w.FieldInt("memcpy_ns", t.memcpy_ns);
  w.FieldInt("host_ns", t.host_ns);
  w.FieldInt("idle_ns", t.idle_ns);
}

}  // namespace

void StepBreakdownResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.Key("steps").BeginArray();
  for (const StepRow& s : steps) {
    w.BeginObject();
    w.FieldUInt("run", s.run).FieldUInt("source", s.source);
    w.Field("name", s.name);
    w.FieldBool("steady", s.steady);
    w.FieldInt("start_ns", s.start_ns).FieldInt("end_ns", s.end_ns);
    w.FieldUInt("tasks", s.tasks);
    WriteTimes(w, s.times);
    w.EndObject();
  }
  w.EndArray();
  w.FieldUInt("steady_steps", steady_steps);
  w.Key("steady_total").BeginObject();
  WriteTimes(w, steady_total);
  w.EndObject();
  w.Key("steady_window").BeginObject();
  w.FieldInt("start_ns", steady_start_ns).FieldInt("end_ns", steady_end_ns);
  w.FieldInt("setup_ns", setup_ns);
  w.EndObject();
  w.EndObject();
}

const AnalysisDescriptor& StepBreakdownAnalysis() {
  static const AnalysisDescriptor d = [] {
    return AnalysisDescriptor{
        .id = "step_breakdown",
        .title = "Per-step time breakdown",
        .summary =
            "per step (ProfilerStep#N, ONNX Runtime model_run, torch_npu "
            "steps; \"whole trace\" without markers): wall time split into "
            "compute, exposed communication, memcpy, host (devices idle "
            "while the host works) and idle, each nanosecond to the first "
            "that applies in that order; the steady-state window (the steps "
            "after the setup before the first step) the timeline opens on",
        .needs = kNeedsTrace,
        .parameters = {},
        .in_export = true,
        .fields =
            {
                {"steps", "one row per step of each source, by start"},
                {"steps[].run", "run index (trace.json runs[])"},
                {"steps[].source", "source index (trace.json sources[])"},
                {"steps[].name",
                 "\"ProfilerStep#3\"; the source in front "
                 "with several"},
                {"steps[].steady",
                 "false for the setup before the first marked step"},
                {"steps[].start_ns", "step start (raw clock)"},
                {"steps[].end_ns",
                 "the next step's start; the last step: its marker's end "
                 "or its last execution task's end, the later"},
                {"steps[].tasks", "tasks that started in the step"},
                {"steps[].wall_ns", "end - start"},
                {"steps[].compute_ns", "some non-collective compute ran"},
                {"steps[].communication_ns",
                 "some collective ran and no compute"},
                {"steps[].memcpy_ns",
                 "some copy ran, no compute, no collective"},
                {"steps[].host_ns",
                 "some host op or runtime call ran and no device work"},
                {"steps[].idle_ns", "wall - the four above"},
                {"steady_steps", "steps in the steady state"},
                {"steady_total", "the steady steps' figures summed"},
                {"steady_total.wall_ns", "as for steps"},
                {"steady_total.compute_ns", "as for steps"},
                {"steady_total.communication_ns", "as for steps"},
                {"steady_total.memcpy_ns", "as for steps"},
                {"steady_total.host_ns", "as for steps"},
                {"steady_total.idle_ns", "as for steps"},
                {"steady_window",
                 "where the timeline opens: first steady step's start to "
                 "last steady step's end, over all sources"},
                {"steady_window.start_ns", "0 when there are no steps"},
                {"steady_window.end_ns", "0 when there are no steps"},
                {"steady_window.setup_ns",
                 "wall time of the steps left out (setup)"},
            },
        .reference = {},
        .run = [](const AnalysisContext& ctx, const ParsedParams&)
            -> StatusOr<std::unique_ptr<AnalysisResult>> {
          return std::unique_ptr<AnalysisResult>(
              std::make_unique<StepBreakdownResult>(
                  ComputeStepBreakdown(*ctx.trace)));
        }};
  }();
  return d;
}

}  // namespace mi::analysis
