#include "report/report_samples.h"

#include <utility>

namespace mi::report::samples {
namespace {

TimingStat Stat(int64_t samples, int64_t median, int64_t spread, int64_t min,
                int64_t max) {
  TimingStat s;
  s.samples = samples;
  s.median_ns = median;
  s.spread_ns = spread;
  s.min_ns = min;
  s.max_ns = max;
  return s;
}

TimingDelta Delta(std::string key, TimingStat base, TimingStat next,
                  int64_t noise, std::string verdict) {
  TimingDelta d;
  d.key = std::move(key);
  d.base = base;
  d.next = next;
  d.delta_ns = next.median_ns - base.median_ns;
  d.delta_pct = base.median_ns == 0 ? 0
                                    : 100.0 * static_cast<double>(d.delta_ns) /
                                          static_cast<double>(base.median_ns);
  d.noise_ns = noise;
  d.verdict = std::move(verdict);
  return d;
}

NodeChange Change(std::string kind, std::string base_name, std::string new_name,
                  int64_t base_id, int64_t new_id, std::string base_op,
                  std::string new_op, std::string matched_by,
                  std::vector<std::string> changes) {
  NodeChange c;
  c.kind = std::move(kind);
  c.base_name = std::move(base_name);
  c.new_name = std::move(new_name);
  c.base_node_id = base_id;
  c.new_node_id = new_id;
  c.base_op_type = std::move(base_op);
  c.new_op_type = std::move(new_op);
  c.matched_by = std::move(matched_by);
  c.changes = std::move(changes);
  return c;
}

RuleOutcome Rule(std::string text, std::string metric, std::string subject,
                 std::string comparison, double threshold, std::string unit,
                 bool crossed, double value, std::string measured_on,
                 std::string message, std::string note = "") {
  RuleOutcome r;
  r.rule.text = std::move(text);
  r.rule.metric = std::move(metric);
  r.rule.subject = std::move(subject);
  r.rule.comparison = std::move(comparison);
  r.rule.threshold = threshold;
  r.rule.unit = std::move(unit);
  r.crossed = crossed;
  r.value = value;
  r.measured_on = std::move(measured_on);
  r.message = std::move(message);
  r.note = std::move(note);
  return r;
}

DigestNode Node(int64_t id, std::string name, std::string op,
                std::vector<std::string> inputs,
                std::vector<std::string> outputs) {
  DigestNode n;
  n.node_id = id;
  n.name = std::move(name);
  n.op_type = std::move(op);
  for (std::string& t : inputs) n.inputs.push_back({std::move(t)});
  for (std::string& t : outputs) n.outputs.push_back({std::move(t)});
  return n;
}

RunDigestMeta Meta(std::string label, std::string commit) {
  RunDigestMeta m;
  m.model = "tiny_cnn";
  m.label = std::move(label);
  m.inputs = {"runs/" + m.label + "/model.onnx",
              "runs/" + m.label + "/profile.json"};
  m.formats = {"onnx", "ort_profile"};
  m.tool_version = "0.1.0";
  m.producers = "onnxruntime 1.20.1";
  m.host = "ci-runner-3";
  m.created_utc = "2026-12-02T05:30:00Z";
  m.git_commit = std::move(commit);
  return m;
}

DiffRunInfo Info(std::string label, std::string commit, std::string fp) {
  DiffRunInfo info;
  info.meta = Meta(std::move(label), std::move(commit));
  info.runs_from = "model_run";
  info.run_count = 5;
  info.fingerprints = {{"framework", std::move(fp)}, {"compiled", "c0ffee"}};
  return info;
}

}  // namespace

// Framework graph of the base run (7 nodes):
//   x -> conv1 -> bn1 -> relu1 -> conv2 -> add -> pool -> fc -> y
//                          \________________/
RunDigest RegressedBase() {
  RunDigest d;
  d.meta = Meta("base", "1111111");
  DigestLevel level;
  level.level = "framework";
  level.fingerprint = "aaaa0001";
  level.nodes = {
      Node(0, "conv1", "Conv", {"x", "w1"}, {"t_conv1"}),
      Node(1, "bn1", "BatchNormalization", {"t_conv1"}, {"t_bn1"}),
      Node(2, "relu1", "Relu", {"t_bn1"}, {"t_relu1"}),
      Node(3, "conv2", "Conv", {"t_relu1", "w2"}, {"t_conv2"}),
      Node(4, "add", "Add", {"t_conv2", "t_relu1"}, {"t_add"}),
      Node(5, "pool", "GlobalAveragePool", {"t_add"}, {"t_pool"}),
      Node(6, "fc", "Gemm", {"t_pool", "wfc"}, {"y"}),
  };
  d.levels.push_back(std::move(level));
  return d;
}

// Framework graph of the new run (7 nodes): bn1 removed, relu2 added after
// conv2, fc renamed to classifier, conv1's pads changed.
//   x -> conv1 -> relu1 -> conv2 -> relu2 -> add -> pool -> classifier -> y
//                   \__________________________/
RunDigest RegressedNew() {
  RunDigest d;
  d.meta = Meta("new", "2222222");
  DigestLevel level;
  level.level = "framework";
  level.fingerprint = "bbbb0002";
  level.nodes = {
      Node(10, "conv1", "Conv", {"x", "w1"}, {"t_conv1"}),
      Node(11, "relu1", "Relu", {"t_conv1"}, {"t_relu1"}),
      Node(12, "conv2", "Conv", {"t_relu1", "w2"}, {"t_conv2"}),
      Node(13, "relu2", "Relu", {"t_conv2"}, {"t_relu2"}),
      Node(14, "add", "Add", {"t_relu2", "t_relu1"}, {"t_add"}),
      Node(15, "pool", "GlobalAveragePool", {"t_add"}, {"t_pool"}),
      Node(16, "classifier", "Gemm", {"t_pool", "wfc"}, {"y"}),
  };
  d.levels.push_back(std::move(level));
  return d;
}

DiffReport RegressedReport() {
  DiffReport r;
  r.base = Info("base", "1111111", "aaaa0001");
  r.next = Info("new", "2222222", "bbbb0002");

  LevelDiff fw;
  fw.level = "framework";
  fw.base_fingerprint = "aaaa0001";
  fw.new_fingerprint = "bbbb0002";
  fw.base_nodes = 7;
  fw.new_nodes = 7;
  fw.matched_by_name = 5;       // conv1, relu1, conv2, add, pool
  fw.matched_by_structure = 1;  // fc -> classifier
  fw.added = 1;                 // relu2
  fw.removed = 1;               // bn1
  fw.changed = 1;               // conv1
  fw.renamed = 1;               // fc -> classifier
  fw.changes = {
      Change("changed", "conv1", "conv1", 0, 10, "Conv", "Conv", "name",
             {"attribute pads: [0, 0, 0, 0] -> [1, 1, 1, 1]",
              "output 0 shape: [1, 8, 56, 56] -> [1, 8, 58, 58]"}),
      Change("removed", "bn1", "", 1, -1, "BatchNormalization", "", "", {}),
      Change("added", "", "relu2", -1, 13, "", "Relu", "", {}),
      Change("renamed", "fc", "classifier", 6, 16, "Gemm", "Gemm", "structure",
             {}),
  };
  fw.op_types = {{"BatchNormalization", 1, 0}, {"Relu", 1, 2}};
  r.structure.push_back(std::move(fw));

  LevelDiff compiled;
  compiled.level = "compiled";
  compiled.base_fingerprint = "c0ffee";
  compiled.new_fingerprint = "c0ffee";
  compiled.base_nodes = 4;
  compiled.new_nodes = 4;
  compiled.matched_by_name = 2;
  compiled.added = 1;
  compiled.removed = 1;
  compiled.changes = {
      Change("removed", "conv2_add", "", 21, -1, "FusedConvAdd", "", "", {}),
      Change("added", "", "conv2_relu2", -1, 33, "", "FusedConv", "", {}),
  };
  compiled.fusions_lost = 1;
  compiled.fusions_gained = 1;
  FusionChange lost;
  lost.kind = "lost";
  lost.base_group = {"add", "conv2"};
  lost.new_group = {"conv2", "relu2"};
  lost.base_compiled = "conv2_add";
  lost.base_compiled_op_type = "FusedConvAdd";
  lost.base_compiled_id = 21;
  FusionChange gained;
  gained.kind = "gained";
  gained.new_group = {"conv2", "relu2"};
  gained.new_compiled = "conv2_relu2";
  gained.new_compiled_op_type = "FusedConv";
  gained.new_compiled_id = 33;
  compiled.fusions = {lost, gained};
  compiled.op_types = {{"FusedConv", 1, 2}, {"FusedConvAdd", 1, 0}};
  r.structure.push_back(std::move(compiled));

  r.has_timing = true;
  // total: +1.20 ms (9.75 -> 10.95 ms) = +12.3077 %; noise = max(1 us,
  // 1 % of 9.75 ms = 97.5 us, 2 * sqrt(80^2 + 60^2) us = 200 us) = 200 us.
  r.total = Delta("total", Stat(5, 9'750'000, 80'000, 9'700'000, 9'900'000),
                  Stat(5, 10'950'000, 60'000, 10'900'000, 11'020'000), 200'000,
                  "slower");
  // Conv: +1.10 ms (6.00 -> 7.10 ms) = +18.33 %, noise 2 * sqrt(40^2 +
  // 50^2) us = 128.062 us; Relu +20 us (+4 %) within its noise of 72.111
  // us; BatchNormalization gone.
  r.op_types = {
      Delta("Conv", Stat(5, 6'000'000, 40'000, 5'950'000, 6'080'000),
            Stat(5, 7'100'000, 50'000, 7'020'000, 7'160'000), 128'062,
            "slower"),
      Delta("BatchNormalization", Stat(5, 400'000, 10'000, 390'000, 415'000),
            Stat(0, 0, 0, 0, 0), 20'000, "removed"),
      Delta("Relu", Stat(5, 500'000, 20'000, 480'000, 530'000),
            Stat(5, 520'000, 30'000, 490'000, 560'000), 72'111, "same"),
  };
  r.streams = {Delta(
      "gpu0/s7", Stat(5, 9'000'000, 70'000, 8'950'000, 9'100'000),
      Stat(5, 10'100'000, 50'000, 10'050'000, 10'150'000), 172'047, "slower")};
  TimingDelta conv1 =
      Delta("conv1", Stat(5, 2'000'000, 20'000, 1'980'000, 2'040'000),
            Stat(5, 2'900'000, 25'000, 2'870'000, 2'950'000), 64'031, "slower");
  conv1.level = "framework";
  conv1.base_node_id = 0;
  conv1.new_node_id = 10;
  TimingDelta relu2 =
      Delta("relu2", Stat(0, 0, 0, 0, 0),
            Stat(5, 150'000, 5'000, 145'000, 160'000), 10'000, "added");
  relu2.level = "framework";
  relu2.new_node_id = 13;
  r.nodes = {conv1, relu2};
  r.unlinked_tasks = {
      Delta("Memcpy HtoD", Stat(5, 300'000, 10'000, 290'000, 320'000),
            Stat(5, 290'000, 10'000, 280'000, 305'000), 28'284, "same")};
  r.unmatched_base_tasks = {"bn_fw_inf_kernel"};
  r.unmatched_new_tasks = {"relu_kernel_v2"};

  OverlapChange pair;
  pair.scope = "streams";
  pair.key = "gpu0/s7 <-> gpu0/s13";
  pair.base_busy_ns = 2'000'000;
  pair.new_busy_ns = 2'100'000;
  pair.base_overlap_ns = 1'500'000;
  pair.new_overlap_ns = 50'000;
  pair.base_fraction = 0.75;          // 1.5 / 2.0
  pair.new_fraction = 50.0 / 2100.0;  // 0.0238
  pair.verdict = "parallel_to_serial";
  pair.cost_ns = 1'450'000;  // 1.5 ms - 0.05 ms
  r.overlap = {pair};
  r.overlap_lost = 1;

  r.rules = {
      Rule("total>+5%", "total", "", ">", 5, "percent", true, 12.3077, "total",
           "total +12.3% (+1.20 ms: 9.75 -> 10.95 ms, noise 0.20 ms) > +5%"),
      Rule("op:Relu>+1%", "op", "Relu", ">", 1, "percent", false, 4.0, "Relu",
           "op:Relu +4.0% (+0.02 ms: 0.50 -> 0.52 ms, noise 0.07 ms) is "
           "within the noise",
           "noise"),
      Rule("nodes!=0", "nodes", "", "!=", 0, "count", false, 0, "framework",
           "nodes 0 (7 -> 7)"),
      Rule("overlap-lost>0", "overlap-lost", "", ">", 0, "count", true, 1,
           "gpu0/s7 <-> gpu0/s13",
           "overlap-lost 1 (gpu0/s7 <-> gpu0/s13: 75% overlapped -> 2%, "
           "costs 1.45 ms) > 0"),
  };
  r.failed = true;
  return r;
}

DiffReport CleanReport() {
  DiffReport r;
  r.base = Info("base", "1111111", "aaaa0001");
  r.next = Info("new", "3333333", "aaaa0001");
  LevelDiff fw;
  fw.level = "framework";
  fw.base_fingerprint = "aaaa0001";
  fw.new_fingerprint = "aaaa0001";
  fw.base_nodes = 7;
  fw.new_nodes = 7;
  fw.matched_by_name = 7;
  r.structure.push_back(std::move(fw));
  r.has_timing = true;
  // +10 us on 9.75 ms (+0.10 %), within the 200 us noise.
  r.total =
      Delta("total", Stat(5, 9'750'000, 80'000, 9'700'000, 9'900'000),
            Stat(5, 9'760'000, 60'000, 9'700'000, 9'850'000), 200'000, "same");
  r.rules = {Rule("total>+5%", "total", "", ">", 5, "percent", false, 0.102564,
                  "total",
                  "total +0.1% (+0.01 ms: 9.75 -> 9.76 ms, noise 0.20 ms)")};
  r.failed = false;
  return r;
}

DiffReport StructureOnlyReport() {
  DiffReport r;
  r.base = Info("base", "", "aaaa0001");
  r.next = Info("new", "", "aaaa0003");
  r.base.runs_from = r.next.runs_from = "";
  r.base.run_count = r.next.run_count = 0;
  LevelDiff fw;
  fw.level = "framework";
  fw.base_fingerprint = "aaaa0001";
  fw.new_fingerprint = "aaaa0003";
  fw.base_nodes = 7;
  fw.new_nodes = 8;
  fw.matched_by_name = 7;
  fw.added = 1;
  fw.changes = {Change("added", "", "dropout", -1, 7, "", "Dropout", "", {})};
  fw.op_types = {{"Dropout", 0, 1}};
  r.structure.push_back(std::move(fw));
  r.has_timing = false;
  r.rules = {
      Rule("nodes!=0", "nodes", "", "!=", 0, "count", true, 1, "framework",
           "nodes +1 (7 -> 8) != 0"),
      Rule("total>+5%", "total", "", ">", 5, "percent", false, 0, "",
           "total: not measured (neither run has a trace)",
           "not measured: no trace"),
  };
  r.failed = true;
  return r;
}

DiffReport NastyReport() {
  DiffReport r = RegressedReport();
  r.base.meta.model = kNastyName;
  r.next.meta.label = kNastyName;
  r.structure[0].changes[0].new_name = kNastyName;
  r.structure[0].changes[0].changes.push_back(
      std::string("attribute note: \"") + kNastyName + "\"");
  r.op_types[0].key = kNastyName;
  r.rules[0].message = std::string("total ") + kNastyName + " > +5%";
  r.rules[0].rule.text = std::string("op:") + kNastyName + ">+5%";
  return r;
}

}  // namespace mi::report::samples
