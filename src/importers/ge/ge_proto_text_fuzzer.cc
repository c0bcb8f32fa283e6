// Fuzzes the ge_proto_text reader (src/importers/ge) through the shared
// graph-reader fuzz body (importers/common/graph_fuzz_util.h).

#include <cstddef>
#include <cstdint>

#include "importers/common/graph_fuzz_util.h"
#include "importers/ge/ge_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mi::importers::FuzzGraphImport(
      data, size, "ge_proto_00000001_graph_1_Build.txt",
      mi::importers::ImportGeProtoTextFromBuffer);
}
