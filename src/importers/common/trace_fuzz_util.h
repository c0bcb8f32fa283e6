#pragma once

// The body shared by the fuzz targets of trace readers that take a buffer
// in chunks: import it (chunk size varied with the input, so boundaries land
// everywhere); a Status error is fine, kInternal is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "trace/trace.h"

namespace mi::importers {

template <typename ImportFn>
int FuzzTraceImport(const uint8_t* data, size_t size, std::string_view path,
                    ImportFn import) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StringPool strings;
  Trace trace(&strings);
  DiagnosticSink diagnostics;
  ImportContext ctx;
  ctx.path = std::string(path);
  ctx.trace = &trace;
  ctx.diagnostics = &diagnostics;
  Status status = import(input, ctx, size % 13 + 1);
  if (status.code() == StatusCode::kInternal) std::abort();
  return 0;
}

// For tests of such readers: one trace to import into, kept for checks.
template <auto kImport>
struct TraceImportRun {
  StringPool strings;
  Trace trace{&strings};
  DiagnosticSink diagnostics;
  std::string path = "trace.csv";
  Status Import(std::string_view data, size_t chunk) {
    ImportContext ctx;
    ctx.path = path;
    ctx.trace = &trace;
    ctx.diagnostics = &diagnostics;
    return kImport(data, ctx, chunk);
  }
};

}  // namespace mi::importers
