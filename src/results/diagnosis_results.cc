// Write() of the findings, sequences and repeated blocks
// (docs/reference/schemas/findings.schema.json).

#include <string>

#include "model_inspector/results/diagnosis.h"

namespace mi {

void WriteFinding(ResultWriter& w, const FindingInfo& f) {
  w.BeginObject();
  w.Field("rule", f.rule_id).Field("title", f.title);
  w.Field("severity", f.severity).Field("message", f.message);
  w.Field("suggestion", f.suggestion);
  w.FieldDouble("threshold", f.threshold);
  w.FieldInt("time_ns", f.time_ns).FieldDouble("share", f.share);
  w.Key("nodes").BeginArray();
  for (uint32_t n : f.nodes) w.UInt(n);
  w.EndArray();
  w.Key("tasks").BeginArray();
  for (uint32_t t : f.tasks) w.UInt(t);
  w.EndArray();
  w.EndObject();
}

void FindingsResult::Write(ResultWriter& w) const {
  w.BeginArray();
  for (const FindingInfo& f : findings) WriteFinding(w, f);
  w.EndArray();
}

void SequencesResult::Write(ResultWriter& w) const {
  w.BeginArray();
  for (const SequenceInfo& s : sequences) {
    w.BeginObject();
    w.Key("symbols").BeginArray();
    for (const std::string& sym : s.symbols) w.String(sym);
    w.EndArray();
    w.FieldUInt("length", s.symbols.size());
    w.FieldUInt("count", s.count);
    w.FieldInt("total_ns", s.total_ns).FieldDouble("share", s.share);
    w.Key("tracks").BeginArray();
    for (uint32_t t : s.tracks) w.UInt(t);
    w.EndArray();
    w.Key("first_tasks").BeginArray();
    for (uint32_t t : s.first_tasks) w.UInt(t);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void BlocksResult::Write(ResultWriter& w) const {
  w.BeginArray();
  for (const BlockFamilyInfo& f : families) {
    w.BeginObject();
    w.Field("level", f.level).Field("label", f.label);
    w.FieldUInt("nodes_per_instance", f.nodes_per_instance);
    w.FieldInt("total_ns", f.total_ns).FieldInt("mean_ns", f.mean_ns);
    w.FieldInt("median_ns", f.median_ns).FieldInt("slowest", f.slowest);
    w.FieldDouble("slowest_over_median", f.slowest_over_median);
    w.Key("instances").BeginArray();
    for (const BlockInstanceInfo& i : f.instances) {
      w.BeginObject();
      w.Field("path", i.path).FieldInt("group", i.group);
      w.FieldUInt("node_count", i.node_count);
      w.FieldInt("total_ns", i.total_ns);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace mi
