// Tensor probes as the Session reads them: a run directory's probe store
// (include/model_inspector/probes.h) joined to the nodes of a level by
// name: a probe belongs to the nodes of the level whose name is the
// probe's node name (the ONNX node name the Inspector probed, which ONNX
// Runtime's optimized graph keeps for the nodes it did not fuse). JSON
// shapes: docs/reference/http-api.md "Probes".

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "model_inspector/probes.h"
#include "model_inspector/session.h"
#include "session/node_queries.h"
#include "session/scope_glob.h"
#include "session/session_impl.h"

namespace mi {
namespace {

using Json = nlohmann::ordered_json;

// The latest finished probe run of `level`, else of any level.
struct ProbeView {
  std::unique_ptr<ProbeStore> store;
  std::optional<ProbeRunInfo> run;
};

StatusOr<ProbeView> OpenProbes(const Session::Impl& run,
                               std::string_view level) {
  ProbeView view;
  if (run.probe_run_dir.empty()) return view;
  MI_ASSIGN_OR_RETURN(view.store,
                      ProbeStore::Open(run.probe_run_dir, /*create=*/false));
  MI_ASSIGN_OR_RETURN(view.run, view.store->LatestRun(level));
  if (!view.run) {
    MI_ASSIGN_OR_RETURN(view.run, view.store->LatestRun());
  }
  return view;
}

Json StatsJson(const TensorStats& stats) {
  return Json::parse(TensorStatsJson(stats));
}

// Whole-tensor rows (no time step) first by output before inputs and
// gradients, then by index: the row that stands for the node.
int KindRank(std::string_view kind) {
  if (kind == "output") return 0;
  if (kind == "input") return 1;
  return 2;
}

bool Before(const ProbeRecord& a, const ProbeRecord& b) {
  const int ka = KindRank(a.kind);
  const int kb = KindRank(b.kind);
  if (ka != kb) return ka < kb;
  return a.index < b.index;
}

// Plugin metrics of a run by probe: {plugin: metrics}.
StatusOr<std::map<std::string, Json>> PluginsByProbe(const ProbeStore& store,
                                                     int64_t run) {
  std::map<std::string, Json> out;
  MI_ASSIGN_OR_RETURN(std::vector<ProbePluginMetrics> metrics,
                      store.PluginMetrics(run));
  for (const ProbePluginMetrics& m : metrics) {
    Json parsed = Json::parse(m.metrics_json, nullptr, false);
    if (parsed.is_discarded()) continue;
    Json& slot = out[m.probe];
    if (slot.is_null()) slot = Json::object();
    slot[m.plugin] = std::move(parsed);
  }
  return out;
}

Json RunsJson(const std::vector<ProbeRunInfo>& runs) {
  Json out = Json::array();
  for (const ProbeRunInfo& r : runs)
    out.push_back(Json::parse(ProbeRunJson(r)));
  return out;
}

}  // namespace

bool ScopeGlobMatches(std::string_view pattern, std::string_view path) {
  std::vector<uint8_t> scratch;
  return ScopeGlobMatch(pattern, path, &scratch);
}

const std::string& Session::ProbeRunDirectory() const {
  return impl_->probe_run_dir;
}

StatusOr<std::string> Session::ProbesJson(std::string_view level) const {
  const Impl& run = *impl_;
  const Model& m = run.model;
  MI_ASSIGN_OR_RETURN(GraphId root, LevelRoot(run, level));
  MI_ASSIGN_OR_RETURN(ProbeView view, OpenProbes(run, level));
  Json out;
  out["store"] =
      view.store ? Json(ProbeStore::DbPath(run.probe_run_dir)) : Json();
  out["level"] = std::string(level);
  std::vector<ProbeRunInfo> runs;
  if (view.store) {
    MI_ASSIGN_OR_RETURN(runs, view.store->Runs());
  }
  out["runs"] = RunsJson(runs);
  out["run"] = view.run ? Json(view.run->id) : Json();
  out["stats_names"] = TensorStatsNames();
  Json nodes = Json::object();
  Json unmatched = Json::array();
  Json hits = Json::array();
  if (view.run) {
    MI_ASSIGN_OR_RETURN(std::vector<ProbeRecord> rows,
                        view.store->Probes(view.run->id));
    MI_ASSIGN_OR_RETURN(auto plugins,
                        PluginsByProbe(*view.store, view.run->id));
    // The row that stands for each node: by node name, whole tensors only.
    std::map<std::string, const ProbeRecord*> by_node;
    for (const ProbeRecord& r : rows) {
      if (r.step) continue;
      const ProbeRecord*& best = by_node[r.node];
      if (best == nullptr || Before(r, *best)) best = &r;
    }
    std::map<uint32_t, Json> found;  // by node id, for a stable order
    for (const auto& [name, r] : by_node) {
      std::vector<NodeId> ids = m.FindNodes(root, name);
      if (ids.empty()) {
        unmatched.push_back(r->probe);
        continue;
      }
      for (NodeId id : ids) {
        Json entry;
        entry["probe"] = r->probe;
        entry["kind"] = r->kind;
        entry["index"] = r->index;
        entry["stats"] = StatsJson(r->stats);
        auto p = plugins.find(r->probe);
        entry["plugin"] = p != plugins.end() ? p->second : Json::object();
        found[id.value()] = std::move(entry);
      }
    }
    for (auto& [id, entry] : found)
      nodes[std::to_string(id)] = std::move(entry);
    MI_ASSIGN_OR_RETURN(std::vector<ProbeTriggerHit> trigger_hits,
                        view.store->TriggerHits(view.run->id));
    for (const ProbeTriggerHit& h : trigger_hits) {
      Json hit = Json::parse(ProbeTriggerHitJson(h));
      std::vector<NodeId> ids = m.FindNodes(root, h.node);
      hit["node_id"] = ids.empty() ? Json() : Json(ids.front().value());
      hits.push_back(std::move(hit));
    }
  }
  out["nodes"] = std::move(nodes);
  out["unmatched"] = std::move(unmatched);
  out["trigger_hits"] = std::move(hits);
  return out.dump();
}

StatusOr<std::string> Session::NodeProbesJson(std::string_view level,
                                              uint32_t node,
                                              size_t last_runs) const {
  const Impl& run = *impl_;
  const Model& m = run.model;
  MI_ASSIGN_OR_RETURN(GraphId root, LevelRoot(run, level));
  if (node >= m.node_count() || m.RootOf(m.node_graph(NodeId(node))) != root) {
    return NotFoundError("node " + std::to_string(node) + " is not on the " +
                         std::string(level) + " level");
  }
  const std::string name(m.str(m.node_name(NodeId(node))));
  MI_ASSIGN_OR_RETURN(ProbeView view, OpenProbes(run, level));
  Json out;
  out["node"] = node;
  out["name"] = name;
  out["level"] = std::string(level);
  out["run"] = view.run ? Json(view.run->id) : Json();
  Json probes = Json::array();
  if (view.run) {
    MI_ASSIGN_OR_RETURN(std::vector<ProbeRecord> rows,
                        view.store->Probes(view.run->id));
    MI_ASSIGN_OR_RETURN(auto plugins,
                        PluginsByProbe(*view.store, view.run->id));
    std::vector<const ProbeRecord*> whole;
    for (const ProbeRecord& r : rows) {
      if (r.node == name && !r.step) whole.push_back(&r);
    }
    std::stable_sort(whole.begin(), whole.end(),
                     [](const ProbeRecord* a, const ProbeRecord* b) {
                       return Before(*a, *b);
                     });
    for (const ProbeRecord* r : whole) {
      Json p;
      p["probe"] = r->probe;
      p["kind"] = r->kind;
      p["index"] = r->index;
      p["stats"] = StatsJson(r->stats);
      Json extra = Json::parse(r->extra_json, nullptr, false);
      p["extra"] = extra.is_discarded() ? Json::object() : extra;
      p["array"] =
          r->array_file.empty() ? Json() : Json("probes/" + r->array_file);
      p["sampled"] = r->sampled;
      Json series = Json::array();
      MI_ASSIGN_OR_RETURN(std::vector<ProbeRecord> history,
                          view.store->ProbeRows(r->probe, 0, last_runs));
      for (const ProbeRecord& h : history) {
        if (h.step) continue;
        series.push_back(Json{{"run", h.run}, {"stats", StatsJson(h.stats)}});
      }
      p["series"] = std::move(series);
      Json steps = Json::array();
      for (const ProbeRecord& s : rows) {
        if (s.probe == r->probe && s.step) {
          steps.push_back(
              Json{{"step", *s.step}, {"stats", StatsJson(s.stats)}});
        }
      }
      p["steps"] = std::move(steps);
      auto plugin = plugins.find(r->probe);
      p["plugin"] = plugin != plugins.end() ? plugin->second : Json::object();
      probes.push_back(std::move(p));
    }
  }
  out["probes"] = std::move(probes);
  return out.dump();
}

void AddNodeProbes(const Session::Impl& run, std::string_view level,
                   NodeDetailsResult* out) {
  if (run.probe_run_dir.empty()) return;
  StatusOr<ProbeView> view = OpenProbes(run, level);
  // A store that cannot be read does not hide the node's details; the
  // probe queries report its error.
  if (!view.ok()) return;
  out->probes_run = view->run ? view->run->id : 0;
  if (!view->run) return;
  StatusOr<std::vector<ProbeRecord>> rows = view->store->Probes(view->run->id);
  if (!rows.ok()) return;
  for (const ProbeRecord& r : *rows) {
    if (r.node != out->name || r.step) continue;
    out->probes.push_back({r.probe, r.kind, r.index, r.stats});
  }
  std::stable_sort(out->probes.begin(), out->probes.end(),
                   [](const NodeProbeInfo& a, const NodeProbeInfo& b) {
                     const int ka = KindRank(a.kind);
                     const int kb = KindRank(b.kind);
                     return ka != kb ? ka < kb : a.index < b.index;
                   });
}

}  // namespace mi
