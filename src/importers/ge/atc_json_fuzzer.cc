// Fuzzes the ATC JSON reader (src/importers/ge) through the shared graph-reader
// fuzz body (importers/common/graph_fuzz_util.h).

#include <cstddef>
#include <cstdint>

#include "importers/common/graph_fuzz_util.h"
#include "importers/ge/ge_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mi::importers::FuzzGraphImport(data, size, "model.om.json",
                                        mi::importers::ImportAtcJsonFromBuffer);
}
