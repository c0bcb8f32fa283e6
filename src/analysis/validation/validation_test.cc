#include "analysis/validation/validation.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "encoders/json_encoder.h"

namespace mi::analysis {
namespace {

// One small graph per rule, built with the Model API; the ONNX text corpus
// under test/golden/check/ covers the same rules through the importer and
// the CLI.
struct Graph {
  StringPool pool;
  Model model{&pool};
  GraphId root;

  Graph() { root = model.AddGraph(LayerLevel::kFramework, "g", "g.onnx"); }
  ValueId T(std::string_view name, std::vector<int64_t> dims,
            int32_t dtype = 1) {
    ValueId v = model.GetOrAddValue(root, name);
    model.SetValueType(v, dtype);
    std::vector<StringId> names(dims.size(), StringPool::kEmpty);
    model.SetValueShape(v, dims, names);
    return v;
  }
  ValueId Untyped(std::string_view name) {
    return model.GetOrAddValue(root, name);
  }
  ValueId In(std::string_view name, std::vector<int64_t> dims,
             int32_t dtype = 1) {
    ValueId v = T(name, dims, dtype);
    model.AddValueFlags(v, kValueGraphInput);
    model.mutable_graph(root).inputs.push_back(v);
    return v;
  }
  ValueId W(std::string_view name, std::vector<int64_t> dims) {
    ValueId v = T(name, dims);
    model.AddValueFlags(v, kValueInitializer);
    return v;
  }
  void Out(ValueId v) {
    model.AddValueFlags(v, kValueGraphOutput);
    model.mutable_graph(root).outputs.push_back(v);
  }
  struct Attr {
    std::string name;
    int64_t i = 0;
    std::string ints;  // "[1,2]" for an ints attribute
    std::string s;     // a string attribute
  };
  NodeId N(std::string_view op, std::string_view name,
           std::vector<ValueId> inputs, std::vector<ValueId> outputs,
           std::vector<Attr> attrs = {}) {
    NodeId n = model.AddNode(root, op, "", name);
    for (ValueId v : inputs) model.AddNodeInput(n, v);
    for (ValueId v : outputs) model.AddNodeOutput(n, v);
    for (const Attr& a : attrs) {
      Attribute attr;
      attr.name = pool.Intern(a.name);
      if (!a.ints.empty()) {
        attr.kind = AttributeKind::kInts;
        attr.text = pool.Intern(a.ints);
      } else if (!a.s.empty()) {
        attr.kind = AttributeKind::kString;
        attr.text = pool.Intern(a.s);
      } else {
        attr.kind = AttributeKind::kInt;
        attr.int_value = a.i;
      }
      model.AddNodeAttribute(n, attr);
    }
    return n;
  }
  ValidationReport Check() {
    model.BuildIndexes();
    return ValidateGraph(model, root);
  }
};

std::vector<std::string> Rules(const ValidationReport& r) {
  std::vector<std::string> out;
  for (const ValidationFinding& f : r.findings) out.emplace_back(f.rule);
  return out;
}

TEST(ValidationTest, CleanGraphHasNoFindings) {
  Graph g;
  ValueId x = g.In("x", {1, 3, 8, 8});
  ValueId w = g.W("w", {4, 3, 3, 3});
  ValueId c = g.T("c", {1, 4, 6, 6});
  ValueId b = g.W("b", {4, 1, 1});
  ValueId y = g.T("y", {1, 4, 6, 6});
  g.N("Conv", "conv", {x, w}, {c});
  g.N("Add", "add", {c, b}, {y});
  g.Out(y);
  ValidationReport r = g.Check();
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].message;
  EXPECT_EQ(r.nodes, 2u);
  EXPECT_EQ(r.graphs, 1u);
}

TEST(ValidationTest, DanglingInputAndOutput) {
  Graph g;
  ValueId x = g.In("x", {2});
  ValueId ghost = g.T("ghost", {2});
  ValueId y = g.T("y", {2});
  NodeId add = g.N("Add", "reads_ghost", {x, ghost}, {y});
  g.Out(y);
  g.Out(g.T("nothing", {2}));
  ValidationReport r = g.Check();
  EXPECT_EQ(Rules(r),
            (std::vector<std::string>{"dangling_input", "dangling_output"}));
  EXPECT_EQ(r.findings[0].node, add);
  EXPECT_EQ(r.findings[0].values, std::vector<ValueId>{ghost});
  EXPECT_NE(r.findings[0].message.find("'ghost'"), std::string::npos);
  EXPECT_EQ(r.errors, 2u);
}

TEST(ValidationTest, CycleIsNamedAlongTheDataFlow) {
  Graph g;
  ValueId x = g.In("x", {2});
  ValueId a = g.T("a", {2});
  ValueId b = g.T("b", {2});
  NodeId na = g.N("Add", "cycle_a", {x, b}, {a});
  g.N("Relu", "cycle_b", {a}, {b});
  g.Out(a);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"cycle"});
  EXPECT_EQ(r.findings[0].node, na);
  EXPECT_NE(r.findings[0].message.find(
                "'cycle_a' (Add) -> 'cycle_b' (Relu) -> 'cycle_a' (Add)"),
            std::string::npos)
      << r.findings[0].message;
}

TEST(ValidationTest, UnusedOutputIsAWarning) {
  Graph g;
  ValueId x = g.In("x", {2});
  ValueId y = g.T("y", {2});
  ValueId mask = g.T("mask", {2}, 9);
  g.N("Dropout", "drop", {x}, {y, mask});
  g.Out(y);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"unused_output"});
  EXPECT_EQ(r.findings[0].severity, ValidationSeverity::kWarning);
  EXPECT_EQ(r.errors, 0u);
  EXPECT_EQ(r.warnings, 1u);
}

TEST(ValidationTest, Broadcasting) {
  Graph g;
  ValueId a = g.In("a", {2, 3});
  ValueId b = g.In("b", {4, 3});
  ValueId ok = g.In("ok", {1, 3});
  ValueId sym = g.In("sym", {-1, 3});
  ValueId y1 = g.Untyped("y1"), y2 = g.Untyped("y2"), y3 = g.Untyped("y3");
  g.N("Mul", "bad", {a, b}, {y1});
  g.N("Mul", "fine", {a, ok}, {y2});
  g.N("Add", "symbolic", {a, sym}, {y3});
  for (ValueId y : {y1, y2, y3}) g.Out(y);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"broadcast"});
  EXPECT_NE(r.findings[0].message.find("float32[2,3]"), std::string::npos);
  EXPECT_NE(r.findings[0].message.find("float32[4,3]"), std::string::npos);
}

TEST(ValidationTest, OmittedOptionalInputsAreSkipped) {
  Graph g;
  ValueId a = g.In("a", {2, 3});
  ValueId b = g.In("b", {4, 3});
  ValueId y = g.Untyped("y");
  g.N("Sum", "sum", {a, ValueId::Invalid(), b}, {y});
  g.Out(y);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"broadcast"});
  EXPECT_EQ(r.findings[0].values, (std::vector<ValueId>{a, b}));
  auto j = nlohmann::json::parse(
      encoders::EncodeJson(ToValidationResult(g.model, {{"framework", r}})));
  EXPECT_EQ(j["levels"][0]["findings"][0]["values"].size(), 2u);
}

TEST(ValidationTest, MatMulAndGemmInnerDims) {
  Graph g;
  ValueId a = g.In("a", {2, 3});
  ValueId b = g.In("b", {4, 5});
  ValueId bt = g.In("bt", {5, 3});
  ValueId y1 = g.Untyped("y1"), y2 = g.Untyped("y2"), y3 = g.Untyped("y3");
  g.N("MatMul", "mm", {a, b}, {y1});
  g.N("Gemm", "gemm_ok", {a, bt}, {y2}, {{"transB", 1}});
  g.N("Gemm", "gemm_bad", {a, bt}, {y3});
  for (ValueId y : {y1, y2, y3}) g.Out(y);
  ValidationReport r = g.Check();
  EXPECT_EQ(Rules(r),
            (std::vector<std::string>{"matmul_inner_dim", "gemm_inner_dim"}));
}

TEST(ValidationTest, ConcatAxisAndDims) {
  Graph g;
  ValueId a = g.In("a", {2, 3});
  ValueId b = g.In("b", {2, 5});
  ValueId c = g.In("c", {2, 3, 1});
  ValueId y1 = g.T("y1", {2, 8}), y2 = g.Untyped("y2"), y3 = g.Untyped("y3"),
          y4 = g.Untyped("y4");
  g.N("Concat", "ok", {a, b}, {y1}, {{"axis", 1}});
  g.N("Concat", "wrong_axis", {a, b}, {y2}, {{"axis", 0}});
  g.N("Concat", "ranks", {a, c}, {y3}, {{"axis", 1}});
  g.N("Concat", "range", {a, b}, {y4}, {{"axis", 2}});
  for (ValueId y : {y1, y2, y3, y4}) g.Out(y);
  ValidationReport r = g.Check();
  EXPECT_EQ(Rules(r), (std::vector<std::string>{"concat_shape", "concat_shape",
                                                "concat_shape"}));
}

TEST(ValidationTest, ConvChannelsWithGroups) {
  Graph g;
  ValueId x = g.In("x", {1, 8, 5, 5});
  ValueId dw = g.W("dw", {8, 1, 3, 3});    // depthwise, group 8: fine
  ValueId bad = g.W("bad", {8, 3, 3, 3});  // 3 x 1 != 8
  ValueId y1 = g.Untyped("y1"), y2 = g.Untyped("y2");
  g.N("Conv", "depthwise", {x, dw}, {y1}, {{"group", 8}});
  g.N("Conv", "bad", {x, bad}, {y2});
  g.Out(y1);
  g.Out(y2);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"conv_channels"});
  EXPECT_EQ(g.model.str(g.model.node_name(r.findings[0].node)), "bad");
}

TEST(ValidationTest, ReshapeElementCount) {
  Graph g;
  ValueId x = g.In("x", {2, 6});
  ValueId shape = g.W("shape", {2});
  shape = g.model.FindValue(g.root, "shape");
  g.model.SetValueType(shape, 7);
  ValueId y = g.T("y", {5, 2});
  g.N("Reshape", "rs", {x, shape}, {y});
  g.Out(y);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"reshape_element_count"});
  EXPECT_NE(r.findings[0].message.find("12 elements"), std::string::npos);
}

TEST(ValidationTest, DtypeMismatch) {
  Graph g;
  ValueId a = g.In("a", {2}, 1);
  ValueId b = g.In("b", {2}, 7);
  ValueId y = g.Untyped("y");
  g.N("Add", "mixed", {a, b}, {y});
  g.Out(y);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"dtype_mismatch"});
  EXPECT_NE(r.findings[0].message.find("int64"), std::string::npos);
}

TEST(ValidationTest, DeclaredOutputShapeContradictsInference) {
  Graph g;
  ValueId a = g.In("a", {2, 3});
  ValueId b = g.In("b", {3, 4});
  ValueId y = g.T("y", {2, 5});
  g.N("MatMul", "mm", {a, b}, {y});
  g.Out(y);
  ValidationReport r = g.Check();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"output_shape_mismatch"});
  EXPECT_NE(r.findings[0].message.find("give [2,4]"), std::string::npos)
      << r.findings[0].message;
  EXPECT_EQ(r.findings[0].values.size(), 3u);  // a, b and y
}

TEST(ValidationTest, InferenceRules) {
  Graph g;
  ValueId x = g.In("x", {1, 3, 224, 224});
  ValueId w = g.W("w", {64, 3, 7, 7});
  ValueId c = g.Untyped("c");
  NodeId conv = g.N("Conv", "conv", {x, w}, {c},
                    {{"strides", 0, "[2,2]"}, {"pads", 0, "[3,3,3,3]"}});
  ValueId t = g.Untyped("t");
  NodeId tr = g.N("Transpose", "tr", {x}, {t}, {{"perm", 0, "[0,2,3,1]"}});
  ValueId f = g.Untyped("f");
  NodeId fl = g.N("Flatten", "fl", {x}, {f});
  ValueId m = g.Untyped("m");
  ValueId v = g.In("v", {224});
  NodeId mm = g.N("MatMul", "mm", {x, v}, {m});
  ValueId same = g.Untyped("same");
  NodeId pad_same =
      g.N("Conv", "same", {x, w}, {same},
          {{"strides", 0, "[2,2]"}, {"auto_pad", 0, "", "SAME_UPPER"}});
  g.model.BuildIndexes();
  EXPECT_EQ(InferOutputShape(g.model, conv, 0).dims,
            (std::vector<int64_t>{1, 64, 112, 112}));
  EXPECT_EQ(InferOutputShape(g.model, tr, 0).dims,
            (std::vector<int64_t>{1, 224, 224, 3}));
  EXPECT_EQ(InferOutputShape(g.model, fl, 0).dims,
            (std::vector<int64_t>{1, 3 * 224 * 224}));
  EXPECT_EQ(InferOutputShape(g.model, mm, 0).dims,
            (std::vector<int64_t>{1, 3, 224}));
  EXPECT_EQ(InferOutputShape(g.model, pad_same, 0).dims,
            (std::vector<int64_t>{1, 64, 112, 112}));
}

TEST(ValidationTest, JsonNamesNodeValuesAndShapes) {
  Graph g;
  ValueId a = g.In("a", {2, 3});
  ValueId b = g.In("b", {4, 3});
  ValueId y = g.Untyped("y");
  g.N("Sub", "bad", {a, b}, {y});
  g.Out(y);
  ValidationReport r = g.Check();
  auto j = nlohmann::json::parse(encoders::EncodeJson(
      ToValidationResult(g.model, {{"framework", std::move(r)}})));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["errors"], 1);
  const auto& f = j["levels"][0]["findings"][0];
  EXPECT_EQ(f["rule"], "broadcast");
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["node"]["name"], "bad");
  EXPECT_EQ(f["values"][1]["type"], "float32[4,3]");
}

TEST(ValidationTest, EveryRuleIsListedOnce) {
  std::vector<std::string> ids;
  for (const RuleInfo& r : ValidationRules()) ids.emplace_back(r.id);
  EXPECT_EQ(ids.size(), 12u);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
}

}  // namespace
}  // namespace mi::analysis
