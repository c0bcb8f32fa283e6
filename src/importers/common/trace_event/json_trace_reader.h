#pragma once

// The streaming reader of trace-event JSON shared by the importers whose
// files are Chrome trace-event JSON (importers/chrome_trace for ONNX
// Runtime, PyTorch/Kineto and generic traces; importers/ascend_timeline for
// CANN timelines): tokenizer -> parser -> builder, plus the format's
// TraceEventBuilder::Extension when it has one.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "importers/common/importer.h"
#include "importers/common/trace_event/trace_event_builder.h"
#include "importers/common/trace_event/trace_event_stats.h"
#include "model_inspector/status.h"

namespace mi::importers::trace_event {

// Makes a format's extension for one file's builder.
using ExtensionFactory =
    std::function<std::unique_ptr<TraceEventBuilder::Extension>(
        TraceEventBuilder&)>;

// `stats` may be null; `expected_bytes` (0 if unknown) sizes the task
// reservation. `threaded`: the parser and the builder run on a thread of
// the reader's own while the caller's thread tokenizes the next events (the
// same trace and diagnostics; the reader then charges the memory budget itself,
// Reader::ChargesWhatItBuilds). Nothing may read ctx.trace or
// ctx.diagnostics between Parse() calls of a threaded reader.
std::unique_ptr<Reader> CreateJsonTraceReader(
    ImportContext& ctx, ChromeTraceStats* stats, uint64_t expected_bytes,
    const ExtensionFactory& extension = {}, bool threaded = false);

// Imports a whole trace held in memory, fed to that reader in
// `chunk_size` pieces (0: three, so events straddle chunk boundaries).
// ctx.trace and ctx.diagnostics must be set.
Status ImportJsonTraceFromBuffer(std::string_view data, ImportContext& ctx,
                                 ChromeTraceStats* stats, size_t chunk_size,
                                 const ExtensionFactory& extension = {},
                                 bool threaded = false);

// The decompressed size to expect from a trace file (its size; gzip ~15x),
// 0 when unknown.
uint64_t ExpectedTraceBytes(const std::string& path);

// How much a file's head looks like trace-event JSON: 90+ near certain (an
// array of objects with "ph", an object with trace-event keys), 50-60 a
// trace-like name or shape, 5-40 any JSON a trace might still be (0: not
// JSON). The chrome_trace importer's Sniff; formats of their own build on it.
int SniffTraceEventJson(std::string_view head, std::string_view path);

// The head without a UTF-8 byte order mark and leading white space.
std::string_view SkipBomAndSpace(std::string_view s);

}  // namespace mi::importers::trace_event
