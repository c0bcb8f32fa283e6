#include "importers/ge/ge_importer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/ge_model/ge_model_converter.h"
#include "io/chunk_reader.h"
#include "model/model.h"

namespace mi::importers {
namespace {

const std::string kFixtures =
    std::string(MI_SOURCE_DIR) + "/test/fixtures/ge/resnet_block/";
// Copies of public samples, origins in test/fixtures/samples/SOURCES.md.
const std::string kSamples =
    std::string(MI_SOURCE_DIR) + "/test/fixtures/samples/ascend/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Loaded {
  StringPool strings;
  Model model{&strings};
  DiagnosticSink diagnostics;
  ImportContext ctx;
  Status status;
};

std::unique_ptr<Loaded> Import(const std::string& path, bool json = false,
                               const std::string& text_override = "",
                               bool use_override = false) {
  auto r = std::make_unique<Loaded>();
  r->ctx.path = path;
  r->ctx.model = &r->model;
  r->ctx.diagnostics = &r->diagnostics;
  std::string text = use_override ? text_override : ReadFile(path);
  r->status = json ? ImportAtcJsonFromBuffer(text, r->ctx)
                   : ImportGeProtoTextFromBuffer(text, r->ctx);
  if (r->status.ok()) r->model.BuildIndexes();
  return r;
}

NodeId Find(const Loaded& r, std::string_view name) {
  return r.model.FindNode(r.ctx.graphs_added.at(0), name);
}

std::string AttrText(const Loaded& r, NodeId n, std::string_view name) {
  for (const Attribute& a : r.model.node_attributes(n)) {
    if (r.model.str(a.name) == name) return std::string(r.model.str(a.text));
  }
  return "<absent>";
}

TEST(GeImporterTest, BuildStageIsCompiledWithOriginsAndLayouts) {
  auto r = Import(kFixtures + "ge_proto_00000120_graph_1_Build.txt");
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  GraphId g = r->ctx.graphs_added.at(0);
  EXPECT_EQ(r->model.graph(g).level, LayerLevel::kCompiled);
  EXPECT_EQ(r->model.str(r->model.graph(g).producer), "GE Build");
  EXPECT_EQ(r->model.graph_nodes(g).size(), 7u);

  NodeId conv = Find(*r, "conv1");
  ASSERT_TRUE(conv.valid());
  EXPECT_EQ(r->model.str(r->model.node_op_type(conv)), "Conv2D");
  auto origins = r->model.node_origin_names(conv);
  ASSERT_EQ(origins.size(), 3u);
  EXPECT_EQ(r->model.str(origins[0]), "scale_conv1");
  EXPECT_EQ(r->model.str(origins[2]), "bn_conv1");
  EXPECT_EQ(AttrText(*r, conv, "pass_name"),
            "[BatchNormPreprocessFusionPass, ConvScaleFusionPass]");
  EXPECT_EQ(AttrText(*r, conv, "control_inputs"), "[data]");
  EXPECT_EQ(AttrText(*r, conv, "stream_id"), "1");
  // The control edge is not a data input.
  EXPECT_EQ(r->model.node_inputs(conv).size(), 1u);

  // A GE-inserted node: the attribute is there, with no names.
  NodeId trans = Find(*r, "trans_TransData_0");
  ASSERT_TRUE(trans.valid());
  EXPECT_TRUE(r->model.node_origin_names(trans).empty());
  EXPECT_EQ(AttrText(*r, trans, "_datadump_original_op_names"), "[]");

  ValueId v = r->model.node_outputs(trans)[0];
  EXPECT_EQ(r->model.str(r->model.value_name(v)), "trans_TransData_0:0");
  EXPECT_EQ(r->model.value_dtype(v), 10);  // float16
  EXPECT_EQ(r->model.value_rank(v), 5);
  EXPECT_EQ(r->model.str(r->model.value_layout(v)), "NC1HWC0");
  EXPECT_EQ(r->model.str(r->model.value_origin_layout(v)), "NCHW");
  EXPECT_EQ(r->model.str(r->model.value_origin_shape(v)), "[1,3,224,224]");
  // Consumers are linked through the "op:index" tensor names.
  ASSERT_EQ(r->model.value_consumers(v).size(), 1u);
  EXPECT_EQ(r->model.value_consumers(v)[0], conv);
}

TEST(GeImporterTest, EarlyStageIsFramework) {
  auto r = Import(kFixtures + "ge_proto_00000000_graph_1_PreRunBegin.txt");
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  GraphId g = r->ctx.graphs_added.at(0);
  EXPECT_EQ(r->model.graph(g).level, LayerLevel::kFramework);
  EXPECT_EQ(r->model.graph_nodes(g).size(), 7u);
  EXPECT_EQ(AttrText(*r, Find(*r, "bn_conv1"), "epsilon"), "1e-05");
}

TEST(GeImporterTest, RealDumpSample) {
  std::string path =
      kSamples + "ge_graph_dumps/ge_proto_00046_afterUBMatch.txt";
  ASSERT_TRUE(std::filesystem::exists(path)) << "committed sample missing";
  auto r = Import(path);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  GraphId g = r->ctx.graphs_added.at(0);
  EXPECT_EQ(r->model.graph(g).level, LayerLevel::kCompiled);
  EXPECT_GT(r->model.graph_nodes(g).size(), 50u);
  NodeId conv = Find(*r, "conv1");
  ASSERT_TRUE(conv.valid());
  EXPECT_EQ(r->model.node_origin_names(conv).size(), 3u);
  // Every data input resolves to a tensor some op produces.
  size_t unresolved = 0;
  for (NodeId n : r->model.graph_nodes(g)) {
    for (ValueId v : r->model.node_inputs(n)) {
      if (v.valid() && !r->model.value_producer(v).valid()) ++unresolved;
    }
  }
  EXPECT_EQ(unresolved, 0u);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kDanglingInput), 0u);
}

TEST(GeImporterTest, AtcJsonSample) {
  std::string path = kSamples + "atc_om_json/test.om.json";
  ASSERT_TRUE(std::filesystem::exists(path)) << "committed sample missing";
  auto r = Import(path, /*json=*/true);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  GraphId g = r->ctx.graphs_added.at(0);
  EXPECT_GT(r->model.graph_nodes(g).size(), 50u);
  size_t with_origins = 0, layouts = 0;
  for (NodeId n : r->model.graph_nodes(g)) {
    if (!r->model.node_origin_names(n).empty()) ++with_origins;
    for (ValueId v : r->model.node_outputs(n)) {
      if (!r->model.str(r->model.value_layout(v)).empty()) ++layouts;
    }
  }
  EXPECT_GT(with_origins, 10u);
  EXPECT_GT(layouts, 10u);
  // task_index_op_name: tasks per op ("trans_Cast_0" launches one).
  EXPECT_EQ(AttrText(*r, Find(*r, "trans_Cast_0"), "om_task_count"), "1");
  EXPECT_EQ(r->model.graph(g).level, LayerLevel::kCompiled);
}

TEST(GeImporterTest, SyntaxErrorsNameLineAndColumn) {
  auto r =
      Import("ge_proto_1_Build.txt", false,
             "graph {\n  op {\n    name: \"a\"\n    id: \"x\"\n  }\n}\n", true);
  ASSERT_FALSE(r->status.ok());
  EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(r->status.message().find("ge_proto_1_Build.txt:4:"),
            std::string::npos)
      << r->status.ToString();

  auto empty = Import("x.txt", false, "  \n", true);
  EXPECT_NE(empty.get()->status.message().find("empty file"),
            std::string::npos);

  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "graph { ";
  auto nested = Import("x.txt", false, deep, true);
  EXPECT_NE(nested->status.message().find("nested too deeply"),
            std::string::npos);

  // A quote left open ends at its line, as protobuf's tokenizer ends it, so
  // it cannot hide the nesting after it from the guard (protobuf's skipping
  // of the unknown field 'a' would otherwise recurse 100,000 deep).
  std::string hidden = "graph { name: \"broken\n";
  for (int i = 0; i < 100000; ++i) hidden += "a {";
  auto unclosed = Import("x.txt", false, hidden, true);
  EXPECT_EQ(unclosed->status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(unclosed->status.message().find("x.txt:2:"), std::string::npos)
      << unclosed->status.message();
  EXPECT_NE(unclosed->status.message().find("nested too deeply"),
            std::string::npos)
      << unclosed->status.message();

  auto json = Import("m.om.json", true, "{\n  \"graph\": [\n  {,\n", true);
  EXPECT_EQ(json->status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(json->status.message().find("m.om.json:3:"), std::string::npos)
      << json->status.message();

  auto shape = Import("m.om.json", true, "{\"graph\": [3]}", true);
  EXPECT_NE(shape->status.message().find("a graph is not an object"),
            std::string::npos)
      << shape->status.message();
}

TEST(GeImporterTest, DumpFileNames) {
  ge::DumpFileName a =
      ge::ParseDumpFileName("/d/ge_proto_00000120_graph_1_Build.txt");
  EXPECT_EQ(a.index, 120);
  EXPECT_EQ(a.graph_id, "1");
  EXPECT_EQ(a.stage, "Build");
  ge::DumpFileName b = ge::ParseDumpFileName("ge_proto_00046_afterUBMatch.txt");
  EXPECT_EQ(b.index, 46);
  EXPECT_EQ(b.stage, "afterUBMatch");
  ge::DumpFileName c = ge::ParseDumpFileName(
      "ge_onnx_00000003_aclop_graph_7_RunCustomPass_AfterInferShape.pbtxt");
  EXPECT_EQ(c.index, 3);
  EXPECT_EQ(c.graph_id, "7");
  EXPECT_EQ(c.stage, "RunCustomPass_AfterInferShape");
  EXPECT_TRUE(ge::IsCompiledStage("Build"));
  EXPECT_FALSE(ge::IsCompiledStage("PreRunBegin"));
}

TEST(GeImporterTest, SniffsDumpsAndAtcJson) {
  auto text = CreateGeProtoTextImporter();
  auto json = CreateAtcJsonImporter();
  std::string dump =
      ReadFile(kFixtures + "ge_proto_00000120_graph_1_Build.txt");
  EXPECT_GE(text->Sniff(dump, "ge_proto_00000120_graph_1_Build.txt"), 90);
  EXPECT_EQ(text->Sniff("{\"traceEvents\": []}", "t.json"), 0);
  EXPECT_EQ(json->Sniff("{\"traceEvents\": []}", "t.json"), 0);
  EXPECT_GE(json->Sniff("{\"attr\": [{\"key\": \"atc_cmdline\", \"value\": "
                        "{\"s\": \"atc\"}}], \"graph\": [",
                        "model.json"),
            80);
  // Indented as `atc --mode=1 --json=...` writes it, under a neutral name:
  // still ATC JSON, and no longer taken for a Chrome trace.
  std::string indented =
      "{\n    \"attr\": [\n        {\n            \"key\": "
      "\"attr_model_out_nodes_name\",\n            \"value\": {\n"
      "                \"list\": {\n                    \"s\": [\n";
  EXPECT_GE(json->Sniff(indented, "model.json"), 80);
  EXPECT_EQ(text->Sniff(indented, "model.json"), 0);
  // The real sample re-indented (test/fixtures/ge/atc_json_indented).
  std::string path = std::string(MI_SOURCE_DIR) +
                     "/test/fixtures/ge/atc_json_indented/model.json.gz";
  ASSERT_TRUE(std::filesystem::exists(path)) << "committed fixture missing";
  auto plain = io::ReadDecompressedFile(path);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_GE(json->Sniff(std::string_view(*plain).substr(0, kSniffLookahead),
                        "model.json"),
            80);
  // A Chrome trace whose first key is not attr stays a trace.
  EXPECT_EQ(json->Sniff("{\n  \"attr\": 1, \"traceEvents\": []}", "t.json"), 0);
}

}  // namespace
}  // namespace mi::importers
