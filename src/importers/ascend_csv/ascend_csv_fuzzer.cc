// Fuzzes the CANN profiler CSV reader with the entry point the importer
// uses.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "importers/ascend_csv/ascend_csv_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  mi::StringPool strings;
  mi::Trace trace(&strings);
  mi::DiagnosticSink diagnostics;
  mi::importers::ImportContext ctx;
  ctx.path = "fuzz.csv";
  ctx.trace = &trace;
  ctx.diagnostics = &diagnostics;
  mi::Status status =
      mi::importers::ImportAscendCsvFromBuffer(input, ctx, size % 13 + 1);
  if (status.code() == mi::StatusCode::kInternal) std::abort();
  return 0;
}
