#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "importers/common/importer.h"
#include "importers/common/trace_event/trace_event_stats.h"
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

// The streaming reader Import() uses, with the stats exposed (benchmarks,
// tools). `expected_bytes` (0 if unknown) sizes the task reservation.
// `threaded` as Import() has it: parser and builder on a thread of the
// reader's own (importers/common/trace_event/json_trace_reader.h); false: all
// on the caller's thread.
std::unique_ptr<Reader> CreateChromeTraceReader(ImportContext& ctx,
                                                ChromeTraceStats* stats,
                                                uint64_t expected_bytes,
                                                bool threaded = true);

// Imports a whole trace held in memory, fed to the streaming reader in
// several chunks (so tests and the fuzzer exercise chunk boundaries).
// ctx.trace and ctx.diagnostics must be set; ctx.path names the input in
// messages ("<buffer>" when empty).
Status ImportChromeTraceFromBuffer(std::string_view data, ImportContext& ctx);
// `threaded`: through the threaded reader Import() uses (the tests and the
// fuzzer compare the two).
Status ImportChromeTraceFromBuffer(std::string_view data, ImportContext& ctx,
                                   ChromeTraceStats* stats,
                                   size_t chunk_size = 0,
                                   bool threaded = false);

}  // namespace mi::importers
