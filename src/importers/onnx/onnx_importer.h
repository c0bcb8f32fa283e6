#pragma once

#include <memory>

#include "importers/common/importer.h"

namespace mi::importers {

// ONNX protobuf (.onnx) models, incl. external data and ORT-optimised
// models. Weights are never read: the file is memory-mapped and tensor
// payloads are skipped by the wire-format walker.
std::unique_ptr<Importer> CreateOnnxImporter();
// ONNX textual syntax (onnx/defs/parser.h).
std::unique_ptr<Importer> CreateOnnxTextImporter();

}  // namespace mi::importers
