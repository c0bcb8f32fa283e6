// GET /api/runs/{run}/probes/compare?level=L&base=ID&run=ID: two probe runs
// of a run directory's store compared per node (docs/reference/http-api.md
// "Probe compare"), for the UI's colour by compare metric and its "first
// divergent" mark: CompareRuns (model_inspector/compare.h: msprobe's
// metrics and accuracy rule, tensors when both runs kept them, else the
// statistics) on run `run` (default the newest) against run `base`
// (default the one before it), each pair's node mapped to its id at level L.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "model_inspector/compare.h"
#include "model_inspector/probes.h"
#include "model_inspector/session.h"
#include "server/probe_rerun.h"

namespace mi::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<std::string_view> Param(const HttpRequest& r,
                                      std::string_view key) {
  for (const auto& [k, v] : r.params) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

bool ParseRunId(std::string_view text, int64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

void Put(json* out, const char* key, std::optional<double> v) {
  if (v && std::isfinite(*v)) (*out)[key] = *v;
}

}  // namespace

HttpResponse ProbeCompareEndpoint(const ServedRun& run,
                                  const HttpRequest& request) {
  if (run.session == nullptr)
    return Api::Error(404, "the run could not be opened");
  std::string level =
      std::string(Param(request, "level").value_or("framework"));
  std::string dir;
  std::error_code ec;
  for (const std::string& p : run.paths) {
    if (fs::is_directory(p, ec) && ProbeStore::Exists(p)) {
      dir = p;
      break;
    }
  }
  auto answer = [](json out) {
    HttpResponse r;
    r.content_type = "application/json; charset=utf-8";
    r.body = out.dump();
    Api::AddSecurityHeaders(&r, /*cacheable=*/false);
    return r;
  };
  json out = json::object();
  out["level"] = level;
  out["metrics"] = json::array();
  out["nodes"] = json::object();
  out["first_divergent"] = nullptr;
  out["first_divergent_node"] = nullptr;
  if (dir.empty()) {
    out["reason"] = "the run directory holds no probe store";
    return answer(out);
  }
  int64_t newest = 0, base = 0;
  {
    auto store = ProbeStore::Open(dir, /*create=*/false);
    if (!store.ok()) return Api::Error(500, store.status().message());
    auto runs = (*store)->Runs();
    if (!runs.ok()) return Api::Error(500, runs.status().message());
    if (auto r = Param(request, "run")) {
      if (!ParseRunId(*r, &newest)) {
        return Api::Error(
            400, fmt::format("run: expected a probe run id, found '{}'", *r));
      }
    } else if (!runs->empty()) {
      newest = runs->back().id;
    }
    if (auto b = Param(request, "base")) {
      if (!ParseRunId(*b, &base)) {
        return Api::Error(
            400, fmt::format("base: expected a probe run id, found '{}'", *b));
      }
    } else {
      // The run kept before `newest`.
      for (const ProbeRunInfo& r : *runs) {
        if (r.id < newest) base = r.id;
      }
    }
    if (newest == 0 || base == 0) {
      out["reason"] = "the store keeps fewer than two runs: nothing to compare";
      return answer(out);
    }
  }
  out["run"] = newest;
  out["base"] = base;
  CompareRunsOptions options;
  options.a = dir;
  options.b = dir;
  options.run_a = base;
  options.run_b = newest;
  options.compare.match = "name";
  StatusOr<CompareReport> report = CompareRuns(options);
  if (!report.ok()) {
    int code = report.status().code() == StatusCode::kNotFound ? 404 : 422;
    return Api::Error(code, report.status().message());
  }
  std::vector<std::string> metrics;
  auto metric = [&](const char* name) {
    if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) {
      metrics.push_back(name);
    }
  };
  std::map<std::string, uint32_t> ids;
  auto id_of = [&](const std::string& name) -> std::optional<uint32_t> {
    auto it = ids.find(name);
    if (it != ids.end()) return it->second;
    auto id = run.session->FindNodeId(level, name);
    if (!id.ok()) return std::nullopt;
    ids[name] = *id;
    return *id;
  };
  for (const CompareEntry& e : report->entries) {
    // A node stands for its first output over the whole tensor, as in the
    // probes of the level.
    if (e.kind != "output" || e.step || e.verdict == "not_compared") continue;
    if (!e.probe_b.ends_with(":0")) continue;
    std::optional<uint32_t> id = id_of(e.node_b.empty() ? e.node_a : e.node_b);
    if (!id) continue;
    std::string key = std::to_string(*id);
    if (out["nodes"].contains(key)) continue;
    json m = json::object();
    m["fail"] = e.verdict == "fail" ? 1 : 0;
    metric("fail");
    if (e.metrics) {
      const TensorMetrics& t = *e.metrics;
      Put(&m, "cosine", t.cosine);
      Put(&m, "max_abs_err", t.max_abs_err);
      Put(&m, "max_rel_err", t.max_rel_err);
      Put(&m, "mean_rel_err", t.mean_rel_err);
      Put(&m, "rmse", t.rmse);
      Put(&m, "one_thousandth_ratio", t.one_thousandth_ratio);
      Put(&m, "relative_euclidean", t.relative_euclidean);
      for (const char* k :
           {"cosine", "max_abs_err", "max_rel_err", "mean_rel_err", "rmse",
            "one_thousandth_ratio", "relative_euclidean"}) {
        if (m.contains(k)) metric(k);
      }
    } else if (e.stats) {
      const StatsMetrics& s = *e.stats;
      Put(&m, "stats_max_rel_err", s.max_rel_err);
      Put(&m, "stats_min_rel_err", s.min_rel_err);
      Put(&m, "stats_mean_rel_err", s.mean_rel_err);
      Put(&m, "stats_l2_rel_err", s.l2_rel_err);
      for (const char* k : {"stats_max_rel_err", "stats_min_rel_err",
                            "stats_mean_rel_err", "stats_l2_rel_err"}) {
        if (m.contains(k)) metric(k);
      }
    }
    m["mode"] = e.mode;
    out["nodes"][key] = std::move(m);
  }
  out["metrics"] = metrics;
  out["compared"] = report->compared;
  out["failed"] = report->failed;
  out["pass"] = report->pass;
  if (!report->first_divergent_node.empty()) {
    out["first_divergent_node"] = report->first_divergent_node;
    if (auto id = id_of(report->first_divergent_node))
      out["first_divergent"] = *id;
  }
  return answer(out);
}

}  // namespace mi::server
