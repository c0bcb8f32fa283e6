// Fuzzes the ge_proto_text reader (src/importers/ge). A Status error is fine; a
// crash, a sanitizer report or kInternal is a bug, and an accepted input
// gives a model whose node lists are consistent.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/ge/ge_importer.h"
#include "model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  mi::StringPool strings;
  mi::Model model(&strings);
  mi::DiagnosticSink diagnostics;
  mi::importers::ImportContext ctx;
  ctx.path = "ge_proto_00000001_graph_1_Build.txt";
  ctx.model = &model;
  ctx.diagnostics = &diagnostics;
  mi::Status status = mi::importers::ImportGeProtoTextFromBuffer(input, ctx);
  MI_CHECK(status.code() != mi::StatusCode::kInternal);
  if (status.ok()) {
    MI_CHECK(!ctx.graphs_added.empty());
    model.BuildIndexes();
    for (size_t n = 0; n < model.node_count(); ++n) {
      mi::NodeId node(static_cast<uint32_t>(n));
      for (mi::ValueId v : model.node_outputs(node)) {
        MI_CHECK(v.value() < model.value_count());
      }
    }
  }
  return 0;
}
