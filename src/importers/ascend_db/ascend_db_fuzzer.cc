// Fuzzes the torch_npu DB importer: SQLite reads a file, not a buffer, so
// the input is written to a temporary file and imported from there, as
// the CLI would import it. Inputs holding profiler tables and analysis.db
// tables are read whole (both parts), so CommAnalyzerTime rows join the
// records COMMUNICATION_OP made. A Status error is fine; a crash, a
// sanitizer report or kInternal is a bug.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/check.h"
#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/ascend_db/ascend_db_importer.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                     "/ascend_db_fuzz_XXXXXX";
  const int fd = mkstemp(path.data());
  MI_CHECK(fd >= 0);
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    MI_CHECK(n > 0);
    written += static_cast<size_t>(n);
  }
  close(fd);

  mi::StringPool strings;
  mi::Trace trace(&strings);
  mi::DiagnosticSink diagnostics;
  mi::importers::ImportContext ctx;
  ctx.path = path;
  ctx.trace = &trace;
  ctx.diagnostics = &diagnostics;
  mi::importers::AscendDbStats stats;
  mi::Status status = mi::importers::ImportAscendDb(ctx, &stats);
  std::remove(path.c_str());
  MI_CHECK(status.code() != mi::StatusCode::kInternal);
  if (!status.ok()) return 0;
  MI_CHECK(trace.task_count() == stats.device_tasks - stats.op_rows +
                                     stats.host_api_calls +
                                     stats.communication_ops);
  for (size_t i = 0; i < trace.task_count(); ++i) {
    mi::TaskId t(static_cast<uint32_t>(i));
    MI_CHECK(trace.task_duration_ns(t) >= 0);
    MI_CHECK(trace.task_run(t) < trace.runs().size());
    MI_CHECK(trace.task_track(t).value() < trace.track_count());
    mi::TaskId launch = trace.task_launch(t);
    MI_CHECK(!launch.valid() || launch.value() < trace.task_count());
  }
  for (const mi::CollectiveRecord& c : trace.communication().collectives) {
    MI_CHECK(!c.task.valid() || c.task.value() < trace.task_count());
    MI_CHECK(c.run < static_cast<int64_t>(trace.runs().size()));
  }
  return 0;
}
