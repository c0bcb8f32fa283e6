#pragma once

// Internal to diagnosis/: what every rule reads (the run and derived
// per-node times), the rule functions and small graph helpers.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/finding.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis::diagnosis_internal {

struct RuleContext {
  const Model& model;
  const Trace& trace;
  const Links& links;
  const DiagnosisOptions& options;
  // Pattern rules look at the compiled graph when one is loaded (what the
  // device ran), else at the framework graph.
  LayerLevel pattern_level = LayerLevel::kFramework;
  bool has_compiled = false;
  // Per node: total duration of the compute and data-movement tasks
  // linked to it.
  std::vector<int64_t> node_time_ns;
  // Bases of the share rules (0 when the trace has no such tasks, e.g.
  // host-only traces), both without collective communication (HCCL / NCCL
  // all-reduce and friends, which wait on other ranks): the summed duration
  // of compute tasks, and of compute plus data-movement tasks.
  int64_t compute_ns = 0;
  int64_t basis_ns = 0;
};

RuleContext MakeRuleContext(const Model& model, const Trace& trace,
                            const Links& links,
                            const DiagnosisOptions& options);

// Each rule appends its findings (usually one aggregated finding) when it
// fires. `rule` is its table row (threshold via options.Threshold(rule)).
using RuleFunction = void (*)(const RuleContext&, const RuleSpec&,
                              std::vector<Finding>*);
void LayoutConversionShare(const RuleContext&, const RuleSpec&,
                           std::vector<Finding>*);
void DataMovementShare(const RuleContext&, const RuleSpec&,
                       std::vector<Finding>*);
void EagerLaunches(const RuleContext&, const RuleSpec&, std::vector<Finding>*);
void UnfusedConvBnActivation(const RuleContext&, const RuleSpec&,
                             std::vector<Finding>*);
void UnfusedMatMulAdd(const RuleContext&, const RuleSpec&,
                      std::vector<Finding>*);
void UnfusedLayerNorm(const RuleContext&, const RuleSpec&,
                      std::vector<Finding>*);
void UnfusedGelu(const RuleContext&, const RuleSpec&, std::vector<Finding>*);
void RedundantTransposeReshape(const RuleContext&, const RuleSpec&,
                               std::vector<Finding>*);
void DynamicInputShape(const RuleContext&, const RuleSpec&,
                       std::vector<Finding>*);

// ---- helpers ----

// The op type a task ran: the source's op type, else its node's, else the
// task name.
std::string_view TaskOpType(const RuleContext& ctx, TaskId t);

bool OpIn(std::string_view op, std::initializer_list<std::string_view> ops);

// "12.3 us" / "4.56 ms": times in messages.
std::string FormatTime(int64_t ns);
// "23.4%"
std::string FormatShare(double share);

// Sets `finding->tasks` to the tasks linked to `finding->nodes`, in node
// order, at most kMaxEvidence.
void AddNodeTasks(const RuleContext& ctx, Finding* finding);

}  // namespace mi::analysis::diagnosis_internal
