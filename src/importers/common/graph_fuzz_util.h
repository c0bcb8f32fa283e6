#pragma once

// The body shared by the fuzz targets of graph readers: import one buffer;
// a Status error is fine, a crash, a sanitizer report or kInternal is a
// bug, and an accepted input gives a model whose lists are consistent.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "model/model.h"

namespace mi::importers {

template <typename ImportFn>
int FuzzGraphImport(const uint8_t* data, size_t size, std::string_view path,
                    ImportFn import) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StringPool strings;
  Model model(&strings);
  DiagnosticSink diagnostics;
  ImportContext ctx;
  ctx.path = std::string(path);
  ctx.model = &model;
  ctx.diagnostics = &diagnostics;
  Status status = import(input, ctx);
  MI_CHECK(status.code() != StatusCode::kInternal);
  if (status.ok()) {
    MI_CHECK(!ctx.graphs_added.empty());
    model.BuildIndexes();
    for (size_t n = 0; n < model.node_count(); ++n) {
      NodeId node(static_cast<uint32_t>(n));
      for (ValueId v : model.node_outputs(node)) {
        MI_CHECK(!v.valid() || v.value() < model.value_count());
      }
      for (ValueId v : model.node_inputs(node)) {
        MI_CHECK(!v.valid() || v.value() < model.value_count());
      }
    }
  }
  return 0;
}

}  // namespace mi::importers
