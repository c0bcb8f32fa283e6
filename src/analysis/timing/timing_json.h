#pragma once

// JSON encoders of the timing reports (docs/reference/http-api.md,
// "Analyses"; docs/reference/schemas/analyses.schema.json). Times are
// integer nanoseconds on the report's clock; ids are TaskId, TrackId and
// model NodeId values. The Write* forms add one value to an open writer so
// that the session can compose analyses.json.

#include <string>

#include "analysis/timing/calibration.h"
#include "analysis/timing/critical_path.h"
#include "analysis/timing/idle_overlap.h"
#include "base/json_writer.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {

void WriteCalibrationJson(JsonWriter& w, const CalibrationReport& report);
void WriteCriticalPathJson(JsonWriter& w, const Model& model,
                           const Trace& trace,
                           const CriticalPathReport& report);
void WriteIdleOverlapJson(JsonWriter& w, const Trace& trace,
                          const IdleOverlapReport& report);
void WriteNodePathsJson(JsonWriter& w, const NodePathsReport& report);

std::string EncodeCalibrationJson(const CalibrationReport& report);
std::string EncodeCriticalPathJson(const Model& model, const Trace& trace,
                                   const CriticalPathReport& report);
std::string EncodeIdleOverlapJson(const Trace& trace,
                                  const IdleOverlapReport& report);
std::string EncodeNodePathsJson(const NodePathsReport& report);

}  // namespace mi::analysis
