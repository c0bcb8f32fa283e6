// Fuzzes both ONNX importers with the same bytes. The pass rule: any Status
// is fine except kInternal (a bug); crashes and sanitizer reports fail.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "importers/onnx/onnx_importer.h"
#include "model/model.h"

namespace {

void RunOne(std::string_view bytes, bool text) {
  mi::StringPool strings;
  mi::Model model(&strings);
  mi::DiagnosticSink diagnostics;
  mi::importers::ImportContext ctx;
  ctx.path = text ? "fuzz.onnxtxt" : "fuzz.onnx";
  ctx.model = &model;
  ctx.diagnostics = &diagnostics;
  mi::Status status = text ? mi::importers::ImportOnnxTextFromBuffer(bytes, ctx)
                           : mi::importers::ImportOnnxFromBuffer(bytes, ctx);
  if (status.code() == mi::StatusCode::kInternal) std::abort();
  if (status.ok()) model.BuildIndexes();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  RunOne(bytes, /*text=*/false);
  RunOne(bytes, /*text=*/true);
  return 0;
}
