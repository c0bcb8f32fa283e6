#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "importers/common/importer.h"
#include "model_inspector/status.h"

namespace mi::importers {

// Chrome trace-event JSON (array or {"traceEvents": [...]}), with dialects
// for ONNX Runtime profiles and PyTorch profiler (Kineto) traces.
std::unique_ptr<Importer> CreateChromeTraceImporter();

// The same trace events flattened into CSV (one row per event, columns
// cat,pid,tid,dur,ts,ph,name,args_*), e.g. ONNX Runtime profiles exported
// with pandas by onnx-array-api.
std::unique_ptr<Importer> CreateTraceEventCsvImporter();
// Tests and fuzzers: the CSV reader over a buffer fed in `chunk_size`
// pieces (0: three pieces).
Status ImportTraceEventCsvFromBuffer(std::string_view data, ImportContext& ctx,
                                     size_t chunk_size = 0);

// What one Chrome-trace import saw besides the tasks it added: events that
// are deliberately not tasks (flows, instants, counters, metadata) are
// counted here rather than dropped silently, with the top-level facts.
struct ChromeTraceStats {
  uint64_t events = 0;                      // trace events seen, all phases
  uint64_t tasks = 0;                       // tasks added to the Trace
  std::array<uint64_t, 8> tasks_by_kind{};  // indexed by TaskKind
  uint64_t flow_events = 0;         // v1 flows: ph s / t / f (ac2g, fwdbwd)
  uint64_t flow_bindings = 0;       // v2 flows: events with bind_id
  uint64_t instant_events = 0;      // ph i / I / R other than [memory]
  uint64_t memory_events = 0;       // Kineto "[memory]" instants
  uint64_t counter_events = 0;      // ph C
  uint64_t async_events = 0;        // ph b / e / n and legacy S / T / p / F
  uint64_t metadata_events = 0;     // ph M
  uint64_t other_phase_events = 0;  // known phases we do not model (P, O, ...)
  uint64_t unknown_phase_events = 0;
  uint64_t skipped_events = 0;   // missing ts / ph / dur
  uint64_t repaired_events = 0;  // ORT events with unescaped strings
  uint64_t runs = 0;             // runs added (incl. "whole trace")
  // Top level of the object container.
  bool object_container = false;
  bool has_schema_version = false;
  int64_t schema_version = 0;
  bool has_base_time = false;
  int64_t base_time_ns = 0;  // Kineto baseTimeNanoseconds (ts are relative)
  bool has_device_properties = false;
  int64_t distributed_rank = -1;
  std::string display_time_unit;
  std::string dialect;  // "onnxruntime", "pytorch", "ascend" or "chrome"
  // Ascend dialect (CANN msprof / torch_npu): see README "Ascend dialect".
  bool ascend = false;
  uint64_t ascend_device_tasks = 0;          // Ascend Hardware + HCCL tasks
  uint64_t ascend_host_api_tasks = 0;        // CANN track (Node@launch, ...)
  uint64_t ascend_skipped_events = 0;        // Overlap Analysis slices
  uint64_t launch_links_by_node_launch = 0;  // Node@launch, same connection_id
  uint64_t launch_links_by_flow = 0;         // HostToDevice s/f resolved
  uint64_t launch_links_by_connection_id = 0;  // other CANN call, fallback
  uint64_t framework_links_by_flow = 0;        // async_npu cpu_op -> task
  uint64_t flows_unresolved = 0;  // s/f pairs whose ends matched no task
  // Kineto cuda_sync "Stream Wait Event"s (README "Event dependencies").
  uint64_t stream_wait_events = 0;
  uint64_t event_links = 0;  // waiting tasks given event_before (+ recorder)
  // Waits on an event another wait already linked the same task to: the
  // task keeps the record that ended last (one event_before per task).
  uint64_t event_waits_merged = 0;
  // Waits without a record (Kineto wrote -1, the recording stream has no
  // task launched before the record, or none is launched after the wait).
  uint64_t event_waits_unresolved = 0;
};

// The streaming reader Import() uses, with the stats exposed (benchmarks,
// tools). `expected_bytes` (0 if unknown) sizes the task reservation.
std::unique_ptr<Reader> CreateChromeTraceReader(ImportContext& ctx,
                                                ChromeTraceStats* stats,
                                                uint64_t expected_bytes);

// Imports a whole trace held in memory, fed to the streaming reader in
// several chunks (so tests and the fuzzer exercise chunk boundaries).
// ctx.trace and ctx.diagnostics must be set; ctx.path names the input in
// messages ("<buffer>" when empty).
Status ImportChromeTraceFromBuffer(std::string_view data, ImportContext& ctx);
Status ImportChromeTraceFromBuffer(std::string_view data, ImportContext& ctx,
                                   ChromeTraceStats* stats,
                                   size_t chunk_size = 0);

}  // namespace mi::importers
