// The training snapshot importer on snapshots written here with libsqlite3
// and the monitor's schema file (snapshot_test_util.h): every expected value
// is one the test wrote. Bad inputs: each fails with the file, the table or
// row and what was expected named.

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/builtin_importers.h"
#include "importers/common/registry.h"
#include "importers/training_snapshot/snapshot_test_util.h"
#include "importers/training_snapshot/training_snapshot_importer.h"
#include "model/model.h"

namespace mi::importers {
namespace {

using training_test::SnapshotFile;
using training_test::WriteTinySnapshot;

struct Imported {
  StringPool strings;
  Model model{&strings};
  DiagnosticSink diagnostics;
  training::TrainingRecord record;
  ImportContext ctx;
  Status status;
};

std::unique_ptr<Imported> Import(const std::string& path) {
  auto r = std::make_unique<Imported>();
  r->ctx.path = path;
  r->ctx.model = &r->model;
  r->ctx.training = &r->record;
  r->ctx.diagnostics = &r->diagnostics;
  r->status = training_snapshot::ImportTrainingSnapshot(r->ctx);
  if (r->status.ok()) r->model.BuildIndexes();
  return r;
}

void ExpectError(const std::string& path, StatusCode code,
                 const std::vector<std::string>& fragments) {
  auto r = Import(path);
  ASSERT_FALSE(r->status.ok()) << path;
  EXPECT_EQ(r->status.code(), code) << r->status.message();
  EXPECT_NE(r->status.message().find(path), std::string::npos)
      << r->status.message();
  for (const std::string& f : fragments) {
    EXPECT_NE(r->status.message().find(f), std::string::npos)
        << "'" << f << "' not in: " << r->status.message();
  }
}

TEST(TrainingSnapshot, ReadsMetaLayersStepsMetricsTriggers) {
  SnapshotFile f;
  WriteTinySnapshot(f);
  f.Close();
  auto r = Import(f.path());
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  const training::TrainingRecord& rec = r->record;
  EXPECT_EQ(rec.path, f.path());
  EXPECT_EQ(rec.version, 1);
  EXPECT_EQ(rec.model, "TinyNet");
  EXPECT_EQ(rec.optimizer, "SGD");
  EXPECT_EQ(rec.status, "ended");
  EXPECT_EQ(rec.capture_window, 1);
  EXPECT_EQ(rec.anomaly_step, 2);
  EXPECT_EQ(rec.window_first, 1);
  EXPECT_EQ(rec.window_last, 2);
  EXPECT_EQ(rec.meta.at("sample_limit"), "65536");
  EXPECT_EQ(rec.triggers_armed,
            (std::vector<std::string>{"loss_spike:3:10", "nan"}));
  EXPECT_DOUBLE_EQ(rec.thresholds.vanishing, 1e-6);
  EXPECT_DOUBLE_EQ(rec.thresholds.exploding, 40);
  EXPECT_DOUBLE_EQ(rec.thresholds.dead, 0.25);
  EXPECT_EQ(rec.thresholds.loss_spike_window, 5);
  ASSERT_EQ(rec.optimizer_groups.size(), 1u);
  EXPECT_DOUBLE_EQ(rec.optimizer_groups[0].lr, 0.1);
  EXPECT_DOUBLE_EQ(rec.optimizer_groups[0].momentum, 0.9);
  EXPECT_EQ(rec.optimizer_groups[0].layers, (std::vector<int32_t>{2, 4}));

  ASSERT_EQ(rec.layer_count(), 7u);
  EXPECT_EQ(rec.layers[0].name, "");
  EXPECT_EQ(rec.layers[0].parent, -1);
  EXPECT_EQ(rec.layers[2].name, "encoder.0");
  EXPECT_EQ(rec.layers[2].type, "Linear");
  EXPECT_EQ(rec.layers[2].parent, 1);
  EXPECT_EQ(rec.layers[2].forward_order, 2);
  EXPECT_EQ(rec.layers[2].param_count, 12);
  EXPECT_EQ(rec.layers[2].attributes.at("in_features"), "3");
  EXPECT_EQ(rec.layers[2].attributes.at("init_std"), "0.5");
  EXPECT_EQ(rec.layers[5].forward_order, -1);
  EXPECT_EQ(rec.edges.size(), 4u);

  // Steps in ascending order whatever the row order.
  ASSERT_EQ(rec.step_count(), 3u);
  EXPECT_EQ(rec.steps[0].step, 0);
  EXPECT_EQ(rec.steps[1].step, 1);
  EXPECT_EQ(rec.steps[2].step, 2);
  EXPECT_DOUBLE_EQ(rec.steps[0].loss, 0.5);
  EXPECT_TRUE(std::isnan(rec.steps[2].loss));
  EXPECT_TRUE(rec.steps[2].loss_nonfinite);
  EXPECT_EQ(rec.steps[2].grad_nonfinite, 7);
  EXPECT_DOUBLE_EQ(rec.steps[1].grad_norm, 2.5);
  EXPECT_DOUBLE_EQ(rec.steps[1].loss_scale, 1024.0);
  EXPECT_TRUE(std::isnan(rec.steps[0].loss_scale));
  EXPECT_EQ(rec.steps[0].clipped, 0);
  EXPECT_EQ(rec.steps[1].clipped, 1);
  EXPECT_EQ(rec.steps[2].clipped, -1);
  EXPECT_EQ(rec.steps[1].elapsed_ns, 2000);
  EXPECT_FALSE(rec.steps[0].captured);
  EXPECT_TRUE(rec.steps[2].captured);

  // Metrics at [step_index * layers + layer]; rows absent: NaN / 0 / "".
  const training::LayerStepColumns& m = rec.metrics;
  ASSERT_EQ(m.grad_norm.size(), 21u);
  EXPECT_DOUBLE_EQ(m.grad_norm[rec.at(0, 2)], 1.5);
  EXPECT_DOUBLE_EQ(m.weight_norm[rec.at(0, 2)], 3.0);
  EXPECT_DOUBLE_EQ(m.act_abs_max[rec.at(0, 2)], 4.0);
  EXPECT_EQ(m.act_dtype[rec.at(0, 2)], "float32");
  EXPECT_TRUE(std::isnan(m.grad_norm[rec.at(2, 2)]));
  EXPECT_EQ(m.grad_nan[rec.at(2, 2)], 3);
  EXPECT_DOUBLE_EQ(m.dead_fraction[rec.at(2, 2)], 0.5);
  EXPECT_EQ(m.act_dtype[rec.at(2, 2)], "float16");
  EXPECT_DOUBLE_EQ(m.grad_norm[rec.at(1, 4)], 0.75);
  EXPECT_TRUE(std::isnan(m.grad_norm[rec.at(1, 2)]));
  EXPECT_EQ(m.grad_nan[rec.at(1, 2)], 0);
  EXPECT_EQ(m.act_dtype[rec.at(1, 3)], "");

  ASSERT_EQ(rec.hits.size(), 2u);
  EXPECT_EQ(rec.hits[0].trigger, "nan");
  EXPECT_EQ(rec.hits[0].step, 2);
  EXPECT_EQ(rec.hits[0].layer, 2);
  EXPECT_TRUE(std::isnan(rec.hits[0].value));
  EXPECT_EQ(rec.hits[0].detail, "gradients of encoder.0 hold NaN");
  EXPECT_EQ(rec.hits[1].trigger, "loss_spike");
  EXPECT_EQ(rec.hits[1].layer, -1);
  EXPECT_DOUBLE_EQ(rec.hits[1].value, 9.0);
  EXPECT_DOUBLE_EQ(rec.hits[1].threshold, 3.0);
}

TEST(TrainingSnapshot, BuildsTheLayerGraph) {
  SnapshotFile f;
  WriteTinySnapshot(f);
  f.Close();
  auto r = Import(f.path());
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  const Model& model = r->model;
  ASSERT_EQ(r->ctx.graphs_added.size(), 1u);
  GraphId g = r->ctx.graphs_added[0];
  EXPECT_EQ(model.graph(g).level, LayerLevel::kFramework);
  EXPECT_EQ(model.str(model.graph(g).name), "TinyNet");
  EXPECT_EQ(model.str(model.graph(g).producer), "pytorch 1.13.1");
  // The called leaves in forward order, then the layer with parameters
  // never called; the root and the container are scopes, the LayerNorm
  // without parameters never called is left out.
  std::vector<std::string> names, types;
  for (NodeId n : model.graph_nodes(g)) {
    names.emplace_back(model.str(model.node_name(n)));
    types.emplace_back(model.str(model.node_op_type(n)));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"encoder.0", "encoder.1", "head",
                                             "unused"}));
  EXPECT_EQ(types, (std::vector<std::string>{"Linear", "ReLU",
                                             "MultiheadAttention", "Linear"}));
  const training::TrainingRecord& rec = r->record;
  for (int layer : {2, 3, 4, 5}) {
    ASSERT_GE(rec.layers[layer].node, 0) << layer;
    NodeId n(static_cast<uint32_t>(rec.layers[layer].node));
    EXPECT_EQ(model.str(model.node_name(n)), rec.layers[layer].name);
  }
  for (int layer : {0, 1, 6}) EXPECT_EQ(rec.layers[layer].node, -1) << layer;

  // Scopes from the module path: encoder.0 lies in scope "encoder".
  NodeId enc0 = model.FindNode(g, "encoder.0");
  NodeId head = model.FindNode(g, "head");
  NodeId relu = model.FindNode(g, "encoder.1");
  ASSERT_TRUE(enc0.valid() && head.valid() && relu.valid());
  EXPECT_EQ(model.str(model.scope_path(model.node_scope(enc0))), "encoder");
  EXPECT_EQ(model.str(model.scope_name(model.node_scope(enc0))), "encoder");
  EXPECT_EQ(model.str(model.scope_path(model.node_scope(head))), "");

  // Data edges: 2->3, 3->4, the container's edge 1->4 stands for its last
  // leaf (3->4, the same edge), 4->2 goes backwards and is left out.
  auto producers = [&model](NodeId n) {
    std::vector<std::string> out;
    for (ValueId v : model.node_inputs(n)) {
      out.emplace_back(model.str(model.node_name(model.value_producer(v))));
    }
    return out;
  };
  EXPECT_EQ(producers(enc0), std::vector<std::string>{});
  EXPECT_EQ(producers(relu), std::vector<std::string>{"encoder.0"});
  EXPECT_EQ(producers(head), std::vector<std::string>{"encoder.1"});

  // The layer's attributes on the node.
  bool found = false;
  for (const Attribute& a : model.node_attributes(enc0)) {
    if (model.str(a.name) == "in_features") {
      found = true;
      EXPECT_EQ(model.str(a.text), "3");
    }
    if (model.str(a.name) == "param_count") {
      EXPECT_EQ(a.int_value, 12);
    }
  }
  EXPECT_TRUE(found);
}

TEST(TrainingSnapshot, SniffsByTheMetaTable) {
  SnapshotFile f;
  WriteTinySnapshot(f);
  f.Close();
  ImporterRegistry registry(CreateBuiltinImporters());
  auto head = ReadSniffHead(f.path());
  ASSERT_TRUE(head.ok());
  const Importer* importer = registry.Detect(*head, f.path());
  ASSERT_NE(importer, nullptr);
  EXPECT_EQ(importer->descriptor().name, "training_snapshot");

  // Another program's SQLite file is not claimed.
  SnapshotFile other("other");
  other.Exec("DROP TABLE layer_steps; CREATE TABLE notes (x);");
  other.Close();
  auto other_head = ReadSniffHead(other.path());
  ASSERT_TRUE(other_head.ok());
  const Importer* none = registry.Detect(*other_head, other.path());
  EXPECT_TRUE(none == nullptr ||
              none->descriptor().name != "training_snapshot");
}

TEST(TrainingSnapshot, EmptyRunHasNoStepsButAGraph) {
  SnapshotFile f;
  f.Exec(
      "INSERT INTO meta VALUES ('format', "
      "'model-inspector/training-snapshot'), ('version', '1'), ('status', "
      "'no_anomaly');"
      "INSERT INTO layers VALUES (0, '', 'Linear', NULL, 0, 6, '{}');");
  f.Close();
  auto r = Import(f.path());
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  EXPECT_TRUE(r->record.empty());
  EXPECT_EQ(r->record.anomaly_step, -1);
  // A model that is one module: its node is named by its class.
  ASSERT_EQ(r->model.node_count(), 1u);
  EXPECT_EQ(r->model.str(r->model.node_name(NodeId(0))), "Linear");
}

// ---- bad inputs ----

struct BadCase {
  std::string name;
  std::string sql;  // applied to the tiny snapshot
  StatusCode code;
  std::vector<std::string> fragments;
};

TEST(TrainingSnapshot, BadInputsNameFileTableAndExpectation) {
  const std::vector<BadCase> cases = {
      {"wrong format",
       "UPDATE meta SET value = 'other' WHERE key = 'format'",
       StatusCode::kMalformedInput,
       {"table meta: format is 'other'",
        "expected 'model-inspector/training-snapshot'"}},
      {"no format",
       "DELETE FROM meta WHERE key = 'format'",
       StatusCode::kMalformedInput,
       {"table meta has no key 'format'"}},
      {"version 2",
       "UPDATE meta SET value = '2' WHERE key = 'version'",
       StatusCode::kUnsupported,
       {"format version 2 is not supported", "expected version 1"}},
      {"version text",
       "UPDATE meta SET value = 'one' WHERE key = 'version'",
       StatusCode::kMalformedInput,
       {"table meta: version is 'one'", "expected a decimal integer"}},
      {"no table",
       "DROP TABLE triggers",
       StatusCode::kMalformedInput,
       {"no table triggers",
        "meta, layers, edges, steps, layer_steps, "
        "triggers"}},
      {"no column",
       "ALTER TABLE layer_steps DROP COLUMN dead_fraction",
       StatusCode::kMalformedInput,
       {"table layer_steps has no column 'dead_fraction'"}},
      {"layer_steps layer out of range",
       "INSERT INTO layer_steps (step, layer) VALUES (1, 9)",
       StatusCode::kMalformedInput,
       {"table layer_steps row", "layer 9 is not a layer",
        "expected an id of table layers (0..6)"}},
      {"edge out of range",
       "INSERT INTO edges VALUES (2, -1)",
       StatusCode::kMalformedInput,
       {"table edges row 2: dst -1 is not a layer"}},
      {"trigger layer out of range",
       "INSERT INTO triggers VALUES (3, 2, 'nan', 70, NULL, NULL, '')",
       StatusCode::kMalformedInput,
       {"table triggers row 3", "layer 70"}},
      {"parent out of range",
       "UPDATE layers SET parent = 40 WHERE id = 3",
       StatusCode::kMalformedInput,
       {"table layers row 4: parent 40 is not another layer"}},
      {"parent cycle",
       "UPDATE layers SET parent = 3 WHERE id = 1; UPDATE layers SET parent "
       "= 1 WHERE id = 3",
       StatusCode::kMalformedInput,
       {"parents form a cycle"}},
      {"layer id gap",
       "DELETE FROM layers WHERE id = 3",
       StatusCode::kMalformedInput,
       {"table layers row 4: id 4; expected 3"}},
      {"step not in steps",
       "INSERT INTO layer_steps (step, layer) VALUES (5, 1)",
       StatusCode::kMalformedInput,
       {"step 5 is not in table steps"}},
      {"text in a number column",
       "UPDATE steps SET loss = 'high' WHERE step = 0",
       StatusCode::kMalformedInput,
       {"table steps row 1: loss is 'high'", "expected a number or NULL"}},
      {"bad thresholds JSON",
       "UPDATE meta SET value = '{' WHERE key = 'thresholds'",
       StatusCode::kMalformedInput,
       {"table meta: thresholds is not valid JSON"}},
      {"bad attributes",
       "UPDATE layers SET attributes = '[1]' WHERE id = 2",
       StatusCode::kMalformedInput,
       {"table layers row 3: attributes is not a JSON object"}},
      {"optimizer names an unknown layer",
       "UPDATE meta SET value = '[{\"lr\": 1, \"layers\": [\"ghost\"]}]' "
       "WHERE key = 'optimizer_config'",
       StatusCode::kMalformedInput,
       {"optimizer_config group 0 names layer \"ghost\""}},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    SnapshotFile f("bad");
    WriteTinySnapshot(f);
    f.Exec(c.sql);
    f.Close();
    ExpectError(f.path(), c.code, c.fragments);
  }
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(TrainingSnapshot, BrokenFilesFailCleanly) {
  SnapshotFile f;
  WriteTinySnapshot(f);
  f.Close();
  const std::string good = ReadAll(f.path());
  ASSERT_GT(good.size(), 8192u);
  const std::string path = f.path() + ".broken";

  WriteAll(path, "");
  ExpectError(path, StatusCode::kMalformedInput,
              {"empty file; expected a training snapshot"});
  WriteAll(path, "step,loss\n0,1.5\n");
  ExpectError(path, StatusCode::kMalformedInput,
              {"not an SQLite database", "expected a training snapshot"});
  // Truncated: the first page only (the schema and rows lie beyond).
  WriteAll(path, good.substr(0, 4096));
  {
    auto r = Import(path);
    EXPECT_FALSE(r->status.ok());
    EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput)
        << r->status.message();
    EXPECT_NE(r->status.message().find(path), std::string::npos);
  }
  // Corrupt: the schema page's b-tree type byte (offset 100).
  std::string corrupt = good;
  corrupt[100] = 0x01;
  WriteAll(path, corrupt);
  {
    auto r = Import(path);
    EXPECT_FALSE(r->status.ok());
    EXPECT_NE(r->status.message().find("malformed"), std::string::npos)
        << r->status.message();
  }
  // Every cut of the file fails or loads, never crashes.
  for (size_t cut = 100; cut < good.size(); cut += 1536) {
    WriteAll(path, good.substr(0, cut));
    auto r = Import(path);
    EXPECT_NE(r->status.code(), StatusCode::kInternal);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace mi::importers
