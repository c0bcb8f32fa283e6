#include "encoders/history_json.h"

#include "base/json_writer.h"

namespace mi::encoders {
namespace {

void WriteRun(JsonWriter& w, const HistoryRun& run) {
  const RunDigestMeta& m = run.meta;
  w.BeginObject();
  w.FieldInt("id", run.id);
  w.Field("model", m.model);
  w.Field("label", m.label);
  w.Field("created_utc", m.created_utc);
  w.Field("recorded_utc", run.recorded_utc);
  w.Field("host", m.host);
  w.Field("tool_version", m.tool_version);
  w.Field("producers", m.producers);
  w.Field("git_commit", m.git_commit);
  w.Key("inputs").BeginArray();
  for (const std::string& s : m.inputs) w.String(s);
  w.EndArray();
  w.Key("formats").BeginArray();
  for (const std::string& s : m.formats) w.String(s);
  w.EndArray();
  w.Field("fingerprint", run.fingerprint);
  w.FieldIntOrNull("framework_nodes", run.framework_nodes);
  w.FieldIntOrNull("compiled_nodes", run.compiled_nodes);
  w.FieldInt("run_count", run.run_count);
  w.FieldIntOrNull("total_median_ns", run.total_median_ns);
  w.FieldIntOrNull("total_spread_ns", run.total_spread_ns);
  w.EndObject();
}

void Header(JsonWriter& w, std::string_view schema,
            const std::string& history_path) {
  w.BeginObject();
  w.Field("schema", schema);
  w.Field("history", history_path);
}

}  // namespace

std::string HistoryRunsJson(const std::string& history_path,
                            const std::vector<HistoryRun>& runs, bool pretty) {
  std::string out;
  JsonWriter w(&out, pretty);
  Header(w, "model-inspector/history-runs/1", history_path);
  w.Key("runs").BeginArray();
  for (const HistoryRun& run : runs) WriteRun(w, run);
  w.EndArray();
  w.EndObject();
  return out;
}

std::string HistoryRunJson(const std::string& history_path,
                           const HistoryRun& run,
                           const std::vector<std::string>& baselines,
                           bool pretty) {
  std::string out;
  JsonWriter w(&out, pretty);
  Header(w, "model-inspector/history-run/1", history_path);
  w.Key("run");
  WriteRun(w, run);
  w.Key("baselines").BeginArray();
  for (const std::string& b : baselines) w.String(b);
  w.EndArray();
  w.EndObject();
  return out;
}

std::string HistoryTrendJson(const std::string& history_path,
                             const std::string& model,
                             const std::vector<HistoryTrendPoint>& points,
                             bool pretty) {
  std::string out;
  JsonWriter w(&out, pretty);
  Header(w, "model-inspector/history-trend/1", history_path);
  w.Field("model", model);
  w.Key("points").BeginArray();
  for (const HistoryTrendPoint& p : points) {
    w.BeginObject();
    w.FieldInt("run_id", p.run_id);
    w.Field("created_utc", p.created_utc);
    w.Field("git_commit", p.git_commit);
    w.Field("label", p.label);
    w.FieldIntOrNull("total_median_ns", p.total_median_ns);
    w.FieldIntOrNull("total_spread_ns", p.total_spread_ns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string HistoryBaselinesJson(const std::string& history_path,
                                 const std::vector<HistoryBaseline>& baselines,
                                 bool pretty) {
  std::string out;
  JsonWriter w(&out, pretty);
  Header(w, "model-inspector/history-baselines/1", history_path);
  w.Key("baselines").BeginArray();
  for (const HistoryBaseline& b : baselines) {
    w.BeginObject();
    w.Field("name", b.name);
    w.FieldInt("run_id", b.run_id);
    w.Field("set_utc", b.set_utc);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace mi::encoders
