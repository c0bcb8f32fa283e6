#pragma once

// CANN / Ascend task types (shared/formats/ascend.md §1.2, §1.3, §1.4): the
// one mapping from a msprof "Task Type" (timeline args, op_summary column),
// a torch_npu "Accelerator Core" (kernel_details) or a task_time
// "kernel_type" to a task kind. Used by the chrome_trace Ascend dialect and
// the ascend_csv importer, which must agree so that a timeline task and the
// CSV row joined onto it are counted alike.

#include <string_view>

#include "trace/trace.h"

namespace mi::importers {

// AI_CORE, AI_VECTOR_CORE, MIX_AIC/MIX_AIV, AI_CPU, DSA_SQE, FFTS(_PLUS),
// KERNEL_* (task_time), HCCL / COMMUNICATION (op_summary collectives)
// -> compute; MEMCPY* / SDMA / *DMA* / MEMSET -> data movement; Notify,
// EVENT_*, Write Value, *WAIT*, *RECORD*, barriers -> sync; anything else
// (including the empty string) -> other. Case-insensitive.
TaskKind AscendTaskKind(std::string_view task_type);

// True for the collective-communication task types of op_summary /
// kernel_details (HCCL in 2023-2025 data, COMMUNICATION in current msprof).
bool IsAscendCommunicationType(std::string_view task_type);

}  // namespace mi::importers
