// Session methods of the diagnosis, frequent-sequence and
// repeated-block analyses, and the repeated-block families the session
// builds from the layout's groups for analysis/blocks (analyses may not use
// layout). The rule list (diagnosis rules, then the timing rules) is the
// registry's (analysis/registry/findings_analysis.h).

#include <string>
#include <vector>

#include "analysis/blocks/block_time.h"
#include "analysis/diagnosis/rules.h"
#include "analysis/registry/findings_analysis.h"
#include "analysis/sequences/sequences.h"
#include "layout/hierarchical_layout_model.h"
#include "layout/model_layout.h"
#include "model_inspector/diagnosis.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {
namespace {

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

std::vector<RuleInfo> DiagnosisRules() {
  std::vector<RuleInfo> out;
  for (const auto& r : analysis::AllRuleSpecs()) out.push_back(ToInfo(r));
  return out;
}

std::string DiagnosisRulesMarkdown() {
  return analysis::RulesReferenceMarkdown(analysis::AllRuleSpecs());
}

StatusOr<FindingsResult> Session::Findings(
    const DiagnoseOptions& options) const {
  return analysis::RunFindings(ContextOf(*impl_), options);
}

StatusOr<SequencesResult> Session::Sequences(
    const SequenceOptions& options) const {
  return analysis::RunSequences(impl_->model, impl_->trace, options);
}

BlocksResult Session::Blocks() const {
  return analysis::RunBlocks(ContextOf(*impl_));
}

std::vector<analysis::BlockFamily> BlockFamiliesOf(const Session::Impl& run,
                                                   GraphId root) {
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
  return families;
}

}  // namespace mi
