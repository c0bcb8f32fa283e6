// The three text forms of an ONNX model: detection by content, the "//"
// comment lines of onnx-mlir's lit tests, and where errors are placed. The
// op-type histograms of the real fixtures against python3-onnx are checked
// in test/python/test_onnx_text.py.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "importers/common/importer.h"
#include "importers/onnx/onnx_test_util.h"

namespace mi::importers {
namespace {

using namespace onnx_test;  // NOLINT: test helpers

const std::string kFixtures =
    std::string(MI_SOURCE_DIR) + "/test/fixtures/onnx_text";

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(kFixtures + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in.good()) << "committed fixture missing: " << relative;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A file in the test's temporary folder, removed with the test.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& bytes)
      : path_((std::filesystem::temp_directory_path() /
               ("mi_onnx_text_" + std::to_string(::getpid()) + "_" + name))
                  .string()) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(OnnxTextFormsTest, SniffRecognisesEachFormByContent) {
  std::string proto_text = ReadFixture("glow/batchNormPR2304.onnxtxt");
  std::string prototxt = ReadFixture("openvino/addmul_abc.prototxt");
  std::string json = ReadFixture("onnx_mlir/test_abs.json");
  std::string syntax =
      ReadFixture("onnx_mlir/layer_normalization_recompose.onnxtext");
  // Under names that say nothing, each form is recognised.
  EXPECT_GE(SniffOnnxText(proto_text, "model.txt"), 80);
  EXPECT_GE(SniffOnnxText(prototxt, "model"), 80);
  EXPECT_GE(SniffOnnxText(json, "model.json"), 85);
  EXPECT_GE(SniffOnnxText(syntax, "model.mlir"), 80);
  // A telling name raises the score.
  EXPECT_GT(SniffOnnxText(proto_text, "m.pbtxt"),
            SniffOnnxText(proto_text, "m.txt"));
  EXPECT_GT(SniffOnnxText(json, "m.onnx.json"), SniffOnnxText(json, "m.json"));
}

TEST(OnnxTextFormsTest, SniffLeavesOtherTextFormatsAlone) {
  // GE's ge_onnx dumps: the same protobuf text with "ge:" op types.
  EXPECT_EQ(SniffOnnxText("ir_version: 3\ngraph {\n  node {\n    op_type: "
                          "\"ge:Conv2D\"\n  }\n}\n",
                          "dump.pbtxt"),
            0);
  EXPECT_EQ(SniffOnnxText("ir_version: 3\ngraph {\n}\n",
                          "ge_onnx_00000001_graph_1_Build.pbtxt"),
            0);
  // Caffe's prototxt, TensorFlow's GraphDef pbtxt, GE's ge_proto dump.
  EXPECT_EQ(SniffOnnxText("name: \"LeNet\"\nlayer {\n  name: \"data\"\n}\n",
                          "lenet.prototxt"),
            0);
  EXPECT_EQ(SniffOnnxText("node {\n  name: \"x\"\n  op: \"Placeholder\"\n}\n",
                          "graph.pbtxt"),
            0);
  EXPECT_EQ(SniffOnnxText("graph {\n  name: \"g\"\n  op {\n    name: \"a\"\n"
                          "    type: \"Data\"\n  }\n}\n",
                          "ge_proto_1.txt"),
            0);
  // ATC's JSON and Chrome traces.
  EXPECT_EQ(SniffOnnxText(R"({"graph": [{"name": "g", "op": [{"name": "a",
      "type": "Data"}]}], "name": "m"})",
                          "model.json"),
            0);
  EXPECT_EQ(SniffOnnxText(R"({"traceEvents": [{"ph": "X"}]})", "t.json"), 0);
}

TEST(OnnxTextFormsTest, EveryFormReadsItsFixture) {
  struct Case {
    std::string file;
    size_t nodes;  // counted by hand in the file (bodies included)
  };
  for (const Case& c : {Case{"glow/batchNormPR2304.onnxtxt", 2},
                        Case{"openvino/add_abc_initializers.prototxt", 3},
                        Case{"onnx_mlir/loop_import_basic.onnxtext", 4},
                        Case{"onnx_mlir/raw_data.json", 12}}) {
    auto r = ImportText(ReadFixture(c.file), c.file);
    ASSERT_TRUE(r->status.ok()) << c.file << ": " << r->status.ToString();
    EXPECT_EQ(r->model.node_count(), c.nodes) << c.file;
  }
  // JSON's base64 bytes: raw_data.json's first constant is 3 floats in
  // "AACAPwAAAAAAAIA/" (12 bytes: 1.0, 0.0, 1.0).
  auto r = ImportText(ReadFixture("onnx_mlir/raw_data.json"), "raw.json");
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->model.FormatValueType(r->Value("output0")), "float32[3]");
}

TEST(OnnxTextFormsTest, SlashCommentLinesKeepLineNumbers) {
  // Three comment lines before the model: the parser's error (at the
  // closing brace after the unclosed call) is on the file's line 7.
  auto r = ImportText(
      "// RUN: onnx-mlir %s\n"
      "// a note\n"
      "  // an indented note\n"
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[3] x) => (float[3] y) {\n"
      "  y = Neg(x\n"
      "}\n",
      "lit.onnxtext");
  EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
  EXPECT_EQ(r->status.message().rfind("lit.onnxtext:7:", 0), 0u)
      << r->status.message();
}

TEST(OnnxTextFormsTest, ProtobufTextErrorsHavePlaceAndExpectation) {
  auto r = ImportText(
      "ir_version: 3\n"
      "graph {\n"
      "  node {\n"
      "    op_type: Relu\n"
      "  }\n"
      "}\n",
      "bad.prototxt");
  EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
  EXPECT_EQ(r->status.message().rfind("bad.prototxt:4:", 0), 0u)
      << r->status.message();
  EXPECT_NE(
      r->status.message().find("expected protobuf text of an ONNX ModelProto"),
      std::string::npos)
      << r->status.message();
  // No graph at all.
  auto no_graph =
      ImportText("ir_version: 3\nproducer_name: \"x\"\n", "n.pbtxt");
  EXPECT_EQ(no_graph->status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(no_graph->status.message().find("no graph"), std::string::npos);
  // '<' '>' message delimiters count towards the nesting guard.
  std::string deep = "graph ";
  for (int i = 0; i < 300; ++i) deep += "< node < attribute < g ";
  auto nested = ImportText(deep, "deep.pbtxt");
  EXPECT_EQ(nested->status.code(), StatusCode::kMalformedInput);
  // An unclosed quote ends at its line and hides no nesting after it.
  std::string hidden = "ir_version: 8\nproducer_name: \"broken\n";
  for (int i = 0; i < 100000; ++i) hidden += "graph { ";
  auto unclosed = ImportText(hidden, "u.pbtxt");
  EXPECT_EQ(unclosed->status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(unclosed->status.message().find("u.pbtxt:3:"), std::string::npos)
      << unclosed->status.message();
  EXPECT_NE(nested->status.message().find("nested too deeply"),
            std::string::npos)
      << nested->status.message();
}

TEST(OnnxTextFormsTest, JsonErrorsHavePlaceAndExpectation) {
  // A missing comma: line 3, column 3.
  auto r = ImportText("{\n  \"irVersion\": \"8\"\n  \"graph\": {}\n}\n",
                      "bad.onnx.json");
  EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
  EXPECT_EQ(
      r->status.message().rfind("bad.onnx.json:3:3: JSON syntax error", 0), 0u)
      << r->status.message();
  EXPECT_NE(r->status.message().find("expected JSON of an ONNX ModelProto"),
            std::string::npos);
  // Valid JSON, wrong schema: a node list that is not a list.
  auto schema = ImportText(
      "{\"irVersion\": \"8\", \"graph\": {\"node\": \"Relu\"}}", "s.json");
  EXPECT_EQ(schema->status.code(), StatusCode::kMalformedInput);
  // The value protobuf quotes is placed: "Relu" starts at column 38.
  EXPECT_EQ(schema->status.message().rfind(
                "s.json:1:38: at graph.node: invalid value \"Relu\"", 0),
            0u)
      << schema->status.message();
  EXPECT_NE(schema->status.message().find(
                "expected protobuf's JSON mapping of an ONNX ModelProto"),
            std::string::npos)
      << schema->status.message();
  // Deep nesting is refused before either parser runs.
  auto nested = ImportText("{\"graph\": " + std::string(5000, '['), "d.json");
  EXPECT_NE(nested->status.message().find("nested too deeply"),
            std::string::npos);
}

TEST(OnnxTextFormsTest, SniffHeadPassesOverALongCommentBlock) {
  std::string model =
      ReadFixture("onnx_mlir/layer_normalization_recompose.onnxtext");
  std::string comments;
  while (comments.size() < 3 * kSniffLookahead) {
    comments += "// CHECK: a line of a long lit-test header\n";
  }
  TempFile file("long.txt", comments + model);
  auto head = ReadSniffHead(file.path());
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  // The head starts where the model's own text starts (its first comment
  // lines belong to the block too).
  size_t model_start = model.find('<');
  EXPECT_EQ(*head, model.substr(model_start, kSniffLookahead));
  EXPECT_GE(SniffOnnxText(*head, file.path()), 80);
  // A head with anything but comments in it is the file's first bytes.
  TempFile plain("plain.txt", model);
  auto plain_head = ReadSniffHead(plain.path());
  ASSERT_TRUE(plain_head.ok());
  EXPECT_EQ(*plain_head, model.substr(0, kSniffLookahead));
}

}  // namespace
}  // namespace mi::importers
