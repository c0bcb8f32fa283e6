// Session methods of the diagnosis (E9), frequent-sequence and
// repeated-block analyses. The full rule list (diagnosis rules, then the
// timing rules) is assembled here: analyses do not include each other.

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/blocks/block_time.h"
#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/rules.h"
#include "analysis/sequences/sequences.h"
#include "analysis/timing/timing_rules.h"
#include "base/check.h"
#include "base/json_writer.h"
#include "layout/hierarchical_layout_model.h"
#include "layout/model_layout.h"
#include "model_inspector/diagnosis.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {
namespace {

// Sequences longer than this are not searched (cost is linear in it).
constexpr size_t kMaxSequenceLength = 32;
constexpr size_t kMaxSequenceTop = 10000;

const std::vector<analysis::RuleSpec>& AllRules() {
  static const std::vector<analysis::RuleSpec> rules = [] {
    std::vector<analysis::RuleSpec> all;
    for (const auto& r : analysis::DiagnosisRuleSpecs()) all.push_back(r);
    for (const auto& r : analysis::TimingRuleSpecs()) all.push_back(r);
    return all;
  }();
  return rules;
}

RuleInfo ToInfo(const analysis::RuleSpec& r) {
  RuleInfo info;
  info.id = std::string(r.id);
  info.title = std::string(r.title);
  info.severity = std::string(analysis::FindingSeverityName(r.severity));
  info.default_threshold = r.default_threshold;
  info.threshold_unit = std::string(r.threshold_unit);
  info.why = std::string(r.why);
  info.suggestion = std::string(r.suggestion);
  return info;
}

analysis::DiagnosisOptions ToInternal(const DiagnoseOptions& options) {
  analysis::DiagnosisOptions o;
  for (const auto& [id, value] : options.thresholds) o.thresholds[id] = value;
  o.disabled = options.disabled;
  return o;
}

// The level whose blocks are timed: the framework graph (the structure
// users recognise; compiled task time is attributed to it through
// fused_from), else the compiled graph.
GraphId BlocksRoot(const Session::Impl& run, std::string* level) {
  if (run.framework.valid()) {
    *level = "framework";
    return run.framework;
  }
  *level = "compiled";
  return run.compiled;
}

std::string GroupPath(const layout::GroupTree& tree, int32_t g) {
  std::vector<std::string_view> parts;
  for (int32_t x = g; x > 0; x = tree.parent[x]) parts.push_back(tree.label[x]);
  std::string path;
  for (size_t i = parts.size(); i-- > 0;) {
    path += std::string(parts[i]) + (i ? "/" : "");
  }
  return path;
}

}  // namespace

void WriteFindingJson(JsonWriter& w, const FindingInfo& f) {
  w.BeginObject();
  w.Field("rule", f.rule_id).Field("title", f.title);
  w.Field("severity", f.severity).Field("message", f.message);
  w.Field("suggestion", f.suggestion);
  w.FieldDouble("threshold", f.threshold);
  w.FieldInt("time_ns", f.time_ns).FieldDouble("share", f.share);
  w.Key("nodes").BeginArray();
  for (uint32_t n : f.nodes) w.UInt(n);
  w.EndArray();
  w.Key("tasks").BeginArray();
  for (uint32_t t : f.tasks) w.UInt(t);
  w.EndArray();
  w.EndObject();
}

std::vector<RuleInfo> DiagnosisRules() {
  std::vector<RuleInfo> out;
  for (const auto& r : AllRules()) out.push_back(ToInfo(r));
  return out;
}

std::string DiagnosisRulesMarkdown() {
  return analysis::RulesReferenceMarkdown(AllRules());
}

StatusOr<std::vector<FindingInfo>> Session::Findings(
    const DiagnoseOptions& options) const {
  analysis::DiagnosisOptions o = ToInternal(options);
  MI_RETURN_IF_ERROR(analysis::ValidateDiagnosisOptions(o, AllRules()));
  const Impl& run = *impl_;
  std::vector<analysis::Finding> findings =
      analysis::Diagnose(run.model, run.trace, run.links, o);
  std::vector<analysis::Finding> timing =
      analysis::EvaluateTimingRules(run.model, run.trace, run.links, o);
  for (auto& f : timing) {
    if (o.Enabled(f.rule_id)) findings.push_back(std::move(f));
  }
  analysis::SortFindings(findings);
  std::vector<FindingInfo> out;
  for (const analysis::Finding& f : findings) {
    FindingInfo info;
    info.rule_id = f.rule_id;
    const analysis::RuleSpec* spec =
        analysis::FindRuleSpec(AllRules(), f.rule_id);
    if (spec != nullptr) {
      info.title = std::string(spec->title);
      info.threshold = o.Threshold(*spec);
    }
    info.severity = std::string(analysis::FindingSeverityName(f.severity));
    info.message = f.message;
    info.suggestion = f.suggestion;
    for (NodeId n : f.nodes) info.nodes.push_back(n.value());
    for (TaskId t : f.tasks) info.tasks.push_back(t.value());
    info.time_ns = f.time_ns;
    info.share = f.share;
    out.push_back(std::move(info));
  }
  return out;
}

StatusOr<std::string> Session::FindingsJson(
    const DiagnoseOptions& options) const {
  std::vector<FindingInfo> findings;
  MI_ASSIGN_OR_RETURN(findings, Findings(options));
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  for (const FindingInfo& f : findings) WriteFindingJson(w, f);
  w.EndArray();
  return out;
}

StatusOr<std::vector<SequenceInfo>> Session::Sequences(
    const SequenceOptions& options) const {
  analysis::SequenceParams params;
  if (options.by == "op_type") {
    params.by = analysis::SequenceSymbol::kOpType;
  } else if (options.by == "name") {
    params.by = analysis::SequenceSymbol::kName;
  } else {
    return InvalidArgumentError(fmt::format(
        "sequences by: expected 'op_type' or 'name', found '{}'", options.by));
  }
  if (options.min_length < 2 || options.min_length > options.max_length ||
      options.max_length > kMaxSequenceLength) {
    return InvalidArgumentError(fmt::format(
        "sequence lengths: expected 2 <= min ({}) <= max ({}) <= {}",
        options.min_length, options.max_length, kMaxSequenceLength));
  }
  if (options.top < 1 || options.top > kMaxSequenceTop) {
    return InvalidArgumentError(
        fmt::format("sequences top: expected 1..{}, found {}", kMaxSequenceTop,
                    options.top));
  }
  params.min_length = static_cast<uint32_t>(options.min_length);
  params.max_length = static_cast<uint32_t>(options.max_length);
  params.top = options.top;
  analysis::SequenceReport report =
      analysis::FindFrequentSequences(impl_->model, impl_->trace, params);
  std::vector<SequenceInfo> out;
  for (const auto& s : report.sequences) {
    SequenceInfo info;
    info.symbols = s.symbols;
    info.count = s.count;
    info.total_ns = s.total_ns;
    info.share = report.total_ns > 0
                     ? static_cast<double>(s.total_ns) / report.total_ns
                     : 0;
    for (TrackId t : s.tracks) info.tracks.push_back(t.value());
    for (TaskId t : s.first_tasks) info.first_tasks.push_back(t.value());
    out.push_back(std::move(info));
  }
  return out;
}

StatusOr<std::string> Session::SequencesJson(
    const SequenceOptions& options) const {
  std::vector<SequenceInfo> sequences;
  MI_ASSIGN_OR_RETURN(sequences, Sequences(options));
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  for (const SequenceInfo& s : sequences) {
    w.BeginObject();
    w.Key("symbols").BeginArray();
    for (const std::string& sym : s.symbols) w.String(sym);
    w.EndArray();
    w.FieldInt("length", static_cast<int64_t>(s.symbols.size()));
    w.Key("count").UInt(s.count);
    w.FieldInt("total_ns", s.total_ns).FieldDouble("share", s.share);
    w.Key("tracks").BeginArray();
    for (uint32_t t : s.tracks) w.UInt(t);
    w.EndArray();
    w.Key("first_tasks").BeginArray();
    for (uint32_t t : s.first_tasks) w.UInt(t);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  return out;
}

std::vector<BlockFamilyInfo> Session::Blocks() const {
  const Impl& run = *impl_;
  std::string level;
  GraphId root = BlocksRoot(run, &level);
  if (!root.valid()) return {};
  const Model& model = run.model;
  // The groups of the level's default layout view (scopes, repeated
  // blocks, chunks), so group indices match what the UI folds.
  layout::LayoutInput input = layout::BuildLayoutInput(model, root);
  layout::GroupTree tree =
      layout::BuildGroups(model, root, input, layout::GroupingOptions{});
  const size_t gcount = tree.parent.size();
  // Families: each group marked as a repeat of a representative; chunks
  // (arbitrary runs of nodes) and fusion groups are not blocks.
  std::vector<int32_t> family_of(gcount, -1);
  std::vector<int32_t> representatives;
  auto is_block = [&](size_t g) {
    return g < tree.kind.size() && (tree.kind[g] == layout::GroupKind::kScope ||
                                    tree.kind[g] == layout::GroupKind::kRepeat);
  };
  for (size_t g = 1; g < gcount; ++g) {
    int32_t rep = g < tree.repeat_of.size() ? tree.repeat_of[g] : -1;
    if (rep < 0 || !is_block(g) || !is_block(rep)) continue;
    if (family_of[rep] < 0) {
      family_of[rep] = static_cast<int32_t>(representatives.size());
      representatives.push_back(rep);
    }
    family_of[g] = family_of[rep];
  }
  std::vector<analysis::BlockFamily> families(representatives.size());
  std::vector<int32_t> slot(gcount, -1);  // instance index within family
  for (size_t g = 1; g < gcount; ++g) {
    if (family_of[g] < 0) continue;
    auto& instances = families[family_of[g]].instances;
    slot[g] = static_cast<int32_t>(instances.size());
    instances.push_back({GroupPath(tree, static_cast<int32_t>(g)),
                         static_cast<int32_t>(g),
                         {}});
  }
  for (size_t v = 0; v < input.kinds.size(); ++v) {
    if (input.kinds[v] != layout::LayoutItemKind::kNode) continue;
    int32_t g = v < tree.node_group.size() ? tree.node_group[v] : 0;
    for (int32_t x = g; x > 0 && x < static_cast<int32_t>(gcount);
         x = tree.parent[x]) {
      if (family_of[x] >= 0) {
        families[family_of[x]].instances[slot[x]].nodes.push_back(
            input.model_nodes[v]);
      }
    }
  }
  std::vector<int64_t> node_time =
      analysis::AttributedNodeTime(model, run.trace, run.links);
  std::vector<BlockFamilyInfo> out;
  for (const auto& f : analysis::TimeBlockFamilies(node_time, families)) {
    BlockFamilyInfo info;
    info.level = level;
    info.label = f.label;
    info.nodes_per_instance = f.nodes_per_instance;
    for (const auto& i : f.instances) {
      info.instances.push_back({i.path, i.group, i.node_count, i.total_ns});
    }
    info.total_ns = f.total_ns;
    info.mean_ns = f.mean_ns;
    info.median_ns = f.median_ns;
    info.slowest = f.slowest;
    info.slowest_over_median = f.slowest_over_median;
    out.push_back(std::move(info));
  }
  return out;
}

void WriteDiagnosisSections(const Session& session, JsonWriter& w) {
  // Default options are valid by construction: these cannot fail.
  StatusOr<std::string> findings = session.FindingsJson({});
  StatusOr<std::string> sequences = session.SequencesJson({});
  MI_CHECK(findings.ok() && sequences.ok());
  w.Key("findings").Raw(*findings);
  w.Key("sequences").Raw(*sequences);
  w.Key("blocks").Raw(session.BlocksJson());
}

std::string Session::BlocksJson() const {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  for (const BlockFamilyInfo& f : Blocks()) {
    w.BeginObject();
    w.Field("level", f.level).Field("label", f.label);
    w.Key("nodes_per_instance").UInt(f.nodes_per_instance);
    w.FieldInt("total_ns", f.total_ns).FieldInt("mean_ns", f.mean_ns);
    w.FieldInt("median_ns", f.median_ns).FieldInt("slowest", f.slowest);
    w.FieldDouble("slowest_over_median", f.slowest_over_median);
    w.Key("instances").BeginArray();
    for (const BlockInstanceInfo& i : f.instances) {
      w.BeginObject();
      w.Field("path", i.path).FieldInt("group", i.group);
      w.Key("node_count").UInt(i.node_count);
      w.FieldInt("total_ns", i.total_ns);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  return out;
}

}  // namespace mi
