// Rules over the trace: layout conversion and data movement shares of
// execution time, and eager (one launch per kernel) execution.

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/rule_context.h"

namespace mi::analysis::diagnosis_internal {
namespace {

bool IsBasisKind(TaskKind kind) {
  return kind == TaskKind::kCompute || kind == TaskKind::kDataMovement;
}

// GE names the format and type conversions it inserts "trans_<Op>_<n>"
// (trans_TransData_0, trans_Cast_3).
bool NamedAsInsertedConversion(std::string_view name) {
  return name.starts_with("trans_");
}

bool IsLayoutConversion(const RuleContext& ctx, TaskId t) {
  std::string_view op = TaskOpType(ctx, t);
  // What the task's importer knows (CANN: TransData, TransDataRNN,
  // FormatTransfer, by op type or by GE's trans_TransData_N names), else
  // ONNX Runtime's NCHWc reorders and generic layout transforms by op type.
  if (TaskClassOf(ctx.trace, t, op) == kTaskClassLayoutConversion ||
      OpIn(op,
           {"ReorderInput", "ReorderOutput", "Reorder", "LayoutTransform"})) {
    return true;
  }
  if (!OpIn(op, {"Transpose", "TransposeD", "Cast"})) return false;
  // Transposes and casts are often the model's own: they count only when
  // the compiler added them.
  NodeId node = ctx.trace.task_node(t);
  if (node.valid()) {
    if (node.value() < ctx.links.status.size() &&
        ctx.links.status[node.value()] == NodeStatus::kInserted) {
      return true;
    }
    if (NamedAsInsertedConversion(ctx.model.str(ctx.model.node_name(node)))) {
      return true;
    }
  }
  return NamedAsInsertedConversion(ctx.trace.str(ctx.trace.task_name(t))) ||
         NamedAsInsertedConversion(ctx.trace.str(ctx.trace.task_node_name(t)));
}

bool IsDataMovement(const RuleContext& ctx, TaskId t) {
  if (ctx.trace.task_kind(t) == TaskKind::kDataMovement) return true;
  return OpIn(TaskOpType(ctx, t), {"MemcpyToHost", "MemcpyFromHost", "Memcpy",
                                   "MemcpyAsync", "TensorMove"});
}

// One finding for the tasks selected by `select` when their share of the
// basis is above the threshold: the breakdown by op type in the message,
// the longest tasks first as evidence.
template <typename Select>
void ShareRule(const RuleContext& ctx, const RuleSpec& rule,
               std::string_view what, int64_t basis_ns,
               std::string_view basis_name, Select select,
               std::vector<Finding>* out) {
  if (basis_ns <= 0) return;
  struct PerOp {
    int64_t ns = 0;
    uint64_t tasks = 0;
  };
  std::map<std::string, PerOp, std::less<>> per_op;
  std::vector<TaskId> tasks;
  int64_t total = 0;
  for (uint32_t i = 0; i < ctx.trace.task_count(); ++i) {
    TaskId t(i);
    if (!IsBasisKind(ctx.trace.task_kind(t)) ||
        IsCommunicationTask(ctx.trace, t) || !select(t)) {
      continue;
    }
    int64_t d = ctx.trace.task_duration_ns(t);
    PerOp& p = per_op[std::string(TaskOpType(ctx, t))];
    p.ns += d;
    ++p.tasks;
    total += d;
    tasks.push_back(t);
  }
  double share = static_cast<double>(total) / basis_ns;
  double threshold = ctx.options.Threshold(rule);
  if (tasks.empty() || share <= threshold) return;
  std::vector<std::pair<std::string, PerOp>> ops(per_op.begin(), per_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a.second.ns > b.second.ns;
  });
  std::string breakdown;
  for (size_t i = 0; i < ops.size() && i < 3; ++i) {
    breakdown += fmt::format("{}{} {} in {}", i ? ", " : "", ops[i].first,
                             FormatTime(ops[i].second.ns), ops[i].second.tasks);
  }
  if (ops.size() > 3) breakdown += fmt::format(", {} more", ops.size() - 3);
  Finding f;
  f.rule_id = std::string(rule.id);
  f.severity = rule.severity;
  f.message = fmt::format(
      "{} take {} of {} ({} in {} tasks: {}), above the {} threshold", what,
      FormatShare(share), basis_name, FormatTime(total), tasks.size(),
      breakdown, FormatShare(threshold));
  f.suggestion = std::string(rule.suggestion);
  f.time_ns = total;
  f.share = share;
  std::stable_sort(tasks.begin(), tasks.end(), [&](TaskId a, TaskId b) {
    return ctx.trace.task_duration_ns(a) > ctx.trace.task_duration_ns(b);
  });
  for (TaskId t : tasks) {
    NodeId n = ctx.trace.task_node(t);
    if (n.valid() && f.nodes.size() < kMaxEvidence &&
        std::find(f.nodes.begin(), f.nodes.end(), n) == f.nodes.end()) {
      f.nodes.push_back(n);
    }
  }
  if (tasks.size() > kMaxEvidence) tasks.resize(kMaxEvidence);
  f.tasks = std::move(tasks);
  out->push_back(std::move(f));
}

// Host calls that launch a whole captured graph or offloaded model.
bool IsGraphLaunch(std::string_view name) {
  for (std::string_view marker :
       {"GraphLaunch", "aclmdlExecute", "aclmdlRIExecute", "ModelExecute"}) {
    if (name.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

void LayoutConversionShare(const RuleContext& ctx, const RuleSpec& rule,
                           std::vector<Finding>* out) {
  // Conversions are compute tasks: their share of compute time, as CANN's
  // op_statistic reports it.
  ShareRule(
      ctx, rule, "Layout conversions", ctx.compute_ns, "compute time",
      [&](TaskId t) {
        return ctx.trace.task_kind(t) == TaskKind::kCompute &&
               IsLayoutConversion(ctx, t);
      },
      out);
}

void DataMovementShare(const RuleContext& ctx, const RuleSpec& rule,
                       std::vector<Finding>* out) {
  ShareRule(
      ctx, rule, "Data movement (copies)", ctx.basis_ns,
      "compute and copy time", [&](TaskId t) { return IsDataMovement(ctx, t); },
      out);
}

// A kernel is launched eagerly when a host call launched it alone: the
// importer's launch link (CANN), else the runtime call with its correlation
// id (Kineto cudaLaunchKernel). It is launch-bound when the device ran it
// for less time than the host spent launching it. Any graph launch in the
// trace means graph execution was used: the rule then stays silent.
void EagerLaunches(const RuleContext& ctx, const RuleSpec& rule,
                   std::vector<Finding>* out) {
  const Trace& trace = ctx.trace;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    TaskKind kind = trace.task_kind(t);
    if (kind == TaskKind::kRuntime || kind == TaskKind::kHostOp) {
      if (IsGraphLaunch(trace.str(trace.task_name(t)))) return;
    }
  }
  // Correlation ids are per source (each rank numbers its own).
  const CorrelationIndex runtime_calls(trace);
  std::vector<TaskId> kernels, launches;
  std::unordered_map<uint32_t, uint32_t> kernels_per_launch;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (trace.task_kind(t) != TaskKind::kCompute ||
        trace.track(trace.task_track(t)).kind != TrackKind::kDeviceStream) {
      continue;
    }
    TaskId launch = trace.task_launch(t);
    if (!launch.valid()) launch = runtime_calls.RuntimeCallOf(t);
    if (!launch.valid() || launch == t) continue;
    kernels.push_back(t);
    launches.push_back(launch);
    ++kernels_per_launch[launch.value()];
  }
  if (kernels.empty()) return;
  struct PerRun {
    uint64_t kernels = 0;  // device kernels with a known launch
    std::vector<size_t> eager;
    int64_t launch_ns = 0;
  };
  std::map<uint32_t, PerRun> runs;
  for (size_t i = 0; i < kernels.size(); ++i) {
    PerRun& r = runs[trace.task_run(kernels[i])];
    ++r.kernels;
    if (kernels_per_launch[launches[i].value()] != 1) continue;
    int64_t launch_ns = trace.task_duration_ns(launches[i]);
    if (trace.task_duration_ns(kernels[i]) >= launch_ns) continue;
    r.eager.push_back(i);
    r.launch_ns += launch_ns;
  }
  // The worst run (most launch-bound kernels; first on ties).
  const PerRun* worst = nullptr;
  uint32_t worst_run = 0;
  for (const auto& [run, r] : runs) {
    if (worst == nullptr || r.eager.size() > worst->eager.size()) {
      worst = &r;
      worst_run = run;
    }
  }
  double threshold = ctx.options.Threshold(rule);
  if (worst == nullptr ||
      static_cast<double>(worst->eager.size()) <= threshold) {
    return;
  }
  std::vector<int64_t> kernel_ns, launch_ns;
  for (size_t i : worst->eager) {
    kernel_ns.push_back(trace.task_duration_ns(kernels[i]));
    launch_ns.push_back(trace.task_duration_ns(launches[i]));
  }
  auto median = [](std::vector<int64_t> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  std::string run_name =
      worst_run < trace.runs().size()
          ? fmt::format("run {} ('{}')", worst_run,
                        RunName(trace, static_cast<uint32_t>(worst_run)))
          : fmt::format("run {}", worst_run);
  Finding f;
  f.rule_id = std::string(rule.id);
  f.severity = rule.severity;
  f.message = fmt::format(
      "In {}, {} of {} device kernels were launched one by one and ran "
      "shorter than their launch call (median kernel {}, median launch {}; "
      "{} of host launch time), with no graph launch in the trace; above "
      "the threshold of {} kernels",
      run_name, worst->eager.size(), worst->kernels,
      FormatTime(median(kernel_ns)), FormatTime(median(launch_ns)),
      FormatTime(worst->launch_ns), threshold);
  f.suggestion = std::string(rule.suggestion);
  f.time_ns = worst->launch_ns;
  f.share = static_cast<double>(worst->eager.size()) / worst->kernels;
  for (size_t i : worst->eager) {
    if (f.tasks.size() >= kMaxEvidence) break;
    f.tasks.push_back(kernels[i]);
    NodeId n = trace.task_node(kernels[i]);
    if (n.valid() && f.nodes.size() < kMaxEvidence &&
        std::find(f.nodes.begin(), f.nodes.end(), n) == f.nodes.end()) {
      f.nodes.push_back(n);
    }
  }
  out->push_back(std::move(f));
}

}  // namespace mi::analysis::diagnosis_internal
