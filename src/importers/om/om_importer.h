#pragma once

// Ascend offline models (.om, the "IMOD" container ATC and GE write): the
// compiled graph of MODEL_DEF through the GE converter (importers/ge), with
// the static task list of TASK_INFO on each op (task type, kernel, stream,
// block dim), the kernel stores' binaries by op, and the container's facts
// (header, partitions, weight bytes) as model properties. Weights are never
// read. Files holding a root model and its submodels, and flow models whose
// submodels are nested .om files, are read whole. Format notes:
// docs/reference/om.md.

#include <memory>
#include <string_view>

#include "importers/common/importer.h"

namespace mi::importers {

std::unique_ptr<Importer> CreateOmImporter();

// For tests and fuzzers: `data` is the whole file.
Status ImportOmFromBuffer(std::string_view data, ImportContext& ctx);

}  // namespace mi::importers
