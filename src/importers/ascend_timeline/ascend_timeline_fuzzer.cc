// Fuzzes the CANN timeline importer through the same streaming reader the
// CLI uses. An input holding the line "--slice--" is read as two files of
// one source (a sliced msprof timeline), so the continuation of an earlier
// slice's tracks and connection_ids is exercised too. A Status error is
// fine; a crash, a sanitizer report or kInternal is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/ascend_timeline/ascend_timeline_importer.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<const char*, std::string_view>> files = {
      {"msprof_slice_0.json", input}};
  constexpr std::string_view kSeparator = "\n--slice--\n";
  if (size_t at = input.find(kSeparator); at != std::string_view::npos) {
    files = {{"msprof_slice_0.json", input.substr(0, at)},
             {"msprof_slice_1.json", input.substr(at + kSeparator.size())}};
  }
  // Vary the chunking with the input so boundaries land everywhere.
  size_t chunk_size = size == 0 ? 1 : 1 + (data[0] * 7 + size) % (size + 1);
  for (size_t chunks : {size_t{0}, chunk_size}) {
    mi::StringPool strings;
    mi::Trace trace(&strings);
    mi::DiagnosticSink diagnostics;
    const mi::SourceId source =
        trace.FindOrAddSource(strings.Intern("PROF_000001_1_A"));
    size_t tasks = 0;
    bool ok = true;
    for (const auto& [path, file] : files) {
      mi::importers::ImportContext ctx;
      ctx.path = path;
      ctx.trace = &trace;
      ctx.diagnostics = &diagnostics;
      ctx.source = source;
      mi::importers::ChromeTraceStats stats;
      mi::importers::AscendTimelineStats ascend;
      mi::Status status = mi::importers::ImportAscendTimelineFromBuffer(
          file, ctx, &ascend, &stats, chunks);
      MI_CHECK(status.code() != mi::StatusCode::kInternal);
      MI_CHECK(status.code() == mi::StatusCode::kOk ||
               status.code() == mi::StatusCode::kMalformedInput);
      if (!status.ok()) {
        ok = false;
        break;
      }
      tasks += stats.tasks;
    }
    if (!ok) continue;
    MI_CHECK(tasks == trace.task_count());
    for (size_t i = 0; i < trace.task_count(); ++i) {
      mi::TaskId t(static_cast<uint32_t>(i));
      MI_CHECK(trace.task_duration_ns(t) >= 0);
      MI_CHECK(trace.task_run(t) < trace.runs().size());
      MI_CHECK(trace.task_track(t).value() < trace.track_count());
      MI_CHECK(trace.task_source(t) == source);
      mi::TaskId launch = trace.task_launch(t);
      MI_CHECK(!launch.valid() || launch.value() < trace.task_count());
    }
  }
  return 0;
}
