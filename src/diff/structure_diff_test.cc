// The structural diff on real fixture pairs, against the expectations
// python3-onnx derives independently (test/fixtures/derive_expected_diff.py
// -> test/fixtures/expected_diff.json; its docstring gives the reasoning):
//   resnet18 vs resnet18_block   one BasicBlock added to layer1: its five
//                                nodes added, the two readers of layer1's
//                                output changed (they now read the block's)
//   resnet18 vs resnet18_renamed every node renamed: all 49 matched by
//                                structure, none changed
//   ORT basic vs all             the fusions ORT gained at "all"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model_inspector/diff.h"

namespace mi {
namespace {

const std::string kFixtures = std::string(MI_SOURCE_DIR) + "/test/fixtures/";

nlohmann::json Expected() {
  std::ifstream in(kFixtures + "expected_diff.json");
  EXPECT_TRUE(in.good()) << "missing test/fixtures/expected_diff.json";
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

RunDigest DigestOf(const std::vector<std::string>& files) {
  DiffInputOptions options;
  for (const std::string& f : files) options.paths.push_back(kFixtures + f);
  StatusOr<RunDigest> digest = LoadDiffInput(options);
  EXPECT_TRUE(digest.ok()) << digest.status().ToString();
  return digest.ok() ? std::move(*digest) : RunDigest{};
}

DiffReport Diff(const RunDigest& base, const RunDigest& next) {
  StatusOr<DiffReport> report = DiffRuns(base, next, DiffOptions{});
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? std::move(*report) : DiffReport{};
}

const LevelDiff* LevelOf(const DiffReport& r, std::string_view level) {
  for (const LevelDiff& l : r.structure) {
    if (l.level == level) return &l;
  }
  return nullptr;
}

std::set<std::string> NamesOf(const LevelDiff& l, std::string_view kind) {
  std::set<std::string> names;
  for (const NodeChange& c : l.changes) {
    if (c.kind == kind)
      names.insert(kind == "added" ? c.new_name : c.base_name);
  }
  return names;
}

std::set<std::string> JsonNames(const nlohmann::json& list) {
  std::set<std::string> names;
  for (const auto& n : list) names.insert(n.get<std::string>());
  return names;
}

using Groups = std::set<std::vector<std::string>>;

Groups FusionGroups(const LevelDiff& l, std::string_view kind, bool base) {
  Groups out;
  for (const FusionChange& f : l.fusions) {
    if (f.kind == kind) out.insert(base ? f.base_group : f.new_group);
  }
  return out;
}

Groups JsonGroups(const nlohmann::json& list) {
  Groups out;
  for (const auto& g : list) out.insert(g.get<std::vector<std::string>>());
  return out;
}

TEST(StructureDiffTest, OneBlockAdded) {
  const nlohmann::json want = Expected()["block_added"];
  DiffReport r = Diff(DigestOf({"resnet18/model.onnx"}),
                      DigestOf({"resnet18_block/model.onnx"}));
  const LevelDiff* l = LevelOf(r, "framework");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->base_nodes, want["base_nodes"].get<int64_t>());
  EXPECT_EQ(l->new_nodes, want["new_nodes"].get<int64_t>());
  EXPECT_EQ(NamesOf(*l, "added"), JsonNames(want["added"]));
  EXPECT_EQ(NamesOf(*l, "removed"), JsonNames(want["removed"]));
  EXPECT_EQ(NamesOf(*l, "changed"), JsonNames(want["changed"]));
  EXPECT_EQ(l->renamed, 0);
  EXPECT_EQ(l->matched_by_name, 49);
  EXPECT_EQ(l->matched_by_structure, 0);
  EXPECT_EQ(l->matches.size(), 49u);
  EXPECT_NE(l->base_fingerprint, l->new_fingerprint);
  // Each changed reader names what it read before and what it reads now.
  for (const NodeChange& c : l->changes) {
    if (c.kind != "changed") continue;
    ASSERT_EQ(c.changes.size(), 1u) << c.base_name;
    EXPECT_EQ(c.changes[0],
              "input 0 from: /layer1/layer1.1/relu_1/Relu:0 -> "
              "/layer1/layer1.2/relu_1/Relu:0");
  }
  // Op types: two Conv, two Relu, one Add more (the block).
  std::map<std::string, std::pair<int64_t, int64_t>> shift;
  for (const OpTypeShift& s : l->op_types) {
    shift[s.op_type] = {s.base_count, s.new_count};
  }
  EXPECT_EQ(shift,
            (std::map<std::string, std::pair<int64_t, int64_t>>{
                {"Add", {8, 9}}, {"Conv", {20, 22}}, {"Relu", {17, 19}}}));
}

TEST(StructureDiffTest, RenamedNodesMatchByStructure) {
  const nlohmann::json want = Expected()["renamed"];
  RunDigest base = DigestOf({"resnet18/model.onnx"});
  RunDigest next = DigestOf({"resnet18_renamed/model.onnx"});
  // Names are not part of the fingerprint.
  EXPECT_EQ(base.levels[0].fingerprint, next.levels[0].fingerprint);
  DiffReport r = Diff(base, next);
  const LevelDiff* l = LevelOf(r, "framework");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->matched_by_name, 0);
  EXPECT_EQ(l->matched_by_structure, 49);
  EXPECT_EQ(l->renamed, want["renamed"].get<int64_t>());
  EXPECT_EQ(l->changed, 0);
  EXPECT_EQ(l->added, 0);
  EXPECT_EQ(l->removed, 0);
  EXPECT_TRUE(l->op_types.empty());
  std::set<std::pair<std::string, std::string>> pairs;
  for (const NodeChange& c : l->changes) {
    EXPECT_EQ(c.kind, "renamed");
    EXPECT_EQ(c.matched_by, "structure");
    EXPECT_TRUE(c.changes.empty()) << c.base_name;
    pairs.emplace(c.base_name, c.new_name);
  }
  std::set<std::pair<std::string, std::string>> want_pairs;
  for (const auto& p : want["pairs"]) want_pairs.emplace(p[0], p[1]);
  EXPECT_EQ(pairs, want_pairs);
}

void CheckBasicVsAll(const std::string& model) {
  SCOPED_TRACE(model);
  const nlohmann::json want = Expected()["basic_vs_all"][model];
  RunDigest basic = DigestOf(
      {model + "/model.onnx", model + "/ort_basic/model.optimized.onnx"});
  RunDigest all = DigestOf(
      {model + "/model.onnx", model + "/ort_all/model.optimized.onnx"});
  DiffReport r = Diff(basic, all);
  // The framework graph is the same file on both sides.
  const LevelDiff* fw = LevelOf(r, "framework");
  ASSERT_NE(fw, nullptr);
  EXPECT_TRUE(fw->changes.empty());
  EXPECT_EQ(fw->base_fingerprint, fw->new_fingerprint);

  const LevelDiff* l = LevelOf(r, "compiled");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->base_nodes, want["base_nodes"].get<int64_t>());
  EXPECT_EQ(l->new_nodes, want["new_nodes"].get<int64_t>());
  EXPECT_EQ(FusionGroups(*l, "gained", false), JsonGroups(want["gained"]));
  EXPECT_EQ(l->fusions_gained, static_cast<int64_t>(want["gained"].size()));
  EXPECT_EQ(l->fusions_lost, static_cast<int64_t>(want["lost"].size()));
  EXPECT_EQ(l->fusions_changed, static_cast<int64_t>(want["changed"].size()));
  std::map<std::string, std::vector<int64_t>> shift;
  for (const OpTypeShift& s : l->op_types) {
    shift[s.op_type] = {s.base_count, s.new_count};
  }
  EXPECT_EQ(
      shift,
      (want["op_types"].get<std::map<std::string, std::vector<int64_t>>>()));

  // The other way round every gained fusion is lost.
  DiffReport back = Diff(all, basic);
  const LevelDiff* lb = LevelOf(back, "compiled");
  ASSERT_NE(lb, nullptr);
  EXPECT_EQ(FusionGroups(*lb, "lost", true), JsonGroups(want["gained"]));
  EXPECT_EQ(lb->fusions_gained, 0);

  // Framework -> compiled within the "all" run: each group is a fusion
  // the compiler made.
  StatusOr<DiffReport> levels = DiffLevelsWithinRun(all, DiffOptions{});
  ASSERT_TRUE(levels.ok()) << levels.status().ToString();
  const LevelDiff* fc = LevelOf(*levels, "framework->compiled");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(FusionGroups(*fc, "gained", false),
            JsonGroups(want["framework_to_compiled_all"]["gained"]));
}

TEST(StructureDiffTest, OrtBasicVsAllResnet) { CheckBasicVsAll("resnet18"); }
TEST(StructureDiffTest, OrtBasicVsAllTransformer) {
  CheckBasicVsAll("transformer");
}

// ORT numbers its ReorderOutput nodes in a different order on every run
// (test/fixtures/README.md): the same graph regenerated has the six names
// shuffled among the six nodes. Shifting the names by one place in the new
// digest gives that situation; each name now sits on a node that reads
// another Conv, so name matching alone would call all six changed. They
// are the same nodes renamed: 6 renamed, nothing changed.
TEST(StructureDiffTest, ShuffledGeneratedNamesAreRenamesNotChanges) {
  RunDigest base = DigestOf(
      {"resnet18/model.onnx", "resnet18/ort_all/model.optimized.onnx"});
  RunDigest next = base;
  DigestLevel* compiled = nullptr;
  for (DigestLevel& l : next.levels) {
    if (l.level == "compiled") compiled = &l;
  }
  ASSERT_NE(compiled, nullptr);
  std::vector<DigestNode*> reorders;
  for (DigestNode& n : compiled->nodes) {
    if (n.op_type == "ReorderOutput") reorders.push_back(&n);
  }
  ASSERT_EQ(reorders.size(), 6u);
  std::string first = reorders[0]->name;
  for (size_t i = 0; i + 1 < reorders.size(); ++i) {
    reorders[i]->name = reorders[i + 1]->name;
  }
  reorders.back()->name = first;

  DiffReport r = Diff(base, next);
  const LevelDiff* l = LevelOf(r, "compiled");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->changed, 0);
  EXPECT_EQ(l->added, 0);
  EXPECT_EQ(l->removed, 0);
  EXPECT_EQ(l->renamed, 6);
  EXPECT_EQ(l->matched_by_structure, 6);
  EXPECT_EQ(l->matched_by_name, l->base_nodes - 6);
  for (const NodeChange& c : l->changes) {
    EXPECT_EQ(c.base_op_type, "ReorderOutput");
    EXPECT_NE(c.base_name, c.new_name);
  }
}

DigestNode Relu(std::string name, std::string in, std::string out) {
  DigestNode n;
  n.name = std::move(name);
  n.op_type = "Relu";
  n.inputs = {{std::move(in), "float32", {"1", "16"}, true, ""}};
  n.outputs = {{std::move(out), "float32", {"1", "16"}, true, ""}};
  return n;
}

// A node inserted into a chain of alike nodes reads, to its producer,
// exactly like the node that used to follow it. By hand: base x -> n0 ->
// n1 -> n2, new x -> n0 -> extra -> n1 -> n2 (all Relu, same shapes):
// extra added; n1 changed, reading extra instead of n0; n0, n2 unchanged;
// every kept node matched by name (never n1 <-> extra by position).
TEST(StructureDiffTest, NodeInsertedIntoAChainOfAlikeNodes) {
  RunDigest base;
  base.levels.push_back({"framework", "", "onnx", "", "", {}});
  base.levels[0].nodes = {Relu("n0", "x", "t0"), Relu("n1", "t0", "t1"),
                          Relu("n2", "t1", "t2")};
  RunDigest next = base;
  next.levels[0].nodes = {Relu("n0", "x", "t0"), Relu("extra", "t0", "te"),
                          Relu("n1", "te", "t1"), Relu("n2", "t1", "t2")};
  DiffReport r = Diff(base, next);
  const LevelDiff* l = LevelOf(r, "framework");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->matched_by_name, 3);
  EXPECT_EQ(l->matched_by_structure, 0);
  EXPECT_EQ(NamesOf(*l, "added"), (std::set<std::string>{"extra"}));
  EXPECT_EQ(NamesOf(*l, "changed"), (std::set<std::string>{"n1"}));
  for (const NodeChange& c : l->changes) {
    if (c.kind == "changed") {
      EXPECT_EQ(c.changes,
                (std::vector<std::string>{"input 0 from: n0:0 -> extra:0"}));
    }
  }
}

// Fusion groups by hand: the base compiled level fuses {conv, add} into
// one node and {mm, div} into another; the new one fuses {conv, add, relu}
// (same fusion, one member more: changed), leaves mm and div apart (lost),
// and fuses {gelu_a, gelu_b} (gained).
TEST(StructureDiffTest, FusionChangedLostGainedByHand) {
  auto compiled = [](std::vector<DigestNode> nodes) {
    RunDigest d;
    d.levels.push_back({"compiled", "", "onnx", "", "", std::move(nodes)});
    return d;
  };
  auto fused = [](std::string name, std::string op,
                  std::vector<std::string> from) {
    DigestNode n;
    n.name = std::move(name);
    n.op_type = std::move(op);
    n.fused_from = std::move(from);
    return n;
  };
  RunDigest base = compiled(
      {fused("c1", "Conv", {"add", "conv"}), fused("relu", "Relu", {"relu"}),
       fused("m1", "FusedMatMul", {"div", "mm"}),
       fused("g1", "Mul", {"gelu_a"}), fused("g2", "Erf", {"gelu_b"})});
  RunDigest next =
      compiled({fused("c1", "Conv", {"add", "conv", "relu"}),
                fused("mm", "MatMul", {"mm"}), fused("div", "Div", {"div"}),
                fused("g", "Gelu", {"gelu_a", "gelu_b"})});
  DiffReport r = Diff(base, next);
  const LevelDiff* l = LevelOf(r, "compiled");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->fusions_changed, 1);
  EXPECT_EQ(l->fusions_lost, 1);
  EXPECT_EQ(l->fusions_gained, 1);
  ASSERT_EQ(l->fusions.size(), 3u);
  std::map<std::string, const FusionChange*> by_kind;
  for (const FusionChange& f : l->fusions) by_kind[f.kind] = &f;
  ASSERT_TRUE(by_kind.contains("changed"));
  EXPECT_EQ(by_kind["changed"]->base_group,
            (std::vector<std::string>{"add", "conv"}));
  EXPECT_EQ(by_kind["changed"]->new_group,
            (std::vector<std::string>{"add", "conv", "relu"}));
  ASSERT_TRUE(by_kind.contains("lost"));
  EXPECT_EQ(by_kind["lost"]->base_group,
            (std::vector<std::string>{"div", "mm"}));
  EXPECT_EQ(by_kind["lost"]->base_compiled, "m1");
  EXPECT_EQ(by_kind["lost"]->base_compiled_op_type, "FusedMatMul");
  ASSERT_TRUE(by_kind.contains("gained"));
  EXPECT_EQ(by_kind["gained"]->new_group,
            (std::vector<std::string>{"gelu_a", "gelu_b"}));
  EXPECT_EQ(by_kind["gained"]->new_compiled_op_type, "Gelu");
}

TEST(StructureDiffTest, ARunAgainstItselfHasNoChange) {
  RunDigest d = DigestOf(
      {"transformer/model.onnx", "transformer/ort_all/model.optimized.onnx"});
  DiffReport r = Diff(d, d);
  ASSERT_EQ(r.structure.size(), 2u);
  for (const LevelDiff& l : r.structure) {
    EXPECT_TRUE(l.changes.empty()) << l.level;
    EXPECT_TRUE(l.fusions.empty()) << l.level;
    EXPECT_EQ(l.matched_by_name, l.base_nodes) << l.level;
  }
}

}  // namespace
}  // namespace mi
