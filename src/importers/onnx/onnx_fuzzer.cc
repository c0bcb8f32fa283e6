// Fuzzes both ONNX importers with the same bytes. The pass rule: any Status
// is fine except kInternal (a bug); crashes and sanitizer reports fail.
// Binary input is imported twice: by the default path (the direct
// wire-format path, falling back to skeleton + libonnx) and forced through
// libonnx; when the direct path accepted the bytes, both Models and their
// diagnostics must be identical (differential fuzzing).

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "importers/onnx/onnx_importer.h"
#include "importers/onnx/onnx_model_compare.h"
#include "model/model.h"

namespace {

struct Run {
  mi::StringPool strings;
  mi::Model model{&strings};
  mi::DiagnosticSink diagnostics;
  mi::importers::ImportContext ctx;
  mi::Status status;
};

void RunOne(
    std::string_view bytes, bool text, Run* run,
    mi::importers::OnnxImportPath path = mi::importers::OnnxImportPath::kAuto) {
  run->ctx.path = text ? "fuzz.onnxtxt" : "fuzz.onnx";
  run->ctx.model = &run->model;
  run->ctx.diagnostics = &run->diagnostics;
  mi::importers::OnnxImportOptions options;
  options.force_path = path;
  run->status =
      text ? mi::importers::ImportOnnxTextFromBuffer(bytes, run->ctx)
           : mi::importers::ImportOnnxFromBuffer(bytes, run->ctx, options);
  if (run->status.code() == mi::StatusCode::kInternal) std::abort();
}

void RunBinary(std::string_view bytes) {
  Run direct;
  RunOne(bytes, false, &direct, mi::importers::OnnxImportPath::kDirect);
  if (direct.status.code() == mi::StatusCode::kUnsupported) {
    // Declined: the default path is the libonnx one; exercise it.
    Run fallback;
    RunOne(bytes, false, &fallback);
    if (fallback.status.ok()) fallback.model.BuildIndexes();
    return;
  }
  Run reference;
  RunOne(bytes, false, &reference, mi::importers::OnnxImportPath::kProtobuf);
  if (!direct.status.ok() || !reference.status.ok() ||
      !mi::importers::onnx_test::DiffModels(direct.model, reference.model)
           .empty() ||
      !mi::importers::onnx_test::DiffDiagnostics(direct.diagnostics,
                                                 reference.diagnostics)
           .empty()) {
    std::abort();  // the two paths disagree
  }
  direct.model.BuildIndexes();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  RunBinary(bytes);
  Run text;
  RunOne(bytes, /*text=*/true, &text);
  if (text.status.ok()) text.model.BuildIndexes();
  return 0;
}
