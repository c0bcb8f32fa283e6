// Write() of analyses.json / GET /api/runs/{run}/analyses
// (docs/reference/schemas/analyses.schema.json) and of the list of
// registered analyses.

#include <memory>
#include <string>

#include "model_inspector/analysis_result.h"

namespace mi {

void AnalysesDocument::Write(ResultWriter& w) const {
  w.BeginObject();
  w.Field("schema", "model-inspector/analyses/1");
  for (const std::unique_ptr<AnalysisResult>& s : sections) {
    w.Key(s->analysis_id());
    s->Write(w);
  }
  w.EndObject();
}

void AnalysisListResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.Key("analyses").BeginArray();
  for (const AnalysisInfo& a : analyses) {
    w.BeginObject();
    w.Field("id", a.id).Field("title", a.title).Field("summary", a.summary);
    w.Key("needs").BeginArray();
    if (a.needs_trace) w.String("trace");
    if (a.needs_graph) w.String("graph");
    if (a.needs_training) w.String("training");
    w.EndArray();
    w.FieldBool("in_export", a.in_export).FieldBool("applies", a.applies);
    w.Key("parameters").BeginArray();
    for (const AnalysisParameterInfo& p : a.parameters) {
      w.BeginObject();
      w.Field("name", p.name).Field("type", p.type);
      w.Field("default", p.default_value).Field("help", p.help);
      w.Key("choices").BeginArray();
      for (const std::string& c : p.choices) w.String(c);
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace mi
