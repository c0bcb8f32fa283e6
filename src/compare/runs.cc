// Probe sets from run directories (the probe store's finished runs) and
// the compare of two of them, with the levels' graphs when B's model is a
// compiled form of A's.

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model_inspector/compare.h"
#include "model_inspector/probes.h"
#include "model_inspector/session.h"

namespace mi {
namespace {

// The optimized graph `model_inspector.runner --level compiled` and
// `capture` keep in a run directory.
constexpr const char* kCompiledModel = "ort/model.optimized.onnx";

bool IsFile(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec);
}

}  // namespace

StatusOr<ProbeSet> ReadProbeSet(const std::string& run_dir, int64_t run) {
  if (!ProbeStore::Exists(run_dir)) {
    return NotFoundError(fmt::format("{}: no probe store (expected {})",
                                     run_dir, ProbeStore::DbPath(run_dir)));
  }
  MI_ASSIGN_OR_RETURN(auto store, ProbeStore::Open(run_dir, /*create=*/false));
  MI_ASSIGN_OR_RETURN(std::vector<ProbeRunInfo> runs, store->Runs());
  const ProbeRunInfo* info = nullptr;
  for (const ProbeRunInfo& r : runs) {
    if (run > 0 ? r.id == run : (info == nullptr || r.id > info->id)) {
      info = &r;
    }
  }
  if (info == nullptr) {
    std::string ids;
    for (const ProbeRunInfo& r : runs) {
      ids += (ids.empty() ? "" : ", ") + std::to_string(r.id);
    }
    return NotFoundError(
        run > 0 ? fmt::format("{}: the probe store has no run {} (runs: {})",
                              run_dir, run, ids.empty() ? "none" : ids)
                : fmt::format("{}: the probe store holds no finished run",
                              run_dir));
  }
  ProbeSet set;
  set.label = run_dir;
  set.level = info->level;
  set.model = info->model;
  if (!set.model.empty() && !IsFile(set.model)) {
    std::string inside = (std::filesystem::path(run_dir) / set.model).string();
    if (IsFile(inside)) set.model = inside;
  }
  std::string kept = (std::filesystem::path(run_dir) / kCompiledModel).string();
  if (info->level == "compiled" && IsFile(kept)) set.model = kept;
  MI_ASSIGN_OR_RETURN(std::vector<ProbeRecord> rows, store->Probes(info->id));
  for (ProbeRecord& r : rows) {
    ProbeTensor t;
    t.probe = std::move(r.probe);
    t.node = std::move(r.node);
    t.kind = std::move(r.kind);
    t.index = static_cast<int32_t>(r.index);
    t.step = r.step;
    t.order = r.order;
    t.dtype = r.stats.dtype;
    t.shape = r.stats.shape;
    t.has_stats = true;
    t.stats.min = r.stats.min;
    t.stats.max = r.stats.max;
    t.stats.mean = r.stats.mean;
    t.stats.l2 = r.stats.l2;
    if (r.stats.nan >= 0 && r.stats.pos_inf >= 0 && r.stats.neg_inf >= 0) {
      t.stats.has_counts = true;
      t.stats.nan = static_cast<uint64_t>(r.stats.nan);
      t.stats.pos_inf = static_cast<uint64_t>(r.stats.pos_inf);
      t.stats.neg_inf = static_cast<uint64_t>(r.stats.neg_inf);
    }
    if (!r.array_file.empty()) {
      t.array_path =
          (std::filesystem::path(store->probes_dir()) / r.array_file).string();
      if (r.sampled) {
        t.array_note = fmt::format("sampled, stride {}", r.sample_stride);
      }
    }
    set.probes.push_back(std::move(t));
  }
  return set;
}

bool IsCompiledForm(const std::vector<LevelNode>& compiled) {
  for (const LevelNode& n : compiled) {
    if (!n.fused_from.empty() &&
        !(n.fused_from.size() == 1 && n.fused_from[0] == n.name)) {
      return true;
    }
  }
  return false;
}

StatusOr<CompareReport> CompareRuns(const CompareRunsOptions& options) {
  MI_ASSIGN_OR_RETURN(ProbeSet a, ReadProbeSet(options.a, options.run_a));
  MI_ASSIGN_OR_RETURN(ProbeSet b, ReadProbeSet(options.b, options.run_b));
  const std::string& match = options.compare.match;
  if (match != "name" && IsFile(a.model) && IsFile(b.model) &&
      a.model != b.model) {
    OpenOptions open;
    open.framework_model = a.model;
    open.compiled_model = b.model;
    StatusOr<std::unique_ptr<Session>> session = Session::Open(open);
    if (session.ok()) {
      MI_ASSIGN_OR_RETURN(LevelGraphs graphs, ReadLevelGraphs(**session));
      if (IsCompiledForm(graphs.compiled) || match == "fused_from") {
        a.nodes = std::move(graphs.framework);
        b.nodes = std::move(graphs.compiled);
        a.level = "framework";
        b.level = "compiled";
      }
    } else if (match == "fused_from") {
      return session.status().WithContext(
          "reading the graphs of both runs for matching through fused_from");
    }
  }
  return CompareProbeSets(a, b, options.compare);
}

}  // namespace mi
