#include "importers/onnx/onnx_importer.h"
namespace mi::importers {
std::unique_ptr<Importer> CreateOnnxImporter() { return nullptr; }
std::unique_ptr<Importer> CreateOnnxTextImporter() { return nullptr; }
}  // namespace mi::importers
