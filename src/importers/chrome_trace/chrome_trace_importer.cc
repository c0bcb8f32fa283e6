#include "importers/chrome_trace/chrome_trace_importer.h"

#include "importers/common/trace_event/json_trace_reader.h"

namespace mi::importers {
namespace {

// Chrome trace-event JSON read by the shared trace-event reader
// (importers/common/trace_event) with the generic, ONNX Runtime and
// PyTorch/Kineto mapping and no extension.
class ChromeTraceImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor = new ImporterDescriptor{
        "chrome_trace",
        {".json", ".pt.trace.json", ".trace.json"},
        /*priority=*/10,
        ContentKind::kTrace,
        "Chrome trace-event JSON (an ONNX Runtime profile, a PyTorch "
        "profiler trace)"};
    return *kDescriptor;
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    return trace_event::SniffTraceEventJson(head, path);
  }

 protected:
  std::unique_ptr<Reader> CreateReader(ImportContext& ctx) const override {
    // Threaded: tokenizing on the caller's thread, parsing and building on
    // the reader's own (json_trace_reader.h).
    return trace_event::CreateJsonTraceReader(
        ctx, nullptr, trace_event::ExpectedTraceBytes(ctx.path), {},
        /*threaded=*/true);
  }
};

}  // namespace

std::unique_ptr<Reader> CreateChromeTraceReader(ImportContext& ctx,
                                                ChromeTraceStats* stats,
                                                uint64_t expected_bytes,
                                                bool threaded) {
  return trace_event::CreateJsonTraceReader(ctx, stats, expected_bytes, {},
                                            threaded);
}

std::unique_ptr<Importer> CreateChromeTraceImporter() {
  return std::make_unique<ChromeTraceImporter>();
}

Status ImportChromeTraceFromBuffer(std::string_view data, ImportContext& ctx,
                                   ChromeTraceStats* stats, size_t chunk_size,
                                   bool threaded) {
  return trace_event::ImportJsonTraceFromBuffer(data, ctx, stats, chunk_size,
                                                {}, threaded);
}

Status ImportChromeTraceFromBuffer(std::string_view data, ImportContext& ctx) {
  return ImportChromeTraceFromBuffer(data, ctx, nullptr);
}

}  // namespace mi::importers
