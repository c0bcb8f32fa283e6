#pragma once

// Completes dtypes and shapes of compiled-graph tensors that the file
// lacks (ONNX shape inference stops at ONNX Runtime's contrib ops such as
// FusedConv or the NCHWc Conv, which have no schema in libonnx):
//  1. from the framework tensor of the same name (ORT keeps output names),
//  2. from the shapes the runtime recorded for the node's tasks (ORT's
//     input_type_shape / output_type_shape), matched by position.
// A shape the file declares is never overwritten.

#include <cstdint>

#include "model/model.h"
#include "trace/trace.h"

namespace mi::linker {

struct ShapeCompletion {
  uint32_t from_framework = 0;
  uint32_t from_trace = 0;
};

ShapeCompletion CompleteShapes(Model* model, const Trace& trace,
                               GraphId framework, GraphId compiled);

// ONNX Runtime's type name ("float", "int64", ...) as an ONNX element type;
// 0 when unknown.
int32_t OrtTypeNameToDataType(std::string_view name);

}  // namespace mi::linker
