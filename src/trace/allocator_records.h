#pragma once

// Allocator figures a trace recorded, kept beside the tasks so that the
// memory analysis (analysis/memory) can compare its estimate with what
// the runtime reported. Sizes are bytes; -1 where the source did not say.
// Importers append; nothing else in the trace depends on these tables.

#include <cstdint>

#include "base/ids.h"
#include "base/string_pool.h"

namespace mi {

// Per-task sizes: ONNX Runtime profiles put them in each node's
// `*_kernel_time` event args.
struct TaskMemoryRecord {
  TaskId task;
  int64_t activation_bytes = -1;   // activation_size: input activations
  int64_t parameter_bytes = -1;    // parameter_size: weights the node reads
  int64_t output_bytes = -1;       // output_size
  int64_t in_use_bytes = -1;       // mem_bytes_in_use after the node ran
  int64_t in_use_peak_bytes = -1;  // mem_in_use_peak so far
};

// One allocator event or sample: Kineto `[memory]` instants (Bytes, negative
// for a free; Total Allocated / Total Reserved after it); Ascend
// memory_record.csv rows (totals only, per component); Ascend
// npu_module_mem.csv rows (memory reserved per CANN module: SLOG, HCCL,
// APP, ...; `per_module`, reserved only).
struct AllocatorSample {
  int64_t time_ns = 0;
  int64_t delta_bytes = 0;
  int64_t total_allocated_bytes = -1;
  int64_t total_reserved_bytes = -1;
  int32_t device = -1;  // device index; -1 for host memory or unknown
  // Ascend: the allocator the totals are of ("PTA", "GE", "PTA+GE",
  // "APP"); empty for Kineto.
  StringId component = StringPool::kEmpty;
  // The source (trace/trace.h SourceInfo) that recorded it: two ranks'
  // device 0 are two allocators. Invalid when added by hand (tests).
  SourceId source;
  // npu_module_mem.csv: what a driver module reserved, not an allocator's
  // totals; the timeline draws it, the memory analysis leaves it out.
  bool per_module = false;
};

}  // namespace mi
