// Fuzzes the ge_onnx text reader (src/importers/onnx/ge_onnx_importer.cc)
// through the shared graph-reader fuzz body
// (importers/common/graph_fuzz_util.h).

#include <cstddef>
#include <cstdint>

#include "importers/common/graph_fuzz_util.h"
#include "importers/onnx/onnx_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mi::importers::FuzzGraphImport(
      data, size, "ge_onnx_00000001_graph_1_Build.pbtxt",
      mi::importers::ImportGeOnnxTextFromBuffer);
}
