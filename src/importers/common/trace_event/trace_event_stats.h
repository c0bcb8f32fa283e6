#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace mi::importers {

// What one trace-event import saw besides the tasks it added: events that
// are deliberately not tasks (flows, instants, counters, metadata) are
// counted here rather than dropped silently, with the top-level facts.
// Formats with an extension (importers/ascend_timeline) keep their own
// counts beside these.
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
  // "onnxruntime", "pytorch", "chrome", or an extension's ("ascend").
  std::string dialect;
  uint64_t flows_unresolved = 0;  // flow pairs whose ends matched no task
  // Kineto cuda_sync "Stream Wait Event"s (chrome_trace README "Event
  // dependencies").
  uint64_t stream_wait_events = 0;
  uint64_t event_links = 0;  // waiting tasks given event_before (+ recorder)
  // Waits on an event another wait already linked the same task to: the
  // task keeps the record that ended last (one event_before per task).
  uint64_t event_waits_merged = 0;
  // Waits without a record (Kineto wrote -1, the recording stream has no
  // task launched before the record, or none is launched after the wait).
  uint64_t event_waits_unresolved = 0;
};

}  // namespace mi::importers
