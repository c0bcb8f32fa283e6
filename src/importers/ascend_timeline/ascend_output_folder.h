#pragma once

// CANN profiler output folders (shared/formats/ascend.md §1.1, §2.1;
// shared/formats/cluster.md 1.1): what of a torch_npu `*_ascend_pt` or a
// msprof `PROF_*` folder is read, as one source, in which order.

#include <cstdint>
#include <string>
#include <string_view>

#include "importers/common/run_files.h"

namespace mi::importers::ascend_timeline {

// trace_view.json and msprof_*.json (not msprof_tx*), also gzipped.
bool IsTimelineFileName(std::string_view file_name);

// The Importer::ClaimRunFiles of the ascend_timeline importer. From a
// torch_npu folder ASCEND_PROFILER_OUTPUT/ is read and the PROF_* tree
// inside it (the same data) left out; from a msprof PROF_* folder
// mindstudio_profiler_output/ is read and the raw data (host/, device_N/)
// left out. Of those output folders only the timeline (trace_view.json,
// msprof_*.json, slices in slice order) and, after every timeline, the
// per-task tables (kernel_details.csv, op_summary_*.csv), allocator
// totals (memory_record*.csv, npu_module_mem*.csv), API statistics,
// operator and static op memory, and after those the L2 cache rates
// (l2_cache*.csv) are read, so that the tables join onto the timeline's
// tasks; the other summaries are left out. The files of one
// output folder form one source keyed by the folder (the parent of
// ASCEND_PROFILER_OUTPUT/ or mindstudio_profiler_output/), with the
// torch_npu rank from profiler_info_<rank>.json. torch_npu's
// profiler_info / profiler_metadata.json are configuration, left out.
void ClaimOutputFolders(RunFiles& files);

// torch_npu writes the rank into profiler_info_<rank>.json at the root of
// its output folder (key rank_id); the msprof PROF_* tree inside a
// torch_npu folder has it one level up. -1 when there is none (msprof
// alone, a run without torch.distributed).
int32_t ReadTorchNpuRank(const std::string& folder);

}  // namespace mi::importers::ascend_timeline
