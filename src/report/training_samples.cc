#include "report/training_samples.h"

#include <cmath>
#include <limits>

namespace mi::report::samples {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TrainingLayerHealth Layer(int32_t id, const char* name, const char* type,
                          double score, double worst, int64_t worst_step) {
  TrainingLayerHealth l;
  l.layer = id;
  l.name = name;
  l.type = type;
  l.node = id;
  l.forward_order = id;
  l.score = score;
  l.worst_score = worst;
  l.worst_step = worst_step;
  return l;
}

}  // namespace

TrainingDiagnosisResult TrainingSample() {
  TrainingDiagnosisResult r;
  r.path = "/tmp/run/snapshot.db";
  r.created = "2026-12-02T12:00:00Z";
  r.host = "trainer-1";
  r.torch = "1.13.1";
  r.model = "TinyEncoder<script>alert(1)</script>";
  r.optimizer = "SGD";
  r.status = "complete";
  r.command = {"python", "train.py"};
  r.first_step = 0;
  r.last_step = 9;
  r.anomaly_step = 6;
  r.capture_window = 3;
  r.captured_steps = {3, 4, 5, 6, 7, 8, 9};
  TrainingTriggerInfo t;
  t.step = 6;
  t.trigger = "loss_spike";
  t.value = 8.7;
  t.threshold = 3.6;
  t.detail = "loss 8.7 over 3x the mean of the last 10 steps";
  r.triggers = {t};
  r.score = 12;
  r.layers = {Layer(0, "embed", "Embedding", 5, 5, 6),
              Layer(1, "encoder.norm", "LayerNorm", 40, 40, 6),
              Layer(2, "encoder.fc1", "Linear", 65, 65, 6),
              Layer(3, "encoder.fc2", "Linear", 95, 95, 0),
              Layer(4, "head", "Linear", 95, 95, 1)};
  r.layers[0].flags = {"activation_range"};
  r.layers[1].flags = {"activation_range", "exploding"};
  r.layers[2].flags = {"exploding"};
  // heatmap[layer][step]
  r.heatmap.assign(5, std::vector<double>(10, 95));
  for (int s = 6; s < 10; ++s) r.heatmap[0][s] = 5;
  r.heatmap[1][6] = 40;
  r.heatmap[2][6] = 65;
  r.heatmap[4][0] = kNaN;
  const double loss[10] = {2.3, 2.1, 1.9, 1.7, 1.5, 1.2, 8.7, 6.1, 4.0, 3.2};
  const double grad[10] = {1.0, 0.9, 0.8, 0.8, 0.7, 0.7, 350, 120, 40, 12};
  for (int s = 0; s < 10; ++s) {
    TrainingStepHealth h;
    h.step = s;
    h.loss = loss[s];
    h.grad_norm = grad[s];
    h.lr = 0.01;
    h.score = s >= 6 ? 12 : 95;
    h.captured = s >= 3;
    if (s == 6) h.events = {"loss_spike"};
    r.steps.push_back(h);
  }
  r.problem_layers = {0, 1, 2};
  auto link = [](int32_t layer, const char* name, const char* role,
                 const char* evidence) {
    TrainingChainLink c;
    c.layer = layer;
    c.layer_name = name;
    c.node = layer;
    c.step = 6;
    c.role = role;
    c.direction = "forward";
    c.evidence = evidence;
    return c;
  };
  r.chain = {link(0, "embed", "producer", "output rms 310, was 1.0"),
             link(1, "encoder.norm", "propagator", "input rms 310"),
             link(2, "encoder.fc1", "propagator", "gradient norm 88")};
  TrainingCause c1;
  c1.cause = "input_out_of_range";
  c1.title = "Input out of range";
  c1.layer = 0;
  c1.layer_name = "embed";
  c1.step = 6;
  c1.confidence = 0.8;
  TrainingEvidence e;
  e.metric = "act_rms";
  e.layer = 0;
  e.step = 6;
  e.value = 310;
  e.expected = 1;
  e.text = "The embedding's output rms jumped from 1.0 to 310.";
  c1.evidence = {e};
  c1.fix.summary = "Normalise the features before the embedding.";
  c1.fix.snippet = "x = (x - mean) / std\nif x.abs().max() > 10: warn()";
  c1.fix.validation = "embed act_rms stays near 1 after step 6";
  TrainingCause c2;
  c2.cause = "bad_initialization";
  c2.title = "Bad initialisation";
  c2.layer = 2;
  c2.layer_name = "encoder.fc1";
  c2.step = 0;
  c2.confidence = 0.15;
  c2.fix.summary = "Initialise with the default init.";
  c2.fix.validation = "update ratio near 1e-3";
  r.causes = {c1, c2};
  return r;
}

TrainingGraph TrainingSampleGraph() {
  return TrainingGraph{{{0, 1}, {1, 2}, {2, 3}, {3, 4}}};
}

TrainingDiagnosisResult HealthyTrainingSample() {
  TrainingDiagnosisResult r;
  r.model = "Healthy";
  r.first_step = 0;
  r.last_step = 3;
  r.score = 98;
  r.layers = {Layer(0, "fc1", "Linear", 98, 98, 0),
              Layer(1, "fc2", "Linear", 98, 98, 0)};
  r.heatmap.assign(2, std::vector<double>(4, 98));
  for (int s = 0; s < 4; ++s) {
    TrainingStepHealth h;
    h.step = s;
    h.loss = 1.0 / (s + 1);
    h.grad_norm = 1;
    h.score = 98;
    r.steps.push_back(h);
  }
  return r;
}

}  // namespace mi::report::samples
