// Write() of the validation result (docs/reference/schemas/check.schema.json).

#include "model_inspector/results/validation.h"

namespace mi {

void ValidationResult::Write(ResultWriter& w) const {
  w.BeginObject().Field("schema", "model-inspector/check/1");
  w.FieldBool("ok", errors == 0);
  w.FieldUInt("errors", errors).FieldUInt("warnings", warnings);
  w.Key("levels").BeginArray();
  for (const LevelValidationInfo& l : levels) {
    w.BeginObject()
        .Field("level", l.level)
        .Field("graph", l.graph)
        .Field("file", l.file)
        .FieldInt("graphs", l.graphs)
        .FieldInt("nodes", l.nodes)
        .FieldInt("errors", l.errors)
        .FieldInt("warnings", l.warnings);
    w.Key("findings").BeginArray();
    for (const ValidationFindingInfo& f : l.findings) {
      w.BeginObject()
          .Field("rule", f.rule)
          .Field("severity", f.severity)
          .Field("graph", f.graph);
      w.Key("node");
      if (f.node) {
        w.BeginObject()
            .FieldUInt("id", f.node->id)
            .Field("name", f.node->name)
            .Field("op_type", f.node->op_type)
            .EndObject();
      } else {
        w.Null();
      }
      w.Key("values").BeginArray();
      for (const ValidationFindingInfo::ValueRef& v : f.values) {
        w.BeginObject().Field("name", v.name).Field("type", v.type).EndObject();
      }
      w.EndArray().Field("message", f.message).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
}

}  // namespace mi
