#pragma once

// torch_npu's rank of a profiler output folder (shared/formats/cluster.md
// 1.1): the ascend_timeline and ascend_db importers both group a
// `*_ascend_pt` folder's files into one source with this rank.

#include <cstdint>
#include <string>
#include <string_view>

namespace mi::importers {

// torch_npu writes the rank into profiler_info_<rank>.json at the root of
// its output folder (key rank_id); the msprof PROF_* tree inside a
// torch_npu folder has it one level up. -1 when there is none (msprof
// alone, a run without torch.distributed).
int32_t ReadTorchNpuRank(const std::string& folder);

// msprof names its run folders PROF_<6 digits>_<timestamp>_<letters>; a
// folder of the user's that merely starts with PROF_ is not one.
bool IsMsprofRunFolderName(std::string_view name);

}  // namespace mi::importers
