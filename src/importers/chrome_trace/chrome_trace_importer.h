#pragma once

#include <memory>

#include "importers/common/importer.h"

namespace mi::importers {

// Chrome trace-event JSON (array or {"traceEvents": [...]}), with dialects
// for ONNX Runtime profiles and PyTorch profiler (Kineto) traces.
std::unique_ptr<Importer> CreateChromeTraceImporter();

}  // namespace mi::importers
