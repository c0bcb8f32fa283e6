// Node queries behind the UI server's /nodes and /search endpoints
// (docs/reference/http-api.md): one node's details with its links, and
// name / op type / attribute search over one graph level. Read-only over
// the session's model, trace and links, so concurrent calls are safe.

#include "session/node_queries.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "base/json_writer.h"
#include "base/strings.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/session.h"
#include "session/onnx_op_docs.h"
#include "session/scope_glob.h"
#include "session/session_impl.h"
#include "trace/trace.h"

namespace mi {

std::vector<std::pair<std::string, GraphId>> StageLevels(
    const Session::Impl& run) {
  const Model& m = run.model;
  std::vector<GraphId> stages;
  for (LayerLevel level : {LayerLevel::kFramework, LayerLevel::kCompiled}) {
    for (GraphId g : m.RootGraphs(level)) {
      std::string_view producer = m.str(m.graph(g).producer);
      if (producer.size() > 3 && producer.substr(0, 3) == "GE ") {
        stages.push_back(g);
      }
    }
  }
  std::vector<std::pair<std::string, GraphId>> out;
  if (stages.size() < 2) return out;
  // Dump file names start with GE's global index: name order is dump order.
  std::stable_sort(stages.begin(), stages.end(), [&](GraphId a, GraphId b) {
    return m.str(m.graph(a).source_file) < m.str(m.graph(b).source_file);
  });
  std::vector<std::string> names;
  for (GraphId g : stages) {
    names.push_back("stage:" +
                    std::string(m.str(m.graph(g).producer).substr(3)));
  }
  for (size_t i = 0; i < stages.size(); ++i) {
    bool shared = std::count(names.begin(), names.end(), names[i]) > 1;
    std::string name = names[i];
    if (shared) name += "@" + std::string(m.str(m.graph(stages[i]).name));
    out.emplace_back(std::move(name), stages[i]);
  }
  return out;
}

StatusOr<GraphId> LevelRoot(const Session::Impl& run, std::string_view level) {
  GraphId root;
  if (level == "framework") {
    root = run.framework;
  } else if (level == "compiled") {
    root = run.compiled;
  } else if (level.substr(0, 6) == "stage:") {
    for (const auto& [name, g] : StageLevels(run)) {
      if (name == level) return g;
    }
    return NotFoundError("no GE stage level '" + std::string(level) +
                         "' in this run");
  } else {
    return NotFoundError("no level '" + std::string(level) +
                         "'; levels are 'framework', 'compiled' and, for GE "
                         "graph dumps, 'stage:<Stage>'");
  }
  if (!root.valid()) {
    return NotFoundError("no " + std::string(level) +
                         " graph among this run's inputs");
  }
  return root;
}

namespace {

constexpr size_t kMaxTasks = 100;
constexpr size_t kMaxConsumers = 100;
constexpr size_t kMaxQueryBytes = 512;

bool OnLevel(const Model& m, GraphId root, NodeId n) {
  return m.RootOf(m.node_graph(n)) == root;
}

// The path a glob is matched on: the node's name when it is a path
// ("/layer1/layer1.0/conv1/Conv"), else the name under its scope's path.
std::string_view NodePath(const Model& m, NodeId n, std::string* buf) {
  std::string_view name = m.str(m.node_name(n));
  ScopeId scope = m.node_scope(n);
  if (name.find('/') != std::string_view::npos || !scope.valid()) return name;
  std::string_view scope_path = m.str(m.scope_path(scope));
  if (scope_path.empty()) return name;
  buf->assign(scope_path);
  if (buf->back() != '/') buf->push_back('/');
  buf->append(name);
  return *buf;
}

// How a search query was read, said with the results ("read_as").
std::string ReadAs(std::string_view mode, std::string_view query,
                   bool automatic) {
  if (mode == "glob") {
    std::string out = "glob";
    if (automatic) out += " (it has '*' or '?')";
    out += !query.empty() && query.front() == '/'
               ? " anchored at the root ('/' first), matched on whole scope "
                 "paths"
               : ", matched on scope-path suffixes";
    return out + ": '*' within a segment, '**' across, ignoring case";
  }
  if (mode == "text") {
    return automatic ? "substring of node names, ignoring case (no '*' or "
                       "'?': not a glob)"
                     : "substring of node names, ignoring case";
  }
  if (mode == "regex") {
    return "regex (ECMAScript, case-sensitive), searched anywhere in node "
           "names";
  }
  if (mode == "op") return "op type equal to the query, ignoring case";
  return query.find('=') != std::string_view::npos
             ? "attribute name=value, ignoring case"
             : "attribute name: nodes that have it, ignoring case";
}

std::string AttributeText(const Model& m, const Attribute& a) {
  switch (a.kind) {
    case AttributeKind::kInt:
      return std::to_string(a.int_value);
    case AttributeKind::kFloat:
      return fmt::format("{}", a.float_value);
    default:
      return std::string(m.str(a.text));
  }
}

// "python3 (GPU 0) / stream 7": the details panel's track line; with
// several sources loaded the full name, "rank 1 · GPU 0 · stream 7".
std::string TaskTrackName(const Trace& trace, TrackId id) {
  if (trace.sources_with_tracks() > 1) return TrackName(trace, id);
  return TrackProcessName(trace, id) + " / " + TrackShortName(trace, id);
}

NodeValueInfo ValueInfo(const Model& m, ValueId v, bool consumers) {
  NodeValueInfo out;
  if (!v.valid()) {
    // An omitted optional input keeps its position.
    out.present = false;
    return out;
  }
  out.name = std::string(m.str(m.value_name(v)));
  int32_t dtype = m.value_dtype(v);
  if (dtype != 0) out.dtype = std::string(DataTypeName(dtype));
  if (m.value_has_shape(v)) {
    out.shape.emplace();
    auto dims = m.value_dims(v);
    auto names = m.value_dim_names(v);
    for (size_t i = 0; i < dims.size(); ++i) {
      NodeValueInfo::Dim d;
      if (dims[i] >= 0) {
        d.size = dims[i];
      } else if (names[i] != StringPool::kEmpty) {
        d.symbol = std::string(m.str(names[i]));
      }
      out.shape->push_back(std::move(d));
    }
  }
  out.type = m.FormatValueType(v);
  out.layout = std::string(m.str(m.value_layout(v)));
  out.origin_layout = std::string(m.str(m.value_origin_layout(v)));
  out.origin_shape = std::string(m.str(m.value_origin_shape(v)));
  NodeId producer = m.value_producer(v);
  if (producer.valid()) out.producer = producer.value();
  uint8_t flags = m.value_flags(v);
  out.graph_input = (flags & kValueGraphInput) != 0;
  out.graph_output = (flags & kValueGraphOutput) != 0;
  out.initializer = (flags & kValueInitializer) != 0;
  out.missing = !producer.valid() && !out.graph_input && !out.initializer;
  if (consumers) {
    auto list = m.value_consumers(v);
    out.consumers.emplace();
    for (size_t i = 0; i < list.size() && i < kMaxConsumers; ++i) {
      out.consumers->push_back(list[i].value());
    }
  }
  return out;
}

// The ONNX operator documentation of a node: only for graphs that came
// with ONNX opset imports (an ONNX model), at the opset the graph imports
// for the node's domain.
std::optional<NodeDetailsResult::OpDoc> OpDocOf(const Model& m, NodeId n) {
  const GraphInfo& g = m.graph(m.RootOf(m.node_graph(n)));
  std::string_view domain = m.str(m.node_domain(n));
  auto is_default = [](std::string_view d) {
    return d.empty() || d == "ai.onnx";
  };
  int64_t opset = 0;
  bool onnx = g.opset > 0 || !g.opset_imports.empty();
  for (const auto& [d, version] : g.opset_imports) {
    std::string_view name = m.str(d);
    if (name == domain || (is_default(name) && is_default(domain))) {
      opset = version;
    }
  }
  if (opset == 0 && is_default(domain)) opset = g.opset;
  std::optional<OnnxOpDoc> doc;
  if (onnx) doc = FindOnnxOpDoc(m.str(m.node_op_type(n)), domain, opset);
  if (!doc) return std::nullopt;
  return NodeDetailsResult::OpDoc{doc->domain, doc->since_version,
                                  doc->summary};
}

NodeRefInfo NodeRef(const Model& m, NodeId n) {
  return NodeRefInfo{n.value(), std::string(m.str(m.node_name(n))),
                     std::string(m.str(m.node_op_type(n))),
                     std::string(LayerLevelName(m.node_level(n)))};
}

}  // namespace

void WriteNodeRef(JsonWriter& w, const Model& m, NodeId n) {
  w.BeginObject();
  w.FieldInt("id", n.value());
  w.Field("name", m.str(m.node_name(n)));
  w.Field("op_type", m.str(m.node_op_type(n)));
  w.Field("level", LayerLevelName(m.node_level(n)));
  w.EndObject();
}

std::vector<std::string> Session::Levels() const {
  std::vector<std::string> out;
  if (impl_->framework.valid()) out.emplace_back("framework");
  if (impl_->compiled.valid()) out.emplace_back("compiled");
  for (auto& [name, graph] : StageLevels(*impl_)) out.push_back(name);
  return out;
}

namespace {

// The CANN profiler's figures for node n (NodeDetailsResult's l2_* and
// measured_memory_*): its tasks' L2 cache rows, GE's static memory for an
// op of its name, else the blocks its host ops allocated.
void AddProfiledFigures(const Trace& trace, const Model& m, NodeId n,
                        std::span<const TaskId> tasks, NodeDetailsResult* out) {
  const ProfileTables& tables = trace.profile_tables();
  if (tables.cache_rates.empty() && tables.static_op_memory.empty() &&
      tables.operator_memory.empty()) {
    return;
  }
  std::unordered_set<uint32_t> own;
  for (TaskId t : tasks) own.insert(t.value());
  double hit = 0, victim = 0;
  int64_t hits = 0, victims = 0;
  for (const CacheRateRow& r : tables.cache_rates) {
    if (!r.task.valid() || own.count(r.task.value()) == 0) continue;
    ++out->l2_tasks;
    if (r.hit_rate >= 0) {
      hit += r.hit_rate;
      ++hits;
    }
    if (r.victim_rate >= 0) {
      victim += r.victim_rate;
      ++victims;
    }
  }
  if (hits > 0) out->l2_hit_rate = hit / static_cast<double>(hits);
  if (victims > 0) out->l2_victim_rate = victim / static_cast<double>(victims);
  std::string_view name = m.str(m.node_name(n));
  int64_t static_bytes = -1;
  for (const StaticOpMemoryRow& r : tables.static_op_memory) {
    if (trace.str(r.op_name) == name && !IsStaticTotalRow(trace, r)) {
      static_bytes = std::max<int64_t>(static_bytes, 0) + r.size_bytes;
    }
  }
  if (static_bytes >= 0) {
    out->measured_memory_bytes = static_bytes;
    out->measured_memory_source = "static_op_mem";
    return;
  }
  int64_t block_bytes = -1;
  const std::vector<TaskId> hosts =
      HostOpsOfBlocks(trace, tables.operator_memory);
  for (size_t b = 0; b < hosts.size(); ++b) {
    if (hosts[b].valid() && trace.task_node(hosts[b]) == n) {
      block_bytes = std::max<int64_t>(block_bytes, 0) +
                    tables.operator_memory[b].size_bytes;
    }
  }
  if (block_bytes >= 0) {
    out->measured_memory_bytes = block_bytes;
    out->measured_memory_source = "operator_memory";
  }
}

}  // namespace

StatusOr<NodeDetailsResult> Session::NodeDetails(std::string_view level,
                                                 uint32_t node) const {
  const Session::Impl& run = *impl_;
  const Model& m = run.model;
  const Links& links = run.links;
  const Trace& trace = run.trace;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(run, level));
  if (node >= m.node_count()) {
    return NotFoundError(
        fmt::format("no node {} on the {} level", node, std::string(level)));
  }
  NodeId n(node);
  if (!OnLevel(m, root, n)) {
    return NotFoundError(fmt::format("node {} is not on the {} level", node,
                                     std::string(level)));
  }
  NodeDetailsResult out;
  out.id = node;
  out.name = std::string(m.str(m.node_name(n)));
  out.op_type = std::string(m.str(m.node_op_type(n)));
  out.domain = std::string(m.str(m.node_domain(n)));
  out.doc = OpDocOf(m, n);
  out.level = std::string(LayerLevelName(m.node_level(n)));
  out.graph_id = m.node_graph(n).value();
  ScopeId scope = m.node_scope(n);
  if (scope.valid()) out.scope = std::string(m.str(m.scope_path(scope)));
  for (const Attribute& a : m.node_attributes(n)) {
    NodeAttributeInfo info;
    info.name = std::string(m.str(a.name));
    info.type = std::string(AttributeKindName(a.kind));
    if (a.kind == AttributeKind::kInt) {
      info.int_value = a.int_value;
    } else if (a.kind == AttributeKind::kFloat) {
      info.float_value = a.float_value;
    } else {
      info.text = std::string(m.str(a.text));
    }
    out.attributes.push_back(std::move(info));
  }
  for (ValueId v : m.node_inputs(n)) {
    out.inputs.push_back(ValueInfo(m, v, /*consumers=*/false));
  }
  for (ValueId v : m.node_outputs(n)) {
    out.outputs.push_back(ValueInfo(m, v, /*consumers=*/true));
  }
  NodeStatus status = n.value() < links.status.size() ? links.status[n.value()]
                                                      : NodeStatus::kUnknown;
  out.status = std::string(NodeStatusName(status));
  MatchKind match = n.value() < links.match_kind.size()
                        ? links.match_kind[n.value()]
                        : MatchKind::kNone;
  out.match_kind = std::string(MatchKindName(match));
  for (NodeId f : links.fused_from.Get(n))
    out.fused_from.push_back(NodeRef(m, f));
  auto into = links.fused_into.Get(n);
  if (!into.empty()) out.fused_into = NodeRef(m, into.front());
  out.fused_into_count = static_cast<int64_t>(into.size());
  auto tasks = links.mapped_tasks.Get(n);
  for (TaskId t : tasks) out.task_total_ns += trace.task_duration_ns(t);
  out.task_count = static_cast<int64_t>(tasks.size());
  for (size_t i = 0; i < tasks.size() && i < kMaxTasks; ++i) {
    TaskId t = tasks[i];
    out.tasks.push_back(
        {t.value(), std::string(trace.str(trace.task_name(t))),
         std::string(TaskKindName(trace.task_kind(t))), trace.task_start_ns(t),
         trace.task_duration_ns(t), trace.task_track(t).value(),
         TaskTrackName(trace, trace.task_track(t)), trace.task_run(t)});
  }
  AddProfiledFigures(trace, m, n, tasks, &out);
  AddNodeProbes(run, level, &out);
  return out;
}

StatusOr<std::string> Session::SearchJson(std::string_view level,
                                          std::string_view query,
                                          std::string_view mode,
                                          size_t limit) const {
  const Session::Impl& run = *impl_;
  const Model& m = run.model;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(run, level));
  if (query.empty()) return InvalidArgumentError("q: empty search");
  if (query.size() > kMaxQueryBytes) {
    return InvalidArgumentError(
        fmt::format("q: {} bytes; at most {}", query.size(), kMaxQueryBytes));
  }
  // "auto": a glob when the query has a wildcard, else a substring.
  const bool automatic = mode == "auto";
  if (automatic) {
    mode =
        query.find_first_of("*?") != std::string_view::npos ? "glob" : "text";
  }
  std::regex re;
  std::string attr_name;
  std::string attr_value;
  bool attr_has_value = false;
  if (mode == "regex") {
    // Polynomial (Thompson) matching in libstdc++: a pattern from the
    // network cannot make the search backtrack exponentially.
    auto flags = std::regex::ECMAScript;
#if defined(__GLIBCXX__)
    flags |= std::regex_constants::__polynomial;
#endif
    try {
      re = std::regex(query.begin(), query.end(), flags);
    } catch (const std::regex_error& e) {
      return InvalidArgumentError(
          fmt::format("q: regex does not compile: {}", e.what()));
    }
  } else if (mode == "attr") {
    size_t eq = query.find('=');
    attr_name = std::string(query.substr(0, eq));
    if (eq != std::string_view::npos) {
      attr_has_value = true;
      attr_value = std::string(query.substr(eq + 1));
    }
  } else if (mode != "text" && mode != "glob" && mode != "op") {
    return InvalidArgumentError(
        "mode: expected auto, text, glob, regex, op or attr, found '" +
        std::string(mode) + "'");
  }
  std::vector<uint8_t> scratch;
  std::string path_buf;
  std::vector<NodeId> matches;
  size_t total = 0;
  for (uint32_t i = 0; i < m.node_count(); ++i) {
    NodeId n(i);
    if (!OnLevel(m, root, n)) continue;
    std::string_view name = m.str(m.node_name(n));
    bool hit = false;
    if (mode == "text") {
      hit = ContainsIgnoringCase(name, query);
    } else if (mode == "glob") {
      // On the node's own path or on its scope's: "layer1/*/conv*" finds
      // the node of scope "/layer1/layer1.0/conv1" named ".../conv1/Conv".
      hit = ScopeGlobMatch(query, NodePath(m, n, &path_buf), &scratch);
      ScopeId scope = m.node_scope(n);
      if (!hit && scope.valid()) {
        hit = ScopeGlobMatch(query, m.str(m.scope_path(scope)), &scratch);
      }
    } else if (mode == "regex") {
      try {
        hit = std::regex_search(name.begin(), name.end(), re);
      } catch (const std::regex_error& e) {
        return InvalidArgumentError(
            fmt::format("q: regex failed on '{}': {}", name, e.what()));
      }
    } else if (mode == "op") {
      hit = EqualsIgnoringCase(m.str(m.node_op_type(n)), query);
    } else {
      for (const Attribute& a : m.node_attributes(n)) {
        if (!EqualsIgnoringCase(m.str(a.name), attr_name)) continue;
        if (!attr_has_value ||
            EqualsIgnoringCase(AttributeText(m, a), attr_value)) {
          hit = true;
          break;
        }
      }
    }
    if (!hit) continue;
    ++total;
    if (matches.size() < limit) matches.push_back(n);
  }
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("matches").BeginArray();
  for (NodeId n : matches) {
    w.BeginObject();
    w.FieldInt("id", n.value());
    w.Field("name", m.str(m.node_name(n)));
    w.Field("op_type", m.str(m.node_op_type(n)));
    ScopeId scope = m.node_scope(n);
    w.Field("scope", scope.valid() ? m.str(m.scope_path(scope)) : "");
    w.EndObject();
  }
  w.EndArray();
  w.FieldInt("total", static_cast<int64_t>(total));
  w.FieldBool("truncated", total > matches.size());
  w.Field("mode", mode);
  w.Field("read_as", ReadAs(mode, query, automatic));
  w.EndObject();
  return out;
}

}  // namespace mi
