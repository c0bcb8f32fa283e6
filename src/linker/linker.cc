#include "linker/linker.h"

#include <string>
#include <unordered_map>

#include "linker/fusion_matcher.h"
#include "linker/host_op_alignment.h"

namespace mi {

std::string_view MatchKindName(MatchKind kind) {
  switch (kind) {
    case MatchKind::kNone:
      return "none";
    case MatchKind::kSameName:
      return "same_name";
    case MatchKind::kDerivedName:
      return "derived_name";
    case MatchKind::kStructural:
      return "structural";
    case MatchKind::kDeclared:
      return "declared";
    case MatchKind::kInserted:
      return "inserted";
    case MatchKind::kUnexplained:
      return "unexplained";
  }
  return "none";
}

}  // namespace mi

namespace mi::linker {
namespace {

// Kineto: device work and runtime calls name their host op by External id;
// device work names its runtime call by correlation id. Gives each launched
// task its launching host op (op type = the host op's name) and that op's
// run, since GPU work of step N often starts after step N's CPU range.
// Both ids are numbered by each profiler process from its own counter, so
// they are matched within the task's source only: two ranks' External id 7
// are two different ops.
void LinkLaunches(Trace* trace) {
  const size_t sources = trace->source_count();
  std::vector<std::unordered_map<int64_t, TaskId>> host_op_by_external_id(
      sources);
  std::vector<std::unordered_map<int64_t, TaskId>> runtime_by_correlation(
      sources);
  bool any = false;
  for (uint32_t i = 0; i < trace->task_count(); ++i) {
    TaskId t(i);
    TaskKind kind = trace->task_kind(t);
    const uint32_t source = trace->task_source(t).value();
    if (kind == TaskKind::kHostOp && trace->task_external_id(t) >= 0) {
      // Nested ops share no ids; keep the first (outermost) on collisions.
      host_op_by_external_id[source].emplace(trace->task_external_id(t), t);
      any = true;
    } else if (kind == TaskKind::kRuntime && trace->task_correlation(t) >= 0) {
      runtime_by_correlation[source].emplace(trace->task_correlation(t), t);
      any = true;
    }
  }
  if (!any) return;
  for (uint32_t i = 0; i < trace->task_count(); ++i) {
    TaskId t(i);
    TaskKind kind = trace->task_kind(t);
    if (!IsExecutionKind(kind) && kind != TaskKind::kRuntime) continue;
    const uint32_t source = trace->task_source(t).value();
    int64_t external_id = trace->task_external_id(t);
    if (external_id < 0 && trace->task_correlation(t) >= 0 &&
        kind != TaskKind::kRuntime) {
      auto rt = runtime_by_correlation[source].find(trace->task_correlation(t));
      if (rt != runtime_by_correlation[source].end()) {
        external_id = trace->task_external_id(rt->second);
      }
    }
    if (external_id < 0) continue;
    auto op = host_op_by_external_id[source].find(external_id);
    if (op == host_op_by_external_id[source].end()) continue;
    trace->SetTaskParent(t, op->second);
    // A sync or wait keeps its own kind: the op that issued it is its
    // parent, never its op type (an Event Sync is not aten::mm's work).
    if (trace->task_op_type(t) == StringPool::kEmpty &&
        !IsSyncTask(*trace, t)) {
      trace->SetTaskOpType(t, trace->task_name(op->second));
    }
    trace->SetTaskRun(t, trace->task_run(op->second));
  }
}

}  // namespace

namespace {

constexpr std::string_view kOriginNamesAttr = "_datadump_original_op_names";

bool HasOriginAttr(const Model& model, NodeId n) {
  for (const Attribute& a : model.node_attributes(n)) {
    if (model.str(a.name) == kOriginNamesAttr) return true;
  }
  return false;
}

// GE (and ATC JSON) compiled graphs say which framework ops each node came
// from; then those declarations are the links, not a structural match.
void CountUnlinked(const Trace& trace, TaskId t, bool have_graph,
                   bool ambiguous, Links* links) {
  ++links->unlinked_tasks;
  if (!have_graph) {
    ++links->unlinked_no_graph;
  } else if (trace.task_node_name(t) == StringPool::kEmpty) {
    ++links->unlinked_without_node_name;
  } else if (ambiguous) {
    ++links->unlinked_ambiguous_node;
  } else {
    ++links->unlinked_unknown_node;
  }
}

// The node a name designates among the nodes that carry it: the only one,
// or, when several share the name, the only one of the given op type (the
// task's own op type, e.g. ONNX Runtime's op_name). Invalid when none does;
// *ambiguous then says whether several did.
NodeId PickNamedNode(const Model& model, const std::vector<NodeId>& nodes,
                     StringId op_type, bool* ambiguous) {
  *ambiguous = false;
  if (nodes.size() == 1) return nodes[0];
  if (nodes.empty()) return NodeId::Invalid();
  NodeId pick;
  int of_type = 0;
  if (op_type != StringPool::kEmpty) {
    std::string_view type = model.str(op_type);
    for (NodeId n : nodes) {
      if (model.str(model.node_op_type(n)) == type) {
        pick = n;
        ++of_type;
      }
    }
  }
  if (of_type == 1) return pick;
  *ambiguous = true;
  return NodeId::Invalid();
}

bool DeclaresOrigins(const Model& model, GraphId compiled) {
  for (NodeId n : model.graph_nodes(compiled)) {
    if (!model.node_origin_names(n).empty()) return true;
  }
  return false;
}

void LinkDeclaredOrigins(const Model& model, GraphId framework,
                         GraphId compiled, Links* links,
                         std::vector<std::pair<NodeId, NodeId>>* fused_pairs,
                         DiagnosticSink* diagnostics) {
  std::string file(model.str(model.graph(compiled).source_file));
  std::vector<bool> covered(model.node_count(), false);
  for (NodeId c : model.graph_nodes(compiled)) {
    auto names = model.node_origin_names(c);
    MatchKind kind = MatchKind::kUnexplained;
    if (names.empty()) {
      // An empty declaration marks a node GE inserted (TransData, Cast).
      kind = HasOriginAttr(model, c) ? MatchKind::kInserted
                                     : MatchKind::kUnexplained;
    }
    for (StringId name : names) {
      // A declared name is taken as it is; one that several framework
      // nodes share (duplicate_node_name) is not guessed.
      std::vector<NodeId> named = model.FindNodes(framework, model.str(name));
      NodeId f = named.size() == 1 ? named[0] : NodeId::Invalid();
      if (!f.valid()) {
        diagnostics->Report(
            DiagnosticCode::kOriginNameUnresolved, {file},
            "compiled node '" + std::string(model.str(model.node_name(c))) +
                "' declares original op '" + std::string(model.str(name)) +
                (named.empty() ? "', which the framework graph does not have"
                               : "', a name " + std::to_string(named.size()) +
                                     " framework nodes share; none is linked"));
        continue;
      }
      kind = MatchKind::kDeclared;
      fused_pairs->emplace_back(c, f);
      covered[f.value()] = true;
      if (model.node_name(f) == model.node_name(c)) {
        links->is_anchor[f.value()] = true;
      }
    }
    links->match_kind[c.value()] = kind;
    if (kind == MatchKind::kUnexplained) ++links->unexplained_compiled_nodes;
  }
  for (NodeId f : model.graph_nodes(framework)) {
    if (!covered[f.value()]) links->eliminated.push_back(f);
  }
}

}  // namespace

Links Link(const Model& model, Trace* trace, const LinkInputs& inputs,
           DiagnosticSink* diagnostics) {
  Links links;
  size_t node_count = model.node_count();
  links.status.assign(node_count, NodeStatus::kUnknown);
  links.match_kind.assign(node_count, MatchKind::kNone);
  links.is_anchor.assign(node_count, false);

  // 1. Framework <-> compiled.
  std::vector<std::pair<NodeId, NodeId>> fused_pairs;
  std::vector<std::pair<NodeId, NodeId>> reverse_pairs;
  if (inputs.framework.valid() && inputs.compiled.valid() &&
      DeclaresOrigins(model, inputs.compiled)) {
    LinkDeclaredOrigins(model, inputs.framework, inputs.compiled, &links,
                        &fused_pairs, diagnostics);
    for (const auto& [c, f] : fused_pairs) reverse_pairs.emplace_back(f, c);
    links.has_compiled_link = true;
  } else if (inputs.framework.valid() && inputs.compiled.valid()) {
    FusionMatch match =
        MatchCompiledToFramework(model, inputs.framework, inputs.compiled);
    auto compiled_nodes = model.graph_nodes(inputs.compiled);
    for (size_t i = 0; i < compiled_nodes.size(); ++i) {
      links.match_kind[compiled_nodes[i].value()] = match.kinds[i];
      if (match.kinds[i] == MatchKind::kUnexplained) {
        NodeId c = compiled_nodes[i];
        diagnostics->Report(
            DiagnosticCode::kCompiledNodeUnexplained,
            {std::string(model.str(model.graph(inputs.compiled).source_file))},
            "compiled node '" + std::string(model.str(model.node_name(c))) +
                "' (" + std::string(model.str(model.node_op_type(c))) +
                ") covers no framework node");
      }
    }
    fused_pairs = std::move(match.fused_from);
    for (const auto& [c, f] : fused_pairs) reverse_pairs.emplace_back(f, c);
    for (NodeId f : match.anchors) links.is_anchor[f.value()] = true;
    links.folded = std::move(match.folded);
    links.eliminated = std::move(match.eliminated);
    links.unexplained_compiled_nodes = match.unexplained;
    links.has_compiled_link = true;
  }
  links.fused_from.Build(node_count, fused_pairs);
  links.fused_into.Build(node_count, reverse_pairs);

  // 2. Tasks -> nodes (by the node name the trace gives), preferring the
  // compiled graph: that is what the runtime executed.
  LinkLaunches(trace);
  GraphId task_graph =
      inputs.compiled.valid() ? inputs.compiled : inputs.framework;
  std::vector<std::pair<NodeId, TaskId>> node_tasks;
  // Per node name: the nodes that carry it (several when names repeat).
  std::unordered_map<uint32_t, std::vector<NodeId>> nodes_by_name_cache;
  for (uint32_t i = 0; i < trace->task_count(); ++i) {
    TaskId t(i);
    StringId name = trace->task_node_name(t);
    bool execution = IsExecutionKind(trace->task_kind(t));
    bool ambiguous = false;
    if (name != StringPool::kEmpty && task_graph.valid()) {
      auto cached = nodes_by_name_cache.find(name.value());
      if (cached == nodes_by_name_cache.end()) {
        cached = nodes_by_name_cache
                     .emplace(name.value(),
                              model.FindNodes(task_graph, trace->str(name)))
                     .first;
        if (cached->second.empty()) {
          diagnostics->Report(
              DiagnosticCode::kTaskNodeNameUnknown, {},
              "task '" + std::string(trace->str(trace->task_name(t))) +
                  "' names node '" + std::string(trace->str(name)) +
                  "', which the loaded graph lacks");
        }
      }
      NodeId node = PickNamedNode(model, cached->second, trace->task_op_type(t),
                                  &ambiguous);
      if (node.valid()) {
        trace->SetTaskNode(t, node);
        node_tasks.emplace_back(node, t);
        // Framework nodes a compiled node replaced ran inside its tasks.
        for (NodeId f : links.fused_from.Get(node)) {
          node_tasks.emplace_back(f, t);
        }
        if (execution) ++links.linked_tasks;
        continue;
      }
    }
    if (execution) {
      CountUnlinked(*trace, t, task_graph.valid(), ambiguous, &links);
    }
  }
  // A PyTorch trace names no graph node: align its ops with an ONNX export
  // of the same model when one is loaded (and nothing linked by name).
  if (links.linked_tasks == 0 && inputs.framework.valid() &&
      !inputs.compiled.valid()) {
    links.aligned_host_ops =
        AlignHostOpsToGraph(model, trace, inputs.framework, &node_tasks);
    if (links.aligned_host_ops > 0) {
      links.linked_tasks = 0;
      links.unlinked_tasks = 0;
      links.unlinked_without_node_name = 0;
      links.unlinked_unknown_node = 0;
      links.unlinked_ambiguous_node = 0;
      links.unlinked_no_graph = 0;
      for (uint32_t i = 0; i < trace->task_count(); ++i) {
        TaskId t(i);
        if (!IsExecutionKind(trace->task_kind(t))) continue;
        if (trace->task_node(t).valid()) {
          ++links.linked_tasks;
        } else {
          CountUnlinked(*trace, t, true, false, &links);
        }
      }
    }
  }
  if (links.unlinked_tasks > 0 && task_graph.valid()) {
    diagnostics->Count(DiagnosticCode::kTaskUnlinked, links.unlinked_tasks);
  }
  links.mapped_tasks.Build(node_count, node_tasks);

  // 3. Status. Without a trace only the structural facts are known.
  bool have_trace = trace->task_count() > 0 && task_graph.valid();
  for (uint32_t i = 0; i < node_count; ++i) {
    NodeId n(i);
    bool has_tasks = false;
    for (TaskId t : links.mapped_tasks.Get(n)) {
      if (trace->task_node(t) == n) {
        has_tasks = true;
        break;
      }
    }
    MatchKind kind = links.match_kind[i];
    NodeStatus status = NodeStatus::kUnknown;
    if (kind == MatchKind::kInserted) {
      status = NodeStatus::kInserted;
    } else if (model.node_level(n) == LayerLevel::kFramework &&
               links.has_compiled_link) {
      auto into = links.fused_into.Get(n);
      if (into.empty()) {
        status = have_trace ? NodeStatus::kNotExecuted : NodeStatus::kUnknown;
      } else {
        // The node whose name the compiled node keeps (or the only one it
        // covers) ran as itself; the others ran fused inside it.
        NodeId c = into[0];
        bool is_anchor =
            links.is_anchor[i] || links.fused_from.Get(c).size() == 1;
        if (is_anchor) {
          bool ran = !have_trace || !links.mapped_tasks.Get(n).empty();
          status = have_trace ? (ran ? NodeStatus::kExecuted
                                     : NodeStatus::kNotExecuted)
                              : NodeStatus::kUnknown;
        } else {
          status = NodeStatus::kFused;
        }
      }
    } else if (have_trace &&
               model.RootOf(model.node_graph(n)) == model.RootOf(task_graph)) {
      status = has_tasks ? NodeStatus::kExecuted : NodeStatus::kNotExecuted;
    }
    links.status[i] = status;
  }
  return links;
}

}  // namespace mi::linker
