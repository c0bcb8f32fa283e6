#pragma once

// Converts a parsed ONNX ModelProto (the skeleton of a binary file, or the
// result of the text-syntax parser) into our Model: one root graph plus one
// nested graph per If/Loop/Scan body, with a dtype and shape on every edge
// the file or ONNX shape inference knows. Validates while converting:
// dangling inputs and cycles become error diagnostics, never aborts.

#include <string>

#include "importers/common/importer.h"
#include "importers/onnx/onnx_shape_inference.h"
#include "model_inspector/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace mi::importers::onnx_import {

struct OnnxConvertOptions {
  // Directory that external-data locations are relative to; when empty the
  // files are not looked up.
  std::string model_directory;
  // Runs ONNX shape inference when some node output lacks type or shape.
  bool run_shape_inference = true;
  // Looks first for attribute values known to crash libonnx's inference
  // and leaves their nodes out of it, with a warning naming node, attribute
  // and value. Tests turn it off to reach the crash inside the child.
  bool check_before_inference = true;
  // Inference runs in a forked child (onnx_shape_inference.h).
  IsolatedInferenceOptions inference;
};

// `model` may be modified (shape inference adds value_info).
Status ConvertOnnxModel(::onnx::ModelProto& model,
                        const OnnxConvertOptions& options, ImportContext& ctx);

}  // namespace mi::importers::onnx_import
