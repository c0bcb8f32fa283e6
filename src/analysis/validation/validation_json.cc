#include "analysis/validation/validation.h"

#include <cstdint>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/json_writer.h"
#include "model/model.h"

namespace mi::analysis {

std::string ValidationJson(const Model& model,
                           const std::vector<LevelValidation>& levels) {
  uint64_t errors = 0, warnings = 0;
  for (const LevelValidation& l : levels) {
    errors += l.report.errors;
    warnings += l.report.warnings;
  }
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Field("schema", "model-inspector/check/1");
  w.FieldBool("ok", errors == 0);
  w.Key("errors").UInt(errors).Key("warnings").UInt(warnings);
  w.Key("levels").BeginArray();
  for (const LevelValidation& l : levels) {
    const ValidationReport& r = l.report;
    w.BeginObject()
        .Field("level", l.level)
        .Field("graph", model.str(model.graph(r.root).name))
        .Field("file", model.str(model.graph(r.root).source_file))
        .FieldInt("graphs", r.graphs)
        .FieldInt("nodes", r.nodes)
        .FieldInt("errors", r.errors)
        .FieldInt("warnings", r.warnings);
    w.Key("findings").BeginArray();
    for (const ValidationFinding& f : r.findings) {
      w.BeginObject()
          .Field("rule", f.rule)
          .Field("severity", ValidationSeverityName(f.severity))
          .Field("graph", model.str(model.graph(f.graph).name));
      w.Key("node");
      if (f.node.valid()) {
        w.BeginObject()
            .FieldInt("id", f.node.value())
            .Field("name", model.str(model.node_name(f.node)))
            .Field("op_type", model.str(model.node_op_type(f.node)))
            .EndObject();
      } else {
        w.Null();
      }
      w.Key("values").BeginArray();
      for (ValueId v : f.values) {
        w.BeginObject()
            .Field("name", model.str(model.value_name(v)))
            .Field("type", model.FormatValueType(v))
            .EndObject();
      }
      w.EndArray().Field("message", f.message).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  return out;
}

}  // namespace mi::analysis
