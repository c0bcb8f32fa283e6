#include "cli/probes_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/common.h"
#include "encoders/table_printer.h"
#include "model_inspector/probes.h"
#include "model_inspector/session.h"

namespace mi::cli {
namespace {

using Json = nlohmann::ordered_json;

struct ProbesFlags {
  std::string run_dir;
  std::string run = "latest";
  std::string probe;
  std::string format = "table";
  size_t last = 10;
};

std::string Num(const std::optional<double>& v) {
  return v ? fmt::format("{:.6g}", *v) : "-";
}

std::string Count(int64_t v) { return v < 0 ? "-" : std::to_string(v); }

std::string Shape(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

void Print(encoders::Table table) {
  table.title = EscapeForTerminal(table.title);
  for (auto& row : table.rows) {
    for (std::string& cell : row) cell = EscapeForTerminal(cell);
  }
  std::printf("%s", encoders::RenderText(table).c_str());
}

// --probe: an exact probe name, else a node-search glob on the probe's
// node ("layer1/*/conv*").
bool Selected(const ProbesFlags& f, const ProbeRecord& r) {
  if (f.probe.empty()) return true;
  return r.probe == f.probe || r.node == f.probe ||
         ScopeGlobMatches(f.probe, r.node);
}

Status Run(const ProbesFlags& f) {
  if (!ProbeStore::Exists(f.run_dir)) {
    return NotFoundError(ProbeStore::DbPath(f.run_dir) +
                         ": no probe store (the Python package's Inspector "
                         "writes one: Inspector(..., run_dir=RUN_DIR))");
  }
  MI_ASSIGN_OR_RETURN(auto store, ProbeStore::Open(f.run_dir, false));
  MI_ASSIGN_OR_RETURN(std::vector<ProbeRunInfo> runs, store->Runs());
  std::optional<ProbeRunInfo> run;
  if (f.run == "latest") {
    if (!runs.empty()) run = runs.back();
  } else {
    std::optional<int64_t> id = ParseInteger<int64_t>(f.run);
    if (!id) {
      return InvalidArgumentError(
          "--run: expected a run id or 'latest', found '" + f.run + "'");
    }
    for (const ProbeRunInfo& r : runs) {
      if (r.id == *id) run = r;
    }
    if (!run) {
      std::string ids;
      for (const ProbeRunInfo& r : runs) {
        ids += (ids.empty() ? "" : ", ") + std::to_string(r.id);
      }
      return NotFoundError(ProbeStore::DbPath(f.run_dir) + ": no run " + f.run +
                           "; runs kept: " + (ids.empty() ? "none" : ids));
    }
  }
  std::vector<ProbeRecord> rows;
  std::vector<ProbeTriggerHit> hits;
  std::vector<ProbePluginMetrics> metrics;
  if (run) {
    MI_ASSIGN_OR_RETURN(std::vector<ProbeRecord> all, store->Probes(run->id));
    for (ProbeRecord& r : all) {
      if (Selected(f, r)) rows.push_back(std::move(r));
    }
    MI_ASSIGN_OR_RETURN(hits, store->TriggerHits(run->id));
    MI_ASSIGN_OR_RETURN(metrics, store->PluginMetrics(run->id));
  }
  // With --probe: each selected probe's whole-tensor statistics over the
  // last runs.
  std::vector<std::pair<std::string, std::vector<ProbeRecord>>> series;
  if (!f.probe.empty()) {
    for (const ProbeRecord& r : rows) {
      if (r.step) continue;
      MI_ASSIGN_OR_RETURN(std::vector<ProbeRecord> history,
                          store->ProbeRows(r.probe, 0, f.last));
      std::vector<ProbeRecord> whole;
      for (ProbeRecord& h : history) {
        if (!h.step) whole.push_back(std::move(h));
      }
      series.emplace_back(r.probe, std::move(whole));
    }
  }

  if (f.format == "json") {
    Json out;
    out["store"] = ProbeStore::DbPath(f.run_dir);
    out["runs"] = Json::array();
    for (const ProbeRunInfo& r : runs) {
      out["runs"].push_back(Json::parse(ProbeRunJson(r)));
    }
    out["run"] = run ? Json(run->id) : Json();
    out["probes"] = Json::array();
    for (const ProbeRecord& r : rows) {
      out["probes"].push_back(Json::parse(ProbeRecordJson(r)));
    }
    out["trigger_hits"] = Json::array();
    for (const ProbeTriggerHit& h : hits) {
      out["trigger_hits"].push_back(Json::parse(ProbeTriggerHitJson(h)));
    }
    out["plugin_metrics"] = Json::array();
    for (const ProbePluginMetrics& m : metrics) {
      out["plugin_metrics"].push_back(Json::parse(ProbePluginMetricsJson(m)));
    }
    if (!f.probe.empty()) {
      Json s = Json::object();
      for (const auto& [probe, history] : series) {
        Json list = Json::array();
        for (const ProbeRecord& h : history) {
          list.push_back(
              Json{{"run", h.run},
                   {"stats", Json::parse(TensorStatsJson(h.stats))}});
        }
        s[probe] = std::move(list);
      }
      out["series"] = std::move(s);
    }
    std::printf("%s\n", out.dump(2).c_str());
    return Status::Ok();
  }

  encoders::Table rt;
  rt.title = fmt::format("probe store {} ({} run{} kept, oldest first)",
                         ProbeStore::DbPath(f.run_dir), runs.size(),
                         runs.size() == 1 ? "" : "s");
  rt.header = {"run",    "created (UTC)", "backend", "model",
               "level",  "label",         "status",  "stopped at",
               "probes", "elapsed (ms)"};
  rt.numeric = {true,  false, false, false, false,
                false, false, false, true,  true};
  for (const ProbeRunInfo& r : runs) {
    rt.rows.push_back({std::to_string(r.id), r.created, r.backend, r.model,
                       r.level, r.label, r.status,
                       r.stopped_at.empty() ? "-" : r.stopped_at,
                       std::to_string(r.probe_rows),
                       fmt::format("{:.3f}", r.elapsed_ns / 1e6)});
  }
  Print(rt);
  if (!run) return Status::Ok();

  std::printf("\n");
  encoders::Table pt;
  pt.title = fmt::format("run {}: {} probe{}{}", run->id, rows.size(),
                         rows.size() == 1 ? "" : "s",
                         f.probe.empty() ? "" : " matching '" + f.probe + "'");
  pt.header = {"probe", "kind", "step", "dtype", "shape", "nan",    "inf",
               "zero",  "min",  "max",  "mean",  "std",   "abs max"};
  pt.numeric = {false, false, true, false, false, true, true,
                true,  true,  true, true,  true,  true};
  for (const ProbeRecord& r : rows) {
    const TensorStats& s = r.stats;
    const std::string inf = s.pos_inf < 0 || s.neg_inf < 0
                                ? "-"
                                : std::to_string(s.pos_inf + s.neg_inf);
    pt.rows.push_back({r.probe, r.kind, r.step ? std::to_string(*r.step) : "",
                       s.dtype, Shape(s.shape), Count(s.nan), inf,
                       Count(s.zero), Num(s.min), Num(s.max), Num(s.mean),
                       Num(s.std), Num(s.abs_max)});
  }
  Print(pt);

  if (!hits.empty()) {
    std::printf("\n");
    encoders::Table ht;
    ht.title = fmt::format("trigger hits of run {} (execution order)", run->id);
    ht.header = {"trigger", "probe", "node", "role", "detail"};
    ht.numeric = {false, false, false, false, false};
    ht.full_last_column = true;
    for (const ProbeTriggerHit& h : hits) {
      ht.rows.push_back({h.trigger, h.probe, h.node, h.role, h.detail});
    }
    Print(ht);
  }
  if (!metrics.empty()) {
    std::printf("\n");
    encoders::Table mt;
    mt.title = fmt::format("plugin metrics of run {}", run->id);
    mt.header = {"plugin", "probe", "metrics"};
    mt.numeric = {false, false, false};
    mt.full_last_column = true;
    for (const ProbePluginMetrics& m : metrics) {
      mt.rows.push_back(
          {m.plugin, m.probe.empty() ? "(run)" : m.probe, m.metrics_json});
    }
    Print(mt);
  }
  for (const auto& [probe, history] : series) {
    std::printf("\n");
    encoders::Table st;
    st.title = fmt::format("{} over the last {} run{}", probe, history.size(),
                           history.size() == 1 ? "" : "s");
    st.header = {"run", "nan", "inf", "zero", "min", "max", "mean", "std"};
    st.numeric = {true, true, true, true, true, true, true, true};
    for (const ProbeRecord& h : history) {
      const TensorStats& s = h.stats;
      const std::string inf = s.pos_inf < 0 || s.neg_inf < 0
                                  ? "-"
                                  : std::to_string(s.pos_inf + s.neg_inf);
      st.rows.push_back({std::to_string(h.run), Count(s.nan), inf,
                         Count(s.zero), Num(s.min), Num(s.max), Num(s.mean),
                         Num(s.std)});
    }
    Print(st);
  }
  return Status::Ok();
}

}  // namespace

void RegisterProbesCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ProbesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "probes",
      "Tensor probes of a run directory (its probes/probes.db): runs, "
      "statistics, trigger hits, plugin metrics");
  cmd->add_option("RUN_DIR", flags->run_dir,
                  "Run directory holding probes/probes.db")
      ->required();
  cmd->add_option("--run", flags->run, "Run id, or 'latest' (default)");
  cmd->add_option("--probe", flags->probe,
                  "A probe name, a node name, or a node-search glob "
                  "('layer1/*/conv*'); adds its statistics over the last runs");
  cmd->add_option("--last", flags->last,
                  "Runs in a --probe series (default 10)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--format", flags->format, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->callback([flags, exit_code] {
    Status s = Run(*flags);
    *exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace mi::cli
