#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "importers/common/importer.h"
#include "model_inspector/status.h"

namespace mi::importers {

// ONNX protobuf (.onnx) models, incl. external data and ORT-optimised
// models. Weights are never read: the file is memory-mapped and tensor
// payloads are skipped by the wire-format walker.
std::unique_ptr<Importer> CreateOnnxImporter();
// ONNX textual syntax (onnx/defs/parser.h).
std::unique_ptr<Importer> CreateOnnxTextImporter();
// GE's ONNX graph dumps (ge_onnx_*.pbtxt): protobuf text, ge:<Type> ops.
std::unique_ptr<Importer> CreateGeOnnxTextImporter();

// Imports a binary ModelProto held in memory (the .onnx importer maps the
// file and calls this; the fuzzer and tests call it directly). ctx.path
// names the file in messages, and external data is looked up relative to
// its directory.
Status ImportOnnxFromBuffer(std::string_view bytes, ImportContext& ctx);

// Which way a binary model is converted (see README.md, "Two paths"). Tests
// and the fuzzer force one to compare them; kDirect fails with
// kUnsupported (and imports nothing) when the direct path declines.
enum class OnnxImportPath : uint8_t { kAuto, kDirect, kProtobuf };
struct OnnxImportOptions {
  OnnxImportPath force_path = OnnxImportPath::kAuto;
};
Status ImportOnnxFromBuffer(std::string_view bytes, ImportContext& ctx,
                            const OnnxImportOptions& options);
// Imports ONNX textual syntax: a model ("<ir_version: 8, ...> graph ...")
// or a bare graph ("name (float[N] x) => (float[N] y) { ... }").
Status ImportOnnxTextFromBuffer(std::string_view text, ImportContext& ctx);
Status ImportGeOnnxTextFromBuffer(std::string_view text, ImportContext& ctx);

// Sniff scores (0..100) of the two importers, exposed for tests.
int SniffOnnxBinary(std::string_view head, std::string_view path);
int SniffOnnxText(std::string_view head, std::string_view path);

}  // namespace mi::importers
