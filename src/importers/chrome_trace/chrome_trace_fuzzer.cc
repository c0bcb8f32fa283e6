// Fuzzes the Chrome-trace importer through the same streaming reader the CLI
// uses. A Status error is fine; a crash, a sanitizer report or kInternal is
// a bug. The threaded reader (parser and builder on a thread of their own, as
// Import() runs it) must give what the single-threaded one gives: the same
// status, tasks and diagnostics.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Vary the chunking with the input so boundaries land everywhere.
  size_t chunk_size = size == 0 ? 1 : 1 + (data[0] * 7 + size) % (size + 1);
  for (size_t chunks : {size_t{0}, chunk_size}) {
    struct Outcome {
      mi::StatusCode code;
      size_t tasks;
      size_t tracks;
      size_t diagnostics;
      int64_t last_start;
    };
    Outcome seen[2];
    for (bool threaded : {false, true}) {
      mi::StringPool strings;
      mi::Trace trace(&strings);
      mi::DiagnosticSink diagnostics;
      mi::importers::ImportContext ctx;
      ctx.path = "fuzz.json";
      ctx.trace = &trace;
      ctx.diagnostics = &diagnostics;
      mi::importers::ChromeTraceStats stats;
      mi::Status status = mi::importers::ImportChromeTraceFromBuffer(
          input, ctx, &stats, chunks, threaded);
      MI_CHECK(status.code() != mi::StatusCode::kInternal);
      MI_CHECK(status.code() == mi::StatusCode::kOk ||
               status.code() == mi::StatusCode::kMalformedInput);
      if (status.ok()) {
        MI_CHECK(stats.tasks == trace.task_count());
        for (size_t i = 0; i < trace.task_count(); ++i) {
          mi::TaskId t(static_cast<uint32_t>(i));
          MI_CHECK(trace.task_duration_ns(t) >= 0);
          MI_CHECK(trace.task_run(t) < trace.runs().size());
          MI_CHECK(trace.task_track(t).value() < trace.track_count());
        }
      }
      int64_t last = trace.task_count() == 0
                         ? -1
                         : trace.task_start_ns(mi::TaskId(
                               static_cast<uint32_t>(trace.task_count() - 1)));
      seen[threaded] = {status.code(), trace.task_count(), trace.track_count(),
                        diagnostics.log().size(), last};
    }
    MI_CHECK(seen[0].code == seen[1].code);
    MI_CHECK(seen[0].tasks == seen[1].tasks);
    MI_CHECK(seen[0].tracks == seen[1].tracks);
    MI_CHECK(seen[0].diagnostics == seen[1].diagnostics);
    MI_CHECK(seen[0].last_start == seen[1].last_start);
  }
  return 0;
}
