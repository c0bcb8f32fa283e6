// Write() of the diff report (`model-inspector diff --format json`, GET
// /api/diff; docs/reference/schemas/diff.schema.json). Node ids are the
// sessions' ids (-1, not known, is written as null: a digest read from a
// file has none).

#include <string>
#include <utility>
#include <vector>

#include "model_inspector/diff.h"

namespace mi {
namespace {

void OptId(ResultWriter& w, std::string_view key, int64_t id) {
  w.Key(key);
  if (id < 0) {
    w.Null();
  } else {
    w.Int(id);
  }
}

void Strings(ResultWriter& w, std::string_view key,
             const std::vector<std::string>& v) {
  w.Key(key).BeginArray();
  for (const std::string& s : v) w.String(s);
  w.EndArray();
}

void WriteRunInfo(ResultWriter& w, const DiffRunInfo& r) {
  w.BeginObject();
  const RunDigestMeta& m = r.meta;
  w.Field("model", m.model).Field("label", m.label);
  Strings(w, "inputs", m.inputs);
  Strings(w, "formats", m.formats);
  w.Field("tool_version", m.tool_version).Field("producers", m.producers);
  w.Field("host", m.host).Field("created_utc", m.created_utc);
  w.Field("git_commit", m.git_commit);
  w.Field("runs_from", r.runs_from).FieldInt("run_count", r.run_count);
  w.Key("fingerprints").BeginArray();
  for (const auto& [level, fingerprint] : r.fingerprints) {
    w.BeginObject();
    w.Field("level", level).Field("fingerprint", fingerprint);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteNodeChange(ResultWriter& w, const NodeChange& c) {
  w.BeginObject();
  w.Field("kind", c.kind);
  w.Field("base_name", c.base_name).Field("new_name", c.new_name);
  OptId(w, "base_node_id", c.base_node_id);
  OptId(w, "new_node_id", c.new_node_id);
  w.Field("base_op_type", c.base_op_type).Field("new_op_type", c.new_op_type);
  w.Field("matched_by", c.matched_by);
  Strings(w, "changes", c.changes);
  w.EndObject();
}

void WriteFusionChange(ResultWriter& w, const FusionChange& f) {
  w.BeginObject();
  w.Field("kind", f.kind);
  Strings(w, "base_group", f.base_group);
  Strings(w, "new_group", f.new_group);
  w.Field("base_compiled", f.base_compiled);
  w.Field("base_compiled_op_type", f.base_compiled_op_type);
  w.Field("new_compiled", f.new_compiled);
  w.Field("new_compiled_op_type", f.new_compiled_op_type);
  OptId(w, "base_compiled_id", f.base_compiled_id);
  OptId(w, "new_compiled_id", f.new_compiled_id);
  w.EndObject();
}

void WriteLevel(ResultWriter& w, const LevelDiff& l) {
  w.BeginObject();
  w.Field("level", l.level);
  w.Field("base_fingerprint", l.base_fingerprint);
  w.Field("new_fingerprint", l.new_fingerprint);
  w.FieldInt("base_nodes", l.base_nodes).FieldInt("new_nodes", l.new_nodes);
  w.FieldInt("matched_by_name", l.matched_by_name);
  w.FieldInt("matched_by_structure", l.matched_by_structure);
  w.FieldInt("added", l.added).FieldInt("removed", l.removed);
  w.FieldInt("changed", l.changed).FieldInt("renamed", l.renamed);
  w.Key("changes").BeginArray();
  for (const NodeChange& c : l.changes) WriteNodeChange(w, c);
  w.EndArray();
  w.FieldInt("fusions_lost", l.fusions_lost);
  w.FieldInt("fusions_gained", l.fusions_gained);
  w.FieldInt("fusions_changed", l.fusions_changed);
  w.Key("fusions").BeginArray();
  for (const FusionChange& f : l.fusions) WriteFusionChange(w, f);
  w.EndArray();
  w.Key("op_types").BeginArray();
  for (const OpTypeShift& s : l.op_types) {
    w.BeginObject();
    w.Field("op_type", s.op_type);
    w.FieldInt("base_count", s.base_count).FieldInt("new_count", s.new_count);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteStat(ResultWriter& w, std::string_view key, const TimingStat& s) {
  w.Key(key).BeginObject();
  w.FieldInt("samples", s.samples).FieldInt("median_ns", s.median_ns);
  w.FieldInt("spread_ns", s.spread_ns);
  w.FieldInt("min_ns", s.min_ns).FieldInt("max_ns", s.max_ns);
  w.EndObject();
}

void WriteDelta(ResultWriter& w, const TimingDelta& d) {
  w.BeginObject();
  w.Field("key", d.key).Field("level", d.level);
  OptId(w, "base_node_id", d.base_node_id);
  OptId(w, "new_node_id", d.new_node_id);
  WriteStat(w, "base", d.base);
  WriteStat(w, "new", d.next);
  w.FieldInt("delta_ns", d.delta_ns).FieldDouble("delta_pct", d.delta_pct);
  w.FieldInt("noise_ns", d.noise_ns).Field("verdict", d.verdict);
  w.EndObject();
}

void WriteDeltas(ResultWriter& w, std::string_view key,
                 const std::vector<TimingDelta>& v) {
  w.Key(key).BeginArray();
  for (const TimingDelta& d : v) WriteDelta(w, d);
  w.EndArray();
}

void WriteOverlap(ResultWriter& w, const OverlapChange& o) {
  w.BeginObject();
  w.Field("scope", o.scope).Field("key", o.key);
  w.FieldInt("base_busy_ns", o.base_busy_ns);
  w.FieldInt("new_busy_ns", o.new_busy_ns);
  w.FieldInt("base_overlap_ns", o.base_overlap_ns);
  w.FieldInt("new_overlap_ns", o.new_overlap_ns);
  w.FieldDouble("base_fraction", o.base_fraction);
  w.FieldDouble("new_fraction", o.new_fraction);
  w.Field("verdict", o.verdict).FieldInt("cost_ns", o.cost_ns);
  w.EndObject();
}

void WriteRule(ResultWriter& w, const RuleOutcome& r) {
  w.BeginObject();
  w.Field("rule", r.rule.text);
  w.Field("metric", r.rule.metric).Field("subject", r.rule.subject);
  w.Field("comparison", r.rule.comparison);
  w.FieldDouble("threshold", r.rule.threshold).Field("unit", r.rule.unit);
  w.FieldBool("crossed", r.crossed).FieldDouble("value", r.value);
  w.Field("measured_on", r.measured_on);
  w.Field("message", r.message).Field("note", r.note);
  w.EndObject();
}

}  // namespace

void DiffReport::Write(ResultWriter& w) const {
  w.BeginObject();
  w.Field("schema", "model-inspector/diff/1");
  w.Key("base");
  WriteRunInfo(w, base);
  w.Key("new");
  WriteRunInfo(w, next);
  w.Key("structure").BeginArray();
  for (const LevelDiff& l : structure) WriteLevel(w, l);
  w.EndArray();
  // Timing: null when either run has no trace.
  w.Key("timing");
  if (!has_timing) {
    w.Null();
  } else {
    w.BeginObject();
    w.Key("total");
    WriteDelta(w, total);
    WriteDeltas(w, "op_types", op_types);
    WriteDeltas(w, "streams", streams);
    WriteDeltas(w, "nodes", nodes);
    WriteDeltas(w, "unlinked_tasks", unlinked_tasks);
    Strings(w, "unmatched_base_tasks", unmatched_base_tasks);
    Strings(w, "unmatched_new_tasks", unmatched_new_tasks);
    w.EndObject();
  }
  w.Key("overlap").BeginArray();
  for (const OverlapChange& o : overlap) WriteOverlap(w, o);
  w.EndArray();
  w.FieldInt("overlap_lost", overlap_lost);
  w.Key("rules").BeginArray();
  for (const RuleOutcome& r : rules) WriteRule(w, r);
  w.EndArray();
  w.FieldBool("failed", failed);
  w.EndObject();
}

}  // namespace mi
