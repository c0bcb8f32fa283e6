// Write() of the training diagnosis
// (docs/reference/schemas/training-diagnosis.schema.json).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/results/training.h"

namespace mi {
namespace {

// An id that is -1 when absent: null.
void FieldId(ResultWriter& w, std::string_view key, int64_t id) {
  w.Key(key);
  id < 0 ? w.Null() : w.Int(id);
}

void WriteEvidence(ResultWriter& w, const TrainingEvidence& e) {
  w.BeginObject().Field("metric", e.metric);
  FieldId(w, "layer", e.layer);
  FieldId(w, "step", e.step);
  w.FieldDouble("value", e.value)
      .FieldDouble("expected", e.expected)
      .Field("text", e.text)
      .EndObject();
}

void WriteCause(ResultWriter& w, const TrainingCause& c) {
  w.BeginObject().Field("cause", c.cause).Field("title", c.title);
  FieldId(w, "layer", c.layer);
  w.Field("layer_name", c.layer_name);
  FieldId(w, "step", c.step);
  w.FieldDouble("confidence", c.confidence);
  w.Key("evidence").BeginArray();
  for (const TrainingEvidence& e : c.evidence) WriteEvidence(w, e);
  w.EndArray();
  w.Key("fix")
      .BeginObject()
      .Field("summary", c.fix.summary)
      .Field("snippet", c.fix.snippet)
      .Field("validation", c.fix.validation)
      .EndObject();
  w.EndObject();
}

}  // namespace

void TrainingDiagnosisResult::Write(ResultWriter& w) const {
  w.BeginObject().Field("schema", "model-inspector/training-diagnosis/1");
  w.Field("path", path)
      .Field("created", created)
      .Field("host", host)
      .Field("torch", torch);
  w.Key("command").BeginArray();
  for (const std::string& c : command) w.String(c);
  w.EndArray();
  w.Field("model", model).Field("optimizer", optimizer).Field("status", status);
  w.FieldInt("first_step", first_step).FieldInt("last_step", last_step);
  FieldId(w, "anomaly_step", anomaly_step);
  w.FieldInt("capture_window", capture_window);
  w.Key("captured_steps").BeginArray();
  for (int64_t s : captured_steps) w.Int(s);
  w.EndArray();
  w.Key("triggers").BeginArray();
  for (const TrainingTriggerInfo& t : triggers) {
    w.BeginObject().FieldInt("step", t.step).Field("trigger", t.trigger);
    FieldId(w, "layer", t.layer);
    w.Field("layer_name", t.layer_name)
        .FieldDouble("value", t.value)
        .FieldDouble("threshold", t.threshold)
        .Field("detail", t.detail)
        .EndObject();
  }
  w.EndArray();
  w.FieldDouble("vanishing", vanishing)
      .FieldDouble("exploding", exploding)
      .FieldDouble("dead", dead);
  w.FieldDouble("score", score);
  w.Key("layers").BeginArray();
  for (const TrainingLayerHealth& l : layers) {
    w.BeginObject()
        .FieldInt("layer", l.layer)
        .Field("name", l.name)
        .Field("type", l.type);
    FieldId(w, "node", l.node);
    FieldId(w, "forward_order", l.forward_order);
    w.FieldDouble("score", l.score).FieldDouble("worst_score", l.worst_score);
    FieldId(w, "worst_step", l.worst_step);
    w.Key("flags").BeginArray();
    for (const std::string& f : l.flags) w.String(f);
    w.EndArray().EndObject();
  }
  w.EndArray();
  w.Key("steps").BeginArray();
  for (const TrainingStepHealth& s : steps) {
    w.BeginObject()
        .FieldInt("step", s.step)
        .FieldDouble("loss", s.loss)
        .FieldDouble("grad_norm", s.grad_norm)
        .FieldDouble("lr", s.lr)
        .FieldDouble("score", s.score)
        .FieldBool("captured", s.captured);
    w.Key("events").BeginArray();
    for (const std::string& e : s.events) w.String(e);
    w.EndArray().EndObject();
  }
  w.EndArray();
  w.Key("heatmap").BeginObject();
  w.Key("layers").BeginArray();
  for (const TrainingLayerHealth& l : layers) w.Int(l.layer);
  w.EndArray();
  w.Key("steps").BeginArray();
  for (const TrainingStepHealth& s : steps) w.Int(s.step);
  w.EndArray();
  w.Key("values").BeginArray();
  for (const std::vector<double>& row : heatmap) {
    w.BeginArray();
    for (double v : row) w.Double(v);
    w.EndArray();
  }
  w.EndArray().EndObject();
  w.Key("problem_layers").BeginArray();
  for (int32_t l : problem_layers) w.Int(l);
  w.EndArray();
  w.Key("chain").BeginArray();
  for (const TrainingChainLink& c : chain) {
    w.BeginObject()
        .FieldInt("layer", c.layer)
        .Field("layer_name", c.layer_name);
    FieldId(w, "node", c.node);
    FieldId(w, "step", c.step);
    w.Field("role", c.role)
        .Field("direction", c.direction)
        .Field("evidence", c.evidence)
        .EndObject();
  }
  w.EndArray();
  w.Key("causes").BeginArray();
  for (const TrainingCause& c : causes) WriteCause(w, c);
  w.EndArray();
  w.EndObject();
}

}  // namespace mi
