#pragma once

// CANN / Ascend task types (shared/formats/ascend.md §1.2, §1.3, §1.4): the
// one mapping from a msprof "Task Type" (timeline args, op_summary column),
// a torch_npu "Accelerator Core" (kernel_details) or a task_time
// "kernel_type" to a task kind and a task class. Used by the
// ascend_timeline and the ascend_csv importers, which must agree so that a
// timeline task and the CSV row joined onto it are counted alike.

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
// kernel_details (HCCL in 2023-2025 data, COMMUNICATION in current msprof)
// and the timeline's HCCL groups (category "communication").
// Case-insensitive.
bool IsAscendCommunicationType(std::string_view task_type);

// The task class (trace/trace.h TaskRow::task_class) of a CANN device task,
// in this order: layout_conversion for the layout conversion ops (op type
// TransData, TransDataRNN, FormatTransfer, or a name containing TransData:
// GE names those it inserts trans_TransData_N), the first thing a CANN user
// checks; data_movement for data-movement kinds; the accelerator the task
// type names: ai_core (AI_CORE, MIX_AIC), ai_vector (AI_VECTOR_CORE,
// MIX_AIV), ai_cpu (AI_CPU), communication (IsAscendCommunicationType, or
// a name HCCL gives its collectives: hcom_*);
// sync for sync kinds; dsa (DSA_SQE); else the kind's name. `op_type` is
// the task's op type when known, else its name.
std::string_view AscendTaskClass(std::string_view task_type,
                                 std::string_view op_type,
                                 std::string_view name, TaskKind kind);

// Gives a CANN source the classes of the op types whose class its tasks'
// op types decide even when the op type comes from the linked graph node
// (SourceInfo::op_type_classes): the layout conversion ops above.
void AddAscendOpTypeClasses(Trace& trace, SourceId source);

}  // namespace mi::importers
