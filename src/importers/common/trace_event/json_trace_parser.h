#pragma once

// Parses one trace-event object (the bytes JsonTraceTokenizer hands out)
// with simdjson On-Demand into a flat ParsedEvent holding only the fields
// the dialect mapping needs. Timestamps become int64 nanoseconds straight
// from the decimal digits (never through a double). Events that ONNX
// Runtime wrote without JSON escaping (raw tabs/newlines, lone backslashes
// from Windows paths) are repaired and parsed again.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

namespace mi::importers::trace_event {

// A pid / tid: a number, or a label when the source wrote a string that is
// not an integer (Kineto: "pid": "Spans", "tid": "stream 7").
struct EventThreadId {
  bool present = false;
  int64_t number = 0;
  std::string_view label;  // empty when numeric
};

// Views point into the parser's buffers: valid until the next Parse().
struct ParsedEvent {
  std::string_view name;
  std::string_view cat;
  std::string_view ph;
  bool has_name = false;
  bool has_ts = false;
  int64_t ts_ns = 0;
  bool has_dur = false;
  int64_t dur_ns = 0;
  EventThreadId pid;
  EventThreadId tid;
  bool has_bind_id = false;  // flow v2 (bind_id + flow_in / flow_out)
  bool has_id = false;
  std::string_view id;     // flow id: a string's contents or a number's text
  std::string_view scope;  // "s" of instants
  // args
  int64_t external_id = -1;  // "External id" / 2021 "external id"
  int64_t correlation = -1;
  int64_t device = -1;
  int64_t stream = -1;
  int64_t bytes = -1;
  std::string_view op_name;        // ORT
  std::string_view provider;       // ORT
  std::string_view shapes;         // ORT input_type_shape / Kineto Input Dims
  std::string_view output_shapes;  // ORT output_type_shape
  std::string_view meta_name;      // M events: args.name
  std::string_view meta_labels;    // M events: args.labels
  // CANN / msprof args (read by importers/ascend_timeline), -1 / empty
  // when absent.
  std::string_view task_type;  // "Task Type" / HCCL "task type"
  int64_t task_id = -1;        // "Task Id" / HCCL "task id"
  int64_t stream_id = -1;      // "Physic Stream Id" / "Stream Id"
  int64_t batch_id = -1;       // "Batch Id"
  int64_t subtask_id = -1;     // "Subtask Id" (4294967295 = none)
  int64_t model_id = -1;       // "Model Id" / HCCL "model id"
  int64_t connection_id = -1;  // "connection_id"
  std::string_view item_id;    // CANN "item_id" (Node@launch: GE op name)
  // Allocator args, -1 when absent (trace/allocator_records.h).
  // ORT node events: activation_size, parameter_size, output_size,
  // mem_bytes_in_use, mem_in_use_peak.
  int64_t activation_size = -1;
  int64_t parameter_size = -1;
  int64_t output_size = -1;
  int64_t mem_bytes_in_use = -1;
  int64_t mem_in_use_peak = -1;
  // Kineto [memory] instants: Bytes (negative = free), Total Allocated,
  // Total Reserved, Device Type (0 = CPU), Device Id.
  bool has_memory_bytes = false;
  int64_t memory_bytes = 0;
  int64_t total_allocated = -1;
  int64_t total_reserved = -1;
  int64_t device_type = -1;
  int64_t device_id = -1;
  // Kineto cuda_sync "Stream Wait Event" / "Event Sync": the stream the
  // waited-on event was recorded on and the correlation id of the
  // cudaEventRecord call that recorded it (-1 when Kineto did not see it).
  int64_t wait_on_stream = -1;
  int64_t wait_on_record_correlation = -1;
  // Collective args (Kineto's record_param_comms cpu_op and the NCCL
  // kernel it launched repeat them), -1 / empty when absent.
  std::string_view collective_name;  // "Collective name"
  int64_t in_msg_nelems = -1;        // "In msg nelems"
  int64_t out_msg_nelems = -1;       // "Out msg nelems"
  int64_t group_size = -1;           // "Group size"
  std::string_view dtype;            // "dtype"
  std::string_view pg_name;          // "Process Group Name"
  std::string_view pg_description;   // "Process Group Description"
  std::string_view pg_ranks;         // "Process Group Ranks" ("[0, 1]")
  int64_t seq = -1;                  // "Seq"
};

// Where a parse failed and why (offset relative to the event's first byte).
struct EventParseError {
  size_t offset = 0;
  std::string what;
};

class JsonTraceParser {
 public:
  JsonTraceParser();
  ~JsonTraceParser();
  JsonTraceParser(const JsonTraceParser&) = delete;
  JsonTraceParser& operator=(const JsonTraceParser&) = delete;

  enum class Outcome : uint8_t { kParsed, kRepaired, kFailed };

  // Parses `event_json` into `*event`. On kFailed, `*error` says why.
  Outcome Parse(std::string_view event_json, ParsedEvent* event,
                EventParseError* error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "1234.567" (µs) -> 1234567 ns exactly, from the decimal text of a JSON
// number (or the digits of a string such as "1696000000123.456"). Digits
// beyond the nanosecond are rounded half away from zero. nullopt when the
// text is not a number or the result does not fit in int64.
std::optional<int64_t> ParseMicrosecondsToNanoseconds(std::string_view text);

// Strictly parses a JSON integer (optionally as a string's digits).
std::optional<int64_t> ParseInt64(std::string_view text);

// Escapes raw control characters inside strings, doubles backslashes that
// do not start a valid JSON escape and replaces invalid UTF-8 bytes with
// U+FFFD. Returns true when anything changed (`*out` is then the repaired
// text).
bool RepairUnescapedStrings(std::string_view in, std::string* out);

}  // namespace mi::importers::trace_event
