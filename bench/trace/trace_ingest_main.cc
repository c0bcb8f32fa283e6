// Imports one Chrome trace file through the streaming reader (the same path
// as Importer::Import) and prints events, throughput, peak RSS and bytes per
// event, for bench/trace/bench_trace_ingest.sh.
//
//   mi_bench_trace_ingest <trace.json[.gz]>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "io/chunk_reader.h"
#include "trace/trace.h"

namespace {

// Resident set size now, from /proc/self/status (kB -> bytes).
long long CurrentRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      return std::atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

long long PeakRssBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<long long>(usage.ru_maxrss) * 1024;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <trace.json[.gz]>\n", argv[0]);
    return 2;
  }
  const long long baseline_rss = CurrentRssBytes();
  auto start = std::chrono::steady_clock::now();

  mi::StringPool strings;
  mi::Trace trace(&strings);
  mi::DiagnosticSink diagnostics;
  mi::importers::ImportContext ctx;
  ctx.path = argv[1];
  ctx.trace = &trace;
  ctx.diagnostics = &diagnostics;
  mi::importers::ChromeTraceStats stats;

  auto chunks_or = mi::io::ChunkReader::Open(ctx.path);
  if (!chunks_or.ok()) {
    std::fprintf(stderr, "%s\n", chunks_or.status().ToString().c_str());
    return mi::ExitCodeFor(chunks_or.status().code());
  }
  auto chunks = std::move(chunks_or).value();
  uint64_t expected = chunks->is_gzip() ? 0 : chunks->file_size();
  auto reader = mi::importers::CreateChromeTraceReader(ctx, &stats, expected);
  mi::Status status;
  while (status.ok()) {
    auto chunk = chunks->Next();
    if (!chunk.ok()) {
      status = chunk.status();
      break;
    }
    if (chunk->empty()) {
      status = reader->NotifyEndOfFile();
      break;
    }
    status = reader->Parse(*chunk);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return mi::ExitCodeFor(status.code());
  }
  const double megabytes = static_cast<double>(chunks->bytes_produced()) / 1e6;
  const long long peak_rss = PeakRssBytes();
  std::printf("file: %s\n", argv[1]);
  std::printf("dialect: %s\n", stats.dialect.c_str());
  std::printf("bytes: %.3f MB (decompressed)\n", megabytes);
  std::printf("events: %llu\n", static_cast<unsigned long long>(stats.events));
  std::printf("tasks: %zu\n", trace.task_count());
  std::printf("seconds: %.6f\n", seconds);
  std::printf("MB/s: %.1f\n", megabytes / seconds);
  std::printf("peak_rss_MB: %.1f\n", static_cast<double>(peak_rss) / 1e6);
  std::printf("bytes/event: %.1f\n",
              stats.events == 0 ? 0.0
                                : static_cast<double>(peak_rss - baseline_rss) /
                                      static_cast<double>(stats.events));
  std::printf("string_pool_MB: %.1f\n",
              static_cast<double>(strings.MemoryUsage()) / 1e6);
  return 0;
}
