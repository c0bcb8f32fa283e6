#pragma once

// The direct path of the binary ONNX importer: decodes the protobuf wire
// format of a ModelProto (memory-mapped) into light views and builds the
// Model from them, without the skeleton copy and without libprotobuf
// objects. It covers files that need no ONNX shape inference (every node
// output has a type and shape in value_info / inputs / outputs) and use
// only the common parts of the format; everything else is declined and
// imported by the skeleton + libonnx path, which stays the reference.
//
// Declining is decided before anything is written into the Model or the
// diagnostics (the Model is append-only): a first pass decodes and checks
// the whole file, the second converts. Any malformed input is declined, so
// its error message comes from the reference path.

#include <string_view>

#include "importers/common/importer.h"
#include "importers/onnx/onnx_model_converter.h"
#include "importers/onnx/onnx_skeleton.h"

namespace mi::importers::onnx_import {

// Returns true when the model was imported into ctx.model; false when the
// direct path declined (nothing was written).
bool TryImportOnnxDirect(std::string_view file_bytes,
                         const OnnxConvertOptions& options, ImportContext& ctx,
                         const PrefetchHook& prefetch);

}  // namespace mi::importers::onnx_import
