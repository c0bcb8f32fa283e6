// Fuzzes the .om reader (src/importers/om): the container's header and
// tables, the nested flow models, MODEL_DEF and TASK_INFO, through the
// shared graph-reader fuzz body (importers/common/graph_fuzz_util.h).

#include <cstddef>
#include <cstdint>

#include "importers/common/graph_fuzz_util.h"
#include "importers/om/om_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mi::importers::FuzzGraphImport(data, size, "model.om",
                                        mi::importers::ImportOmFromBuffer);
}
