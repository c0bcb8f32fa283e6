#include "importers/om/om_importer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/ge_model/ge_ir_subset.pb.h"
#include "importers/om/om_subset.pb.h"
#include "model/model.h"

namespace mi::importers {
namespace {

// Copies of public .om files, origins in test/fixtures/om/README.md.
const std::string kFixtures = std::string(MI_SOURCE_DIR) + "/test/fixtures/om/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ------------------------------------------------------------ a tiny writer
// Builds .om files byte by byte as the format notes describe them
// (docs/reference/om.md), so each case below states its bytes.

void PutU32(std::string& s, size_t at, uint32_t v) {
  std::memcpy(s.data() + at, &v, 4);
}
void PutU64(std::string& s, size_t at, uint64_t v) {
  std::memcpy(s.data() + at, &v, 8);
}
void AppendU32(std::string& s, uint32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}
void AppendU64(std::string& s, uint64_t v) {
  s.append(reinterpret_cast<const char*>(&v), 8);
}

using Parts = std::vector<std::pair<uint32_t, std::string>>;

// One {table, data} group; offsets run back to back from the table's end.
std::string Group(const Parts& parts, bool wide) {
  std::string table;
  AppendU32(table, static_cast<uint32_t>(parts.size()));
  if (wide) AppendU32(table, 0);
  uint64_t offset = 0;
  std::string data;
  for (const auto& [type, bytes] : parts) {
    AppendU32(table, type);
    if (wide) {
      AppendU32(table, 0);
      AppendU64(table, offset);
      AppendU64(table, bytes.size());
    } else {
      AppendU32(table, static_cast<uint32_t>(offset));
      AppendU32(table, static_cast<uint32_t>(bytes.size()));
    }
    offset += bytes.size();
    data += bytes;
  }
  return table + data;
}

struct HeaderSpec {
  uint32_t version = 0x20000000;
  uint8_t model_type = 0;
  bool use_model_length = false;  // 64-bit length: wide entries
  uint32_t model_num = 1;
  uint8_t is_unknow_model = 0;
  uint8_t is_encrypt = 0;
};

std::string Om(const HeaderSpec& spec, const std::string& body) {
  std::string h(256, '\0');
  std::memcpy(h.data(), "IMOD", 4);
  PutU32(h, 4, 256);
  PutU32(h, 8, spec.version);
  h[80] = static_cast<char>(spec.is_encrypt);
  h[82] = static_cast<char>(spec.model_type);
  std::memcpy(h.data() + 84, "test", 4);
  if (spec.version >= 0x20000000) {
    PutU32(h, 156, spec.model_num);
    h[193] = static_cast<char>(spec.is_unknow_model);
  }
  if (spec.use_model_length) {
    PutU64(h, 184, body.size());
  } else {
    PutU32(h, 76, static_cast<uint32_t>(body.size()));
  }
  return h + body;
}

// A kernel store: {magic, name_len, bin_len}, name, binary per item.
std::string KernelStore(
    const std::vector<std::pair<std::string, size_t>>& items) {
  std::string s;
  for (const auto& [name, size] : items) {
    AppendU32(s, 0x5D776EFD);
    AppendU32(s, static_cast<uint32_t>(name.size()));
    AppendU32(s, static_cast<uint32_t>(size));
    s += name;
    s += std::string(size, '\x7f');
  }
  return s;
}

ge_ir::OpDef* AddOp(ge_ir::GraphDef* g, const std::string& name,
                    const std::string& type, int64_t id,
                    std::vector<std::string> inputs = {}) {
  ge_ir::OpDef* op = g->add_op();
  op->set_name(name);
  op->set_type(type);
  op->set_id(id);
  for (const std::string& in : inputs) op->add_input(in);
  ge_ir::TensorDescriptor* out = op->add_output_desc();
  out->set_dtype(ge_ir::DT_FLOAT16);
  out->set_layout("NC1HWC0");
  for (int64_t d : {1, 1, 4, 4, 16}) out->mutable_shape()->add_dim(d);
  (*out->mutable_attr())["origin_format"].set_s("NCHW");
  return op;
}

// data -> relu -> out, with a Const whose 2048 weight bytes lie in
// WEIGHTS_DATA at offset 512.
ge_ir::ModelDef SmallModel(const std::string& graph_name = "g") {
  ge_ir::ModelDef m;
  m.set_name("small");
  ge_ir::GraphDef* g = m.add_graph();
  g->set_name(graph_name);
  AddOp(g, "data", "Data", 0);
  ge_ir::OpDef* c = AddOp(g, "w", "Const", 1);
  ge_ir::TensorDescriptor* d =
      (*c->mutable_attr())["value"].mutable_t()->mutable_desc();
  d->set_weight_size(2048);
  d->set_data_offset(512);
  AddOp(g, "relu", "Relu", 2, {"data:0", "w:0"});
  AddOp(g, "out", "NetOutput", 3, {"relu:0"});
  return m;
}

// A kernel task of op `op_index`, and an event task of no op.
om_ir::ModelTaskDef SmallTasks(uint32_t op_index = 2) {
  om_ir::ModelTaskDef t;
  om_ir::TaskDef* k = t.add_task();
  k->set_type(0);
  k->set_stream_id(1);
  k->mutable_kernel()->mutable_context()->set_op_index(op_index);
  k->mutable_kernel()->set_kernel_name("te_relu_abc__kernel0");
  k->mutable_kernel()->set_block_dim(8);
  om_ir::TaskDef* e = t.add_task();
  e->set_type(1);  // EVENT_RECORD
  e->set_stream_id(1);
  return t;
}

Parts SmallParts(const std::string& graph_name = "g") {
  return {{0, SmallModel(graph_name).SerializeAsString()},
          {1, std::string(4096, '\0')},
          {3, KernelStore({{"relu", 100}})},
          {2, SmallTasks().SerializeAsString()}};
}

// ------------------------------------------------------------ loading

struct Loaded {
  StringPool strings;
  Model model{&strings};
  DiagnosticSink diagnostics;
  ImportContext ctx;
  Status status;
};

std::unique_ptr<Loaded> Load(const std::string& bytes,
                             const std::string& path = "x.om") {
  auto r = std::make_unique<Loaded>();
  r->ctx.path = path;
  r->ctx.model = &r->model;
  r->ctx.diagnostics = &r->diagnostics;
  r->status = ImportOmFromBuffer(bytes, r->ctx);
  if (r->status.ok()) r->model.BuildIndexes();
  return r;
}

NodeId Find(const Loaded& r, std::string_view name, size_t root = 0) {
  return r.model.FindNode(r.ctx.graphs_added.at(root), name);
}

std::string Attr(const Loaded& r, NodeId n, std::string_view name) {
  for (const Attribute& a : r.model.node_attributes(n)) {
    if (r.model.str(a.name) == name) return std::string(r.model.str(a.text));
  }
  return "<none>";
}

std::string Meta(const Loaded& r, std::string_view key, size_t root = 0) {
  for (const auto& [k, v] :
       r.model.graph(r.ctx.graphs_added.at(root)).metadata) {
    if (r.model.str(k) == key) return std::string(r.model.str(v));
  }
  return "<none>";
}

// ------------------------------------------------------------ samples

// Expected numbers: docs/reference/om.md section 7 (a separate probe) and
// test/python/om_reference.py's decode of the same file.
TEST(OmSampleTest, AutoencoderOpsTasksKernelsAndLayouts) {
  auto r = Load(ReadFile(kFixtures + "modelzoo_tf_autoencoder_hh_om.om"),
                "hh_om.om");
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  ASSERT_EQ(r->ctx.graphs_added.size(), 1u);
  GraphId g = r->ctx.graphs_added[0];
  EXPECT_EQ(r->model.graph(g).level, LayerLevel::kCompiled);
  EXPECT_EQ(r->model.graph_nodes(g).size(), 46u);
  int consts = 0;
  int64_t tasks = 0;
  for (NodeId n : r->model.graph_nodes(g)) {
    if (r->model.str(r->model.node_op_type(n)) == "Const") ++consts;
    std::string count = Attr(*r, n, "om_task_count");
    if (count != "<none>") tasks += std::stoll(count);
  }
  EXPECT_EQ(consts, 17);
  // 30 tasks; the model attr task_index_op_name names the op of each, the
  // FUSION_START / EVENT_* / MODEL_END_GRAPH tasks included.
  EXPECT_EQ(Meta(*r, "om tasks"), "30");
  EXPECT_EQ(Meta(*r, "om tasks of no op"), "<none>");
  EXPECT_EQ(tasks, 30);
  EXPECT_EQ(Meta(*r, "om kernel binaries"), "26");
  EXPECT_EQ(Meta(*r, "weights (WEIGHTS_DATA, not read)"), "386560 bytes");
  EXPECT_NE(Meta(*r, "om header").find("version 2"), std::string::npos);
  EXPECT_NE(Meta(*r, "om header").find("12-byte"), std::string::npos);
  // Tasks 0 and 1 of the list: FUSION_START, then the atomic clean kernel
  // (op_index 1, block_dim 2).
  NodeId clean = Find(*r, "atomic_addr_clean-1_0");
  ASSERT_TRUE(clean.valid());
  EXPECT_EQ(Attr(*r, clean, "om_task_0"), "FUSION_START, stream 0");
  EXPECT_EQ(Attr(*r, clean, "om_task_1").rfind("KERNEL te_atomicaddrclean_", 0),
            0u);
  EXPECT_NE(Attr(*r, clean, "om_task_1").find("block_dim 2"),
            std::string::npos);
  EXPECT_EQ(Attr(*r, clean, "om_kernel_binary"), "TBE_KERNELS, 1344 bytes");
  // A Const's byte size is its weight_size.
  NodeId w = Find(*r, "dynamic_const_5478_34");
  ASSERT_TRUE(w.valid());
  EXPECT_EQ(r->model.value_data_bytes(r->model.node_outputs(w)[0]), 12800u);
  EXPECT_EQ(Attr(*r, w, "om_weight_bytes"), "12800 (WEIGHTS_DATA offset 512)");
  // Device layouts with origin formats.
  bool fractal_or_5hd = false;
  for (size_t v = 0; v < r->model.value_count(); ++v) {
    std::string_view layout =
        r->model.str(r->model.value_layout(ValueId(static_cast<uint32_t>(v))));
    if (layout == "NC1HWC0" || layout == "FRACTAL_Z") fractal_or_5hd = true;
  }
  EXPECT_TRUE(fractal_or_5hd);
}

TEST(OmSampleTest, RootModelWithSubmodelsAndCompressedNames) {
  auto r = Load(
      ReadFile(kFixtures + "ge_st_dynamic_and_static_graph_without_unfold.om"),
      "dyn.om");
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  // The submodels' graphs are the root model's subgraphs: one root graph.
  ASSERT_EQ(r->ctx.graphs_added.size(), 1u);
  EXPECT_EQ(r->model.node_count(), 6u + 4u + 4u);
  EXPECT_NE(Meta(*r, "om models").find("3 (root model, then sub_1, sub_2)"),
            std::string::npos);
  // Root dictionary entry 0 is "index" (bytes "\x12\x05index" at the start
  // of attr_name_enum); Data ops carry it as key "\0\x01".
  NodeId data = Find(*r, "data_1");
  ASSERT_TRUE(data.valid());
  EXPECT_NE(Attr(*r, data, "index"), "<none>");
  for (size_t n = 0; n < r->model.node_count(); ++n) {
    for (const Attribute& a :
         r->model.node_attributes(NodeId(static_cast<uint32_t>(n)))) {
      std::string_view name = r->model.str(a.name);
      EXPECT_FALSE(!name.empty() && name[0] == '\0')
          << "unexpanded attribute name on node " << n;
    }
  }
}

// ------------------------------------------------------------ hand-built

TEST(OmBuiltTest, WideTableTasksKernelsAndWeightSizes) {
  HeaderSpec spec;
  spec.use_model_length = true;  // model_length set: 24-byte entries
  auto r = Load(Om(spec, Group(SmallParts(), true)));
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  NodeId relu = Find(*r, "relu");
  ASSERT_TRUE(relu.valid());
  EXPECT_EQ(Attr(*r, relu, "om_task_count"), "1");
  EXPECT_EQ(Attr(*r, relu, "om_task_0"),
            "KERNEL te_relu_abc__kernel0, stream 1, block_dim 8");
  EXPECT_EQ(Attr(*r, relu, "om_kernel_binary"), "TBE_KERNELS, 100 bytes");
  EXPECT_EQ(r->model.value_data_bytes(r->model.node_outputs(Find(*r, "w"))[0]),
            2048u);
  EXPECT_EQ(Meta(*r, "om tasks"), "2");
  EXPECT_EQ(Meta(*r, "om tasks of no op"), "1");
  EXPECT_EQ(Meta(*r, "weights (WEIGHTS_DATA, not read)"), "4096 bytes");
  EXPECT_NE(Meta(*r, "om header").find("24-byte"), std::string::npos);
  // Layouts come through the GE converter.
  ValueId out = r->model.node_outputs(relu)[0];
  EXPECT_EQ(r->model.str(r->model.value_layout(out)), "NC1HWC0");
  EXPECT_EQ(r->model.str(r->model.value_origin_layout(out)), "NCHW");
}

TEST(OmBuiltTest, VersionOneHeaderTinyTable) {
  HeaderSpec spec;
  spec.version = 0x10000000;
  auto r = Load(Om(spec, Group(SmallParts(), false)));
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  EXPECT_EQ(r->model.node_count(), 4u);
  EXPECT_NE(Meta(*r, "om header").find("version 1"), std::string::npos);
}

TEST(OmBuiltTest, TaskIndexOpNameNamesEachTasksOp) {
  ge_ir::ModelDef m = SmallModel();
  auto* names = (*m.mutable_attr())["task_index_op_name"].mutable_list();
  names->add_s("out");  // overrides op_index 2 (relu)
  names->add_s("data");
  auto r = Load(Om({}, Group({{0, m.SerializeAsString()},
                              {2, SmallTasks().SerializeAsString()}},
                             false)));
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  EXPECT_EQ(Attr(*r, Find(*r, "out"), "om_task_count"), "1");
  EXPECT_EQ(Attr(*r, Find(*r, "data"), "om_task_0"), "EVENT_RECORD, stream 1");
  EXPECT_EQ(Attr(*r, Find(*r, "relu"), "om_task_count"), "<none>");
}

TEST(OmBuiltTest, SeveralModelsRootAndSubmodels) {
  // Root model: graph "root" with op "call" whose subgraph is "sub";
  // group 2 is the submodel "sub" (same graph name), with its own tasks;
  // group 3 is a model of another graph, loaded as a second root graph.
  ge_ir::ModelDef root;
  root.set_name("root");
  ge_ir::GraphDef* g = root.add_graph();
  g->set_name("root");
  AddOp(g, "in", "Data", 0);
  AddOp(g, "call", "PartitionedCall", 1, {"in:0"})->add_subgraph_name("sub");
  *root.add_graph() = SmallModel("sub").graph(0);
  ge_ir::ModelDef sub = SmallModel("sub");
  sub.set_name("sub");
  ge_ir::ModelDef other = SmallModel("other");
  other.set_name("other");
  std::string body = Group({{0, root.SerializeAsString()}}, true) +
                     Group({{0, sub.SerializeAsString()},
                            {2, SmallTasks().SerializeAsString()}},
                           true) +
                     Group({{0, other.SerializeAsString()},
                            {2, SmallTasks(3).SerializeAsString()}},
                           true);
  HeaderSpec spec;
  spec.use_model_length = true;
  spec.model_num = 3;
  spec.is_unknow_model = 1;
  auto r = Load(Om(spec, body));
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  ASSERT_EQ(r->ctx.graphs_added.size(), 2u);
  EXPECT_EQ(r->model.node_count(), 2u + 4u + 4u);
  // The submodel's kernel task lands on the root model's subgraph op.
  EXPECT_EQ(Attr(*r, Find(*r, "relu", 0), "om_task_0"),
            "KERNEL te_relu_abc__kernel0, stream 1, block_dim 8");
  EXPECT_EQ(Attr(*r, Find(*r, "out", 1), "om_task_count"), "1");
  EXPECT_EQ(r->model.str(r->model.graph(r->ctx.graphs_added[1]).name), "other");
}

TEST(OmBuiltTest, FlowModelNestedOmFiles) {
  HeaderSpec inner_spec;
  inner_spec.use_model_length = true;
  std::string inner = Om(inner_spec, Group(SmallParts("npu_graph"), true));
  // SubmodelDef: 1 model_name "npu", 2 model_type "NPU", 3 om_data.
  std::string submodel;
  submodel += '\x0a';
  submodel += '\x03';
  submodel += "npu";
  submodel += '\x12';
  submodel += '\x03';
  submodel += "NPU";
  submodel += '\x1a';
  // om_data length as a varint.
  size_t n = inner.size();
  while (n >= 0x80) {
    submodel += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  submodel += static_cast<char>(n);
  submodel += inner;
  ge_ir::ModelDef root;
  root.set_name("flow");
  ge_ir::GraphDef* g = root.add_graph();
  g->set_name("flow_root");
  AddOp(g, "in", "Data", 0);
  HeaderSpec spec;
  spec.model_type = 3;  // flow: wide entries even without model_length
  auto r = Load(
      Om(spec, Group({{0, root.SerializeAsString()}, {7, submodel}}, true)));
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  ASSERT_EQ(r->ctx.graphs_added.size(), 2u);
  EXPECT_EQ(Meta(*r, "om flow submodels"), "npu (NPU)");
  EXPECT_EQ(Meta(*r, "om flow submodel", 1), "npu");
  EXPECT_EQ(Attr(*r, Find(*r, "relu", 1), "om_task_count"), "1");
}

TEST(OmBuiltTest, CompressedAttributeNamesAndValues) {
  ge_ir::ModelDef m = SmallModel();
  auto& attrs = *m.mutable_attr();
  auto* names = attrs["attr_name_enum"].mutable_list();
  auto* use_string = attrs["attrs_use_string_value"].mutable_list();
  for (int i = 0; i < 131; ++i) {
    names->add_s("name" + std::to_string(i));
    use_string->add_b(i == 1 || i == 130);
  }
  auto* values = attrs["attr_value_enum"].mutable_list();
  values->add_s("NCHW");
  values->add_s("ND");
  auto& op = *m.mutable_graph(0)->mutable_op(2)->mutable_attr();
  // Index 0: "\0" then digit 0 stored as 1.
  op[std::string("\0\x01", 2)].set_i(7);
  // Index 1, value from the dictionary: i = 1 -> "ND".
  op[std::string("\0\x02", 2)].set_i(1);
  // Index 130 = 3 + 1 * 127: digits 3, 1 stored as 4, 2; list.i of
  // value indexes -> strings.
  auto* list = op[std::string("\0\x04\x02", 3)].mutable_list();
  list->add_i(0);
  list->add_i(1);
  op["plain_name"].set_i(5);
  // A tensor descriptor's attribute is encoded too.
  (*m.mutable_graph(0)
        ->mutable_op(2)
        ->mutable_output_desc(0)
        ->mutable_attr())[std::string("\0\x01", 2)]
      .set_i(3);
  auto r = Load(Om({}, Group({{0, m.SerializeAsString()}}, false)));
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  NodeId relu = Find(*r, "relu");
  EXPECT_EQ(Attr(*r, relu, "name0"), "7");
  EXPECT_EQ(Attr(*r, relu, "name1"), "ND");
  EXPECT_EQ(Attr(*r, relu, "name130"), "[NCHW, ND]");
  EXPECT_EQ(Attr(*r, relu, "plain_name"), "5");
}

TEST(OmBuiltTest, CompressedNameOutOfRangeIsReportedNotFatal) {
  ge_ir::ModelDef m = SmallModel();
  (*m.mutable_attr())["attr_name_enum"].mutable_list()->add_s("only");
  (*m.mutable_graph(0)->mutable_op(2)->mutable_attr())[std::string("\0\x09", 2)]
      .set_i(1);
  auto r = Load(Om({}, Group({{0, m.SerializeAsString()}}, false)));
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  bool reported = false;
  for (const Diagnostic& d : r->diagnostics.log()) {
    if (d.message.find("compressed attribute names") != std::string::npos) {
      reported = true;
    }
  }
  EXPECT_TRUE(reported);
}

// ------------------------------------------------------------ bad input

void ExpectError(const std::string& bytes, const std::string& fragment) {
  auto r = Load(bytes, "bad.om");
  ASSERT_FALSE(r->status.ok()) << "accepted; wanted: " << fragment;
  EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(r->status.message().find(fragment), std::string::npos)
      << r->status.message();
  EXPECT_EQ(r->status.message().rfind("bad.om: byte ", 0), 0u)
      << r->status.message();
}

std::string Good() { return Om({}, Group(SmallParts(), false)); }

TEST(OmBadInputTest, TruncatedInsideTheHeader) {
  ExpectError(Good().substr(0, 100), "byte 100: truncated");
}

TEST(OmBadInputTest, TruncatedBody) {
  std::string s = Good();
  ExpectError(s.substr(0, s.size() - 10), "byte 76: the header says");
}

TEST(OmBadInputTest, WrongMagic) {
  std::string pico = Good();
  std::memcpy(pico.data(), "PICO", 4);
  ExpectError(pico, "byte 0: the magic is 'PICO': a HiSilicon SVP model");
  std::string zip = Good();
  std::memcpy(zip.data(), "PK\x03\x04", 4);
  ExpectError(zip, "a zip archive (an OM2 model)");
}

TEST(OmBadInputTest, EncryptedFlag) {
  HeaderSpec spec;
  spec.is_encrypt = 1;
  ExpectError(Om(spec, Group(SmallParts(), false)),
              "byte 80: the model is encrypted");
}

TEST(OmBadInputTest, PartitionBeyondTheEnd) {
  std::string s = Good();
  // Entry 4 (TASK_INFO) is at 256 + 4 + 3 * 12; its size field at +8.
  size_t entry = 256 + 4 + 3 * 12;
  PutU32(s, entry + 8, 1u << 20);
  ExpectError(s, "byte " + std::to_string(entry) +
                     ": partition 4 (TASK_INFO) of table 1: 1048576 bytes");
}

TEST(OmBadInputTest, OverlappingOffsets) {
  std::string s = Good();
  size_t entry = 256 + 4 + 1 * 12;  // WEIGHTS_DATA
  PutU32(s, entry + 4, 4);          // starts inside MODEL_DEF
  ExpectError(s, "byte " + std::to_string(entry) +
                     ": partition 2 (WEIGHTS_DATA) of table 1 starts at "
                     "offset 4");
  EXPECT_NE(Load(s)->status.message().find("overlaps"), std::string::npos);
}

TEST(OmBadInputTest, SizeMismatchWithTheHeader) {
  std::string s = Good() + "extra";
  ExpectError(s, "byte 76: the header says");
  // Lengths agree but the tables end before the file does.
  std::string t = Good();
  t += std::string(16, '\0');
  PutU32(t, 76, static_cast<uint32_t>(t.size() - 256));
  ExpectError(t, "16 bytes are not in any partition");
}

TEST(OmBadInputTest, ModelDefThatIsNotAModelDef) {
  ExpectError(Om({}, Group({{0, std::string("\xff\xff\xff", 3)}}, false)),
              "the MODEL_DEF partition (3 bytes) is not a valid");
}

TEST(OmBadInputTest, KernelStoreItemBadMagic) {
  Parts parts = SmallParts();
  parts[2].second[0] = 'x';
  ExpectError(Om({}, Group(parts, false)), "kernel store item magic");
}

TEST(OmBadInputTest, ModelNumLargerThanTheFile) {
  HeaderSpec spec;
  spec.model_num = 1000000;
  spec.is_unknow_model = 1;
  ExpectError(Om(spec, Group(SmallParts(), false)), "byte 156: model_num");
}

TEST(OmSniffTest, ByMagicAndByName) {
  auto importer = CreateOmImporter();
  EXPECT_EQ(importer->Sniff("IMOD\x00\x01", "model.bin"), 100);
  EXPECT_GT(importer->Sniff("PICO", "model.om"), 0);
  EXPECT_EQ(importer->Sniff("{\"graph\"", "model.json"), 0);
}

}  // namespace
}  // namespace mi::importers
