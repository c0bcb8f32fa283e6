// Fuzzes the step time split CSV reader (step_trace_time.csv,
// cluster_step_trace_time.csv) with the entry point the importer uses.
#include <cstddef>
#include <cstdint>

#include "importers/ascend_communication/ascend_communication_importer.h"
#include "importers/common/trace_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mi::importers::FuzzTraceImport(
      data, size, "fuzz/step_trace_time.csv",
      [](std::string_view text, mi::importers::ImportContext& ctx, size_t) {
        return mi::importers::ImportAscendStepTraceFromBuffer(text, ctx);
      });
}
