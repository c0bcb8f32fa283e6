// Fuzzes the trace-event CSV reader with the entry point the importer uses
// (shared body: importers/common/trace_fuzz_util.h).
#include <cstddef>
#include <cstdint>

#include "importers/chrome_trace/chrome_trace_importer.h"
#include "importers/common/trace_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mi::importers::FuzzTraceImport(
      data, size, "fuzz.csv", mi::importers::ImportTraceEventCsvFromBuffer);
}
