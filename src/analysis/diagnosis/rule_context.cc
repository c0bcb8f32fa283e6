#include "analysis/diagnosis/rule_context.h"

#include <fmt/format.h>

#include "analysis/diagnosis/diagnose.h"

namespace mi::analysis::diagnosis_internal {

RuleContext MakeRuleContext(const Model& model, const Trace& trace,
                            const Links& links,
                            const DiagnosisOptions& options) {
  RuleContext ctx{model, trace, links, options};
  ctx.has_compiled = !model.RootGraphs(LayerLevel::kCompiled).empty();
  ctx.pattern_level =
      ctx.has_compiled ? LayerLevel::kCompiled : LayerLevel::kFramework;
  ctx.node_time_ns.assign(model.node_count(), 0);
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    TaskKind kind = trace.task_kind(t);
    if (kind != TaskKind::kCompute && kind != TaskKind::kDataMovement) continue;
    if (IsCommunicationTask(trace, t)) continue;
    ctx.basis_ns += trace.task_duration_ns(t);
    if (kind == TaskKind::kCompute) ctx.compute_ns += trace.task_duration_ns(t);
  }
  for (uint32_t n = 0; n < model.node_count(); ++n) {
    for (TaskId t : links.mapped_tasks.Get(NodeId(n))) {
      if (t.value() >= trace.task_count()) continue;
      TaskKind kind = trace.task_kind(t);
      if (kind == TaskKind::kCompute || kind == TaskKind::kDataMovement) {
        ctx.node_time_ns[n] += trace.task_duration_ns(t);
      }
    }
  }
  return ctx;
}

std::string_view TaskOpType(const RuleContext& ctx, TaskId t) {
  StringId op = ctx.trace.task_op_type(t);
  if (op != StringPool::kEmpty) return ctx.trace.str(op);
  NodeId node = ctx.trace.task_node(t);
  if (node.valid() && node.value() < ctx.model.node_count()) {
    return ctx.model.str(ctx.model.node_op_type(node));
  }
  return ctx.trace.str(ctx.trace.task_name(t));
}

bool OpIn(std::string_view op, std::initializer_list<std::string_view> ops) {
  for (std::string_view o : ops) {
    if (o == op) return true;
  }
  return false;
}

std::string FormatTime(int64_t ns) {
  if (ns >= 10'000'000) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.1f} us", ns / 1e3);
}

std::string FormatShare(double share) {
  return fmt::format("{:.1f}%", share * 100);
}

void AddNodeTasks(const RuleContext& ctx, Finding* finding) {
  finding->tasks.clear();
  for (NodeId n : finding->nodes) {
    for (TaskId t : ctx.links.mapped_tasks.Get(n)) {
      if (finding->tasks.size() >= kMaxEvidence) return;
      finding->tasks.push_back(t);
    }
  }
}

}  // namespace mi::analysis::diagnosis_internal
