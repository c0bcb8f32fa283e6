#include "analysis/profile_tables/profile_tables.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace mi::analysis {
namespace {

// A rate or size the file did not give is written null.
void FieldRate(ResultWriter& w, std::string_view key, double v) {
  w.Key(key);
  if (v < 0) {
    w.Null();
  } else {
    w.Double(v);
  }
}

void FieldKnownInt(ResultWriter& w, std::string_view key, int64_t v) {
  w.Key(key);
  if (v < 0) {
    w.Null();
  } else {
    w.Int(v);
  }
}

}  // namespace

ApiStatisticsResult ComputeApiStatistics(const Trace& trace) {
  ApiStatisticsResult out;
  std::map<std::pair<uint32_t, std::string>, size_t> level_index;
  for (const ApiStatisticRow& r : trace.profile_tables().api_statistics) {
    ApiStatisticsResult::Api api;
    api.source = r.source.valid() ? r.source.value() : 0;
    api.device = r.device;
    api.level = std::string(trace.str(r.level));
    api.name = std::string(trace.str(r.name));
    api.total_ns = r.total_ns;
    api.count = r.count;
    api.avg_ns = r.avg_ns;
    api.min_ns = r.min_ns;
    api.max_ns = r.max_ns;
    api.variance = r.variance;
    auto [it, inserted] =
        level_index.try_emplace({api.source, api.level}, out.levels.size());
    if (inserted) out.levels.push_back({api.source, api.level, 0, 0, 0});
    ApiStatisticsResult::Level& level = out.levels[it->second];
    ++level.apis;
    level.calls += api.count;
    level.total_ns += api.total_ns;
    out.calls += api.count;
    out.total_ns += api.total_ns;
    out.apis.push_back(std::move(api));
  }
  std::stable_sort(
      out.apis.begin(), out.apis.end(),
      [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  std::stable_sort(
      out.levels.begin(), out.levels.end(),
      [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

CacheRatesResult ComputeCacheRates(const Model* model, const Trace& trace) {
  CacheRatesResult out;
  std::unordered_map<std::string, size_t> op_index;
  std::vector<double> op_hit_sum, op_victim_sum;
  double hit_sum = 0, victim_sum = 0;
  for (const CacheRateRow& r : trace.profile_tables().cache_rates) {
    CacheRatesResult::Task row;
    row.source = r.source.valid() ? r.source.value() : 0;
    row.op_name = std::string(trace.str(r.op_name));
    row.stream = r.stream;
    row.task_id = r.task_id;
    row.hit_rate = r.hit_rate;
    row.victim_rate = r.victim_rate;
    if (r.task.valid() && r.task.value() < trace.task_count()) {
      row.task = r.task.value();
      ++out.joined;
      NodeId node = trace.task_node(r.task);
      if (node.valid() && model != nullptr &&
          node.value() < model->node_count()) {
        row.node = node.value();
        row.node_name = std::string(model->str(model->node_name(node)));
      }
    }
    auto [it, inserted] = op_index.try_emplace(row.op_name, out.ops.size());
    if (inserted) {
      out.ops.push_back({row.op_name, 0, 0, -1, 0, -1});
      op_hit_sum.push_back(0);
      op_victim_sum.push_back(0);
    }
    CacheRatesResult::Op& op = out.ops[it->second];
    ++op.tasks;
    if (row.hit_rate >= 0) {
      ++op.hit_measured;
      op_hit_sum[it->second] += row.hit_rate;
      ++out.hit_measured;
      hit_sum += row.hit_rate;
    }
    if (row.victim_rate >= 0) {
      ++op.victim_measured;
      op_victim_sum[it->second] += row.victim_rate;
      ++out.victim_measured;
      victim_sum += row.victim_rate;
    }
    ++out.rows;
    out.tasks.push_back(std::move(row));
  }
  for (size_t i = 0; i < out.ops.size(); ++i) {
    CacheRatesResult::Op& op = out.ops[i];
    if (op.hit_measured > 0) op.mean_hit_rate = op_hit_sum[i] / op.hit_measured;
    if (op.victim_measured > 0) {
      op.mean_victim_rate = op_victim_sum[i] / op.victim_measured;
    }
  }
  if (out.hit_measured > 0) out.mean_hit_rate = hit_sum / out.hit_measured;
  if (out.victim_measured > 0) {
    out.mean_victim_rate = victim_sum / out.victim_measured;
  }
  std::stable_sort(
      out.ops.begin(), out.ops.end(),
      [](const auto& a, const auto& b) { return a.tasks > b.tasks; });
  return out;
}

ProfiledMemoryResult ComputeProfiledMemory(const Model* model,
                                           const Trace& trace) {
  ProfiledMemoryResult out;
  const ProfileTables& tables = trace.profile_tables();
  std::unordered_map<std::string, size_t> op_index;
  const std::vector<TaskId> hosts =
      HostOpsOfBlocks(trace, tables.operator_memory);
  for (size_t b = 0; b < tables.operator_memory.size(); ++b) {
    const OperatorMemoryRow& r = tables.operator_memory[b];
    std::string name(trace.str(r.name));
    auto [it, inserted] = op_index.try_emplace(name, out.operators.size());
    if (inserted) out.operators.push_back({name, 0, 0, 0, 0, 0, {}});
    ProfiledMemoryResult::Operator& op = out.operators[it->second];
    ++op.blocks;
    op.total_bytes += r.size_bytes;
    op.largest_bytes = std::max(op.largest_bytes, r.size_bytes);
    if (r.release_ns >= 0) ++op.released;
    TaskId host = hosts[b];
    if (host.valid()) {
      ++op.joined;
      NodeId node = trace.task_node(host);
      if (node.valid() && model != nullptr &&
          node.value() < model->node_count() && op.nodes.size() < 5) {
        std::string node_name(model->str(model->node_name(node)));
        if (std::find(op.nodes.begin(), op.nodes.end(), node_name) ==
            op.nodes.end()) {
          op.nodes.push_back(std::move(node_name));
        }
      }
    }
    ++out.operator_blocks;
    out.operator_total_bytes += r.size_bytes;
  }
  std::stable_sort(out.operators.begin(), out.operators.end(),
                   [](const auto& a, const auto& b) {
                     return a.total_bytes > b.total_bytes;
                   });

  std::map<std::tuple<uint32_t, int32_t, std::string>, size_t> module_index;
  for (const AllocatorSample& s : trace.allocator_samples()) {
    if (!s.per_module) continue;
    std::string module(trace.str(s.component));
    uint32_t source = s.source.valid() ? s.source.value() : 0;
    auto [it, inserted] = module_index.try_emplace({source, s.device, module},
                                                   out.modules.size());
    if (inserted) out.modules.push_back({source, s.device, module, 0, -1, -1});
    ProfiledMemoryResult::Module& m = out.modules[it->second];
    ++m.samples;
    ++out.module_samples;
    m.peak_reserved_bytes =
        std::max(m.peak_reserved_bytes, s.total_reserved_bytes);
    if (s.total_reserved_bytes >= 0)
      m.last_reserved_bytes = s.total_reserved_bytes;
  }
  std::stable_sort(out.modules.begin(), out.modules.end(),
                   [](const auto& a, const auto& b) {
                     return a.peak_reserved_bytes > b.peak_reserved_bytes;
                   });

  std::map<std::tuple<uint32_t, std::string, int64_t>,
           std::vector<const StaticOpMemoryRow*>>
      graphs;
  std::map<std::tuple<uint32_t, std::string, int64_t>, int64_t> totals;
  for (const StaticOpMemoryRow& r : tables.static_op_memory) {
    std::tuple key{r.source.valid() ? r.source.value() : 0,
                   std::string(trace.str(r.model_name)), r.graph_id};
    if (IsStaticTotalRow(trace, r)) {
      totals[key] = r.size_bytes;
      graphs[key];
      continue;
    }
    graphs[key].push_back(&r);
    out.static_op_memory.push_back(
        {std::string(trace.str(r.op_name)), std::get<1>(key), r.graph_id,
         r.node_index_start, r.node_index_end, r.size_bytes});
    ++out.static_ops;
    out.static_total_bytes += r.size_bytes;
  }
  for (const auto& [key, rows] : graphs) {
    ProfiledMemoryResult::StaticGraph g;
    g.source = std::get<0>(key);
    g.model_name = std::get<1>(key);
    g.graph_id = std::get<2>(key);
    g.ops = rows.size();
    for (const StaticOpMemoryRow* r : rows) g.op_bytes += r->size_bytes;
    g.peak_bytes = StaticMemoryPeak(rows);
    auto total = totals.find(key);
    if (total != totals.end()) g.total_bytes = total->second;
    out.static_peak_bytes = std::max(out.static_peak_bytes, g.peak_bytes);
    out.static_graphs.push_back(std::move(g));
  }
  std::stable_sort(
      out.static_op_memory.begin(), out.static_op_memory.end(),
      [](const auto& a, const auto& b) { return a.size_bytes > b.size_bytes; });
  return out;
}

void ApiStatisticsResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.FieldUInt("calls", calls).FieldInt("total_ns", total_ns);
  w.Key("levels").BeginArray();
  for (const Level& l : levels) {
    w.BeginObject();
    w.FieldUInt("source", l.source).Field("level", l.level);
    w.FieldUInt("apis", l.apis).FieldUInt("calls", l.calls);
    w.FieldInt("total_ns", l.total_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("apis").BeginArray();
  for (const Api& a : apis) {
    w.BeginObject();
    w.FieldUInt("source", a.source);
    w.Key("device");
    if (a.device < 0) {
      w.Null();
    } else {
      w.Int(a.device);
    }
    w.Field("level", a.level).Field("name", a.name);
    w.FieldInt("total_ns", a.total_ns).FieldUInt("count", a.count);
    FieldKnownInt(w, "avg_ns", a.avg_ns);
    FieldKnownInt(w, "min_ns", a.min_ns);
    FieldKnownInt(w, "max_ns", a.max_ns);
    FieldRate(w, "variance_us2", a.variance);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void CacheRatesResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.FieldUInt("rows", rows).FieldUInt("joined", joined);
  w.FieldUInt("hit_measured", hit_measured);
  FieldRate(w, "mean_hit_share", mean_hit_rate);
  w.FieldUInt("victim_measured", victim_measured);
  FieldRate(w, "mean_victim_share", mean_victim_rate);
  w.Key("ops").BeginArray();
  for (const Op& op : ops) {
    w.BeginObject();
    w.Field("op_name", op.op_name).FieldUInt("tasks", op.tasks);
    FieldRate(w, "mean_hit_share", op.mean_hit_rate);
    FieldRate(w, "mean_victim_share", op.mean_victim_rate);
    w.EndObject();
  }
  w.EndArray();
  w.Key("tasks").BeginArray();
  for (const Task& t : tasks) {
    w.BeginObject();
    w.FieldUInt("source", t.source).Field("op_name", t.op_name);
    FieldKnownInt(w, "stream", t.stream);
    FieldKnownInt(w, "task_id", t.task_id);
    FieldKnownInt(w, "task", t.task);
    FieldKnownInt(w, "node", t.node);
    w.Field("node_name", t.node_name);
    FieldRate(w, "hit_share", t.hit_rate);
    FieldRate(w, "victim_share", t.victim_rate);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void ProfiledMemoryResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.FieldUInt("operator_blocks", operator_blocks);
  w.FieldInt("operator_total_bytes", operator_total_bytes);
  w.FieldUInt("module_samples", module_samples);
  w.FieldUInt("static_ops", static_ops);
  w.FieldInt("static_total_bytes", static_total_bytes);
  w.FieldInt("static_peak_bytes", static_peak_bytes);
  w.Key("operators").BeginArray();
  for (const Operator& op : operators) {
    w.BeginObject();
    w.Field("name", op.name).FieldUInt("blocks", op.blocks);
    w.FieldInt("total_bytes", op.total_bytes);
    w.FieldInt("largest_bytes", op.largest_bytes);
    w.FieldUInt("released", op.released).FieldUInt("joined", op.joined);
    w.Key("nodes").BeginArray();
    for (const std::string& n : op.nodes) w.String(n);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("modules").BeginArray();
  for (const Module& m : modules) {
    w.BeginObject();
    w.FieldUInt("source", m.source);
    w.Key("device");
    if (m.device < 0) {
      w.Null();
    } else {
      w.Int(m.device);
    }
    w.Field("module", m.module).FieldUInt("samples", m.samples);
    FieldKnownInt(w, "peak_reserved_bytes", m.peak_reserved_bytes);
    FieldKnownInt(w, "last_reserved_bytes", m.last_reserved_bytes);
    w.EndObject();
  }
  w.EndArray();
  w.Key("static_graphs").BeginArray();
  for (const StaticGraph& g : static_graphs) {
    w.BeginObject();
    w.FieldUInt("source", g.source).Field("model_name", g.model_name);
    FieldKnownInt(w, "graph_id", g.graph_id);
    w.FieldUInt("ops", g.ops).FieldInt("op_bytes", g.op_bytes);
    w.FieldInt("peak_bytes", g.peak_bytes);
    FieldKnownInt(w, "total_bytes", g.total_bytes);
    w.EndObject();
  }
  w.EndArray();
  w.Key("static_op_memory").BeginArray();
  for (const StaticOp& s : static_op_memory) {
    w.BeginObject();
    w.Field("op_name", s.op_name).Field("model_name", s.model_name);
    FieldKnownInt(w, "graph_id", s.graph_id);
    FieldKnownInt(w, "node_index_start", s.node_index_start);
    FieldKnownInt(w, "node_index_end", s.node_index_end);
    w.FieldInt("size_bytes", s.size_bytes);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

const AnalysisDescriptor& ApiStatisticsAnalysis() {
  static const AnalysisDescriptor d{
      .id = "api_statistics",
      .title = "CANN API statistics",
      .summary =
          "CANN API time per API as the profiler summed it "
          "(api_statistic.csv of msprof and torch_npu): total, calls, "
          "average, min, max, largest total first, with totals per level "
          "(acl, runtime, node, model, hccl); empty without the file",
      .needs = kNeedsNothing,
      .parameters = {},
      .in_export = false,
      .fields =
          {
              {"calls", "calls over every row"},
              {"total_ns", "Time(us) over every row"},
              {"levels", "per source and level, largest total first"},
              {"levels[].source", "source index (trace.json sources[])"},
              {"levels[].level", "acl, runtime, node, model, hccl, ..."},
              {"levels[].apis", "rows of the level"},
              {"levels[].calls", "Count over the level"},
              {"levels[].total_ns", "Time(us) over the level"},
              {"apis", "one row per API, largest total first"},
              {"apis[].source", "source index"},
              {"apis[].device", "msprof Device_id; null for host rows"},
              {"apis[].level", "the row's Level"},
              {"apis[].name", "API Name"},
              {"apis[].total_ns", "Time(us)"},
              {"apis[].count", "Count"},
              {"apis[].avg_ns", "Avg(us); null when absent"},
              {"apis[].min_ns", "Min(us); null when absent"},
              {"apis[].max_ns", "Max(us); null when absent"},
              {"apis[].variance_us2", "Variance as written (us^2)"},
          },
      .reference = {},
      .run = [](const AnalysisContext& ctx, const ParsedParams&)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        return std::unique_ptr<AnalysisResult>(
            std::make_unique<ApiStatisticsResult>(
                ctx.trace == nullptr ? ApiStatisticsResult()
                                     : ComputeApiStatistics(*ctx.trace)));
      },
  };
  return d;
}

const AnalysisDescriptor& CacheRatesAnalysis() {
  static const AnalysisDescriptor d{
      .id = "cache_hit_rates",
      .title = "L2 cache hit rates",
      .summary =
          "the L2 cache hit and victim rate of each device task "
          "(l2_cache.csv), joined to the task (by op name and stream, in "
          "launch order) and the node it ran, with the mean per op name and "
          "over the run; empty without the file",
      .needs = kNeedsNothing,
      .parameters = {},
      .in_export = false,
      .fields =
          {
              {"rows", "rows of l2_cache.csv"},
              {"joined", "rows joined to a task of the run"},
              {"hit_measured", "rows with a Hit Rate (not N/A)"},
              {"mean_hit_share", "mean Hit Rate over them; null when none"},
              {"victim_measured", "rows with a Victim Rate"},
              {"mean_victim_share", "mean Victim Rate; null when none"},
              {"ops", "per op name, most tasks first"},
              {"ops[].op_name", "Op Name"},
              {"ops[].tasks", "rows with that name"},
              {"ops[].mean_hit_share", "mean Hit Rate; null when none"},
              {"ops[].mean_victim_share", "mean Victim Rate; null when none"},
              {"tasks", "one row per task, file order"},
              {"tasks[].source", "source index"},
              {"tasks[].op_name", "Op Name"},
              {"tasks[].stream", "Stream Id; null when absent"},
              {"tasks[].task_id", "the profiler's Task Id"},
              {"tasks[].task", "the joined task (trace.json); null: none"},
              {"tasks[].node", "the node that task ran; null: none"},
              {"tasks[].node_name", "its name; empty when none"},
              {"tasks[].hit_share", "Hit Rate (0..1); null for N/A"},
              {"tasks[].victim_share", "Victim Rate (0..1); null for N/A"},
          },
      .reference = {},
      .run = [](const AnalysisContext& ctx, const ParsedParams&)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        return std::unique_ptr<AnalysisResult>(
            std::make_unique<CacheRatesResult>(
                ctx.trace == nullptr
                    ? CacheRatesResult()
                    : ComputeCacheRates(ctx.model, *ctx.trace)));
      },
  };
  return d;
}

const AnalysisDescriptor& ProfiledMemoryAnalysis() {
  static const AnalysisDescriptor d{
      .id = "profiled_memory",
      .title = "Profiled memory (operators, modules, static)",
      .summary =
          "memory the CANN profiler measured: each operator's allocations "
          "(operator_memory.csv, per operator, each block joined to the host "
          "op that allocated it), what each CANN module reserved "
          "(npu_module_mem.csv: peak and last per module) and GE's static "
          "memory per op (static_op_mem.csv, with its peak over the node "
          "index); empty without the files",
      .needs = kNeedsNothing,
      .parameters = {},
      .in_export = false,
      .fields =
          {
              {"operator_blocks", "rows of operator_memory.csv"},
              {"operator_total_bytes", "Size over them"},
              {"module_samples", "rows of npu_module_mem.csv"},
              {"static_ops", "rows of static_op_mem.csv other than TOTAL"},
              {"static_total_bytes", "Size(KB) over them"},
              {"static_peak_bytes",
               "largest sum of the sizes alive at one node index of one "
               "graph (end 4294967295: to the graph's last index)"},
              {"static_graphs", "per source, model and graph"},
              {"static_graphs[].source", "source index"},
              {"static_graphs[].model_name", "Model Name"},
              {"static_graphs[].graph_id", "Graph ID"},
              {"static_graphs[].ops", "rows other than TOTAL"},
              {"static_graphs[].op_bytes", "their sizes summed"},
              {"static_graphs[].peak_bytes",
               "most of them alive at one node index"},
              {"static_graphs[].total_bytes",
               "the TOTAL row: the static memory GE planned for the graph "
               "(memory reuse included); null when absent"},
              {"operators", "per operator name, largest total first"},
              {"operators[].name", "Name (\"aten::empty_strided\")"},
              {"operators[].blocks", "rows"},
              {"operators[].total_bytes", "Size over the rows"},
              {"operators[].largest_bytes", "the largest block"},
              {"operators[].released", "blocks with a Release Time"},
              {"operators[].joined",
               "blocks whose allocation time lies in a host op of the same "
               "name"},
              {"operators[].nodes", "nodes those host ops ran (at most 5)"},
              {"modules", "per source, device and module, largest peak first"},
              {"modules[].source", "source index"},
              {"modules[].device", "device; null when unknown"},
              {"modules[].module", "Component (SLOG, HCCL, APP, ...)"},
              {"modules[].samples", "rows"},
              {"modules[].peak_reserved_bytes", "largest Total Reserved"},
              {"modules[].last_reserved_bytes", "the last row's"},
              {"static_op_memory", "one row per op, largest first"},
              {"static_op_memory[].op_name", "Op Name"},
              {"static_op_memory[].model_name", "Model Name"},
              {"static_op_memory[].graph_id", "Graph ID"},
              {"static_op_memory[].node_index_start", "Node Index Start"},
              {"static_op_memory[].node_index_end",
               "Node Index End (4294967295: to the end of the graph)"},
              {"static_op_memory[].size_bytes", "Size(KB) in bytes"},
          },
      .reference = {},
      .run = [](const AnalysisContext& ctx, const ParsedParams&)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        return std::unique_ptr<AnalysisResult>(
            std::make_unique<ProfiledMemoryResult>(
                ctx.trace == nullptr
                    ? ProfiledMemoryResult()
                    : ComputeProfiledMemory(ctx.model, *ctx.trace)));
      },
  };
  return d;
}

}  // namespace mi::analysis
