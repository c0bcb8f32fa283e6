#pragma once

// CANN timelines: msprof's msprof_*.json (sliced msprof_slice_N.json
// included) and torch_npu's trace_view.json, Chrome trace-event JSON with
// Ascend processes, args and flows (README.md). Read by the shared
// trace-event reader (importers/common/trace_event) with this folder's
// extension. The importer also knows the CANN profiler output folders
// (torch_npu *_ascend_pt, msprof PROF_*) and claims their files.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "importers/common/importer.h"
#include "importers/common/trace_event/trace_event_stats.h"
#include "model_inspector/status.h"

namespace mi::importers {

std::unique_ptr<Importer> CreateAscendTimelineImporter();

// What the CANN part of a timeline import saw (besides ChromeTraceStats).
struct AscendTimelineStats {
  bool ascend = false;                       // the file is a CANN timeline
  uint64_t device_tasks = 0;                 // Ascend Hardware + HCCL tasks
  uint64_t host_api_tasks = 0;               // CANN track (Node@launch, ...)
  uint64_t skipped_events = 0;               // Overlap Analysis slices
  uint64_t launch_links_by_node_launch = 0;  // Node@launch, same connection_id
  uint64_t launch_links_by_flow = 0;         // HostToDevice s/f resolved
  uint64_t launch_links_by_connection_id = 0;  // other CANN call, fallback
  uint64_t framework_links_by_flow = 0;        // async_npu cpu_op -> task
  uint64_t collectives = 0;  // hcom_* ops given a collective record
};

// Tests and fuzzers: imports a timeline held in memory, fed to the same
// streaming reader in `chunk_size` pieces (0: three). ctx.trace and
// ctx.diagnostics must be set; either stats may be null.
Status ImportAscendTimelineFromBuffer(std::string_view data, ImportContext& ctx,
                                      AscendTimelineStats* ascend_stats,
                                      ChromeTraceStats* stats = nullptr,
                                      size_t chunk_size = 0);

}  // namespace mi::importers
