#pragma once

// CANN profiler CSV tables: msprof op_summary_*.csv / torch_npu
// kernel_details.csv (one row per device task, every header variant of
// shared/formats/ascend.md §1.3 / §2.3, columns mapped by name),
// task_time_*.csv (current variant: tasks; runtime.db variant: recognised,
// no tasks) and op_statistic*.csv (recognised, no tasks: a cross-check).
// When the Trace already holds Ascend timeline tasks (the run directory
// loads the timeline first), rows are joined onto them by (stream, start
// ns, name) and only add op type and shapes.

#include <memory>
#include <string_view>

#include "importers/common/importer.h"
#include "model_inspector/status.h"

namespace mi::importers {

std::unique_ptr<Importer> CreateAscendCsvImporter();

// Tests and fuzzers: the streaming reader over a buffer fed in
// `chunk_size` pieces (0: three pieces).
Status ImportAscendCsvFromBuffer(std::string_view data, ImportContext& ctx,
                                 size_t chunk_size = 0);

}  // namespace mi::importers
