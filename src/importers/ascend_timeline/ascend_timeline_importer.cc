#include "importers/ascend_timeline/ascend_timeline_importer.h"

#include <memory>

#include "base/strings.h"
#include "importers/ascend_timeline/ascend_output_folder.h"
#include "importers/ascend_timeline/ascend_timeline_pass.h"
#include "importers/common/trace_event/json_trace_reader.h"

namespace mi::importers {
namespace {

using ascend_timeline::AscendTimelinePass;

trace_event::ExtensionFactory PassFactory(AscendTimelineStats* stats) {
  return [stats](trace_event::TraceEventBuilder& builder) {
    return std::make_unique<AscendTimelinePass>(builder, stats);
  };
}

// The per-file reader: the shared trace-event reader plus the pass, which
// owns the file's stats.
class AscendTimelineReader : public Reader {
 public:
  AscendTimelineReader(ImportContext& ctx, uint64_t expected_bytes)
      : reader_(trace_event::CreateJsonTraceReader(ctx, nullptr, expected_bytes,
                                                   PassFactory(&stats_))) {}
  Status Parse(std::string_view chunk) override {
    return reader_->Parse(chunk);
  }
  Status NotifyEndOfFile() override { return reader_->NotifyEndOfFile(); }

 private:
  AscendTimelineStats stats_;
  std::unique_ptr<Reader> reader_;
};

class AscendTimelineImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor = new ImporterDescriptor{
        "ascend_timeline",
        {".json"},
        /*priority=*/11,
        ContentKind::kTrace,
        "a CANN timeline (msprof_*.json, torch_npu trace_view.json)"};
    return *kDescriptor;
  }

  void ClaimRunFiles(RunFiles& files) const override {
    ascend_timeline::ClaimOutputFolders(files);
  }

  // A trace-event JSON head (trace_event::SniffTraceEventJson) that is a
  // CANN timeline: named as msprof and torch_npu name them, or showing
  // what only they write in the first 4 KiB: msprof process names and
  // args, or PyTorch profiler events with ts as decimal strings (torch_npu
  // writes "ts": "1736405443863674.400"; Kineto writes numbers). A
  // trace_view.json starts with its Python events and names its Ascend
  // processes about 1 MB in, so for a renamed one the string ts decides.
  // Scores above chrome_trace's (95 at most).
  int Sniff(std::string_view head, std::string_view path) const override {
    if (trace_event::SniffTraceEventJson(head, path) < 20) return 0;
    if (ascend_timeline::IsTimelineFileName(FileNameOf(path))) return 97;
    for (std::string_view mark :
         {"\"Ascend Hardware\"", "\"Task Type\"", "\"connection_id\"",
          "\"Node@launch\"", "\"AscendCL@"}) {
      if (head.find(mark) != std::string_view::npos) return 97;
    }
    const bool string_ts = head.find("\"ts\": \"") != std::string_view::npos ||
                           head.find("\"ts\":\"") != std::string_view::npos;
    if (!string_ts) return 0;
    for (std::string_view kineto :
         {"\"cpu_op\"", "\"python_function\"", "\"user_annotation\""}) {
      if (head.find(kineto) != std::string_view::npos) return 96;
    }
    return 0;
  }

 protected:
  std::unique_ptr<Reader> CreateReader(ImportContext& ctx) const override {
    return std::make_unique<AscendTimelineReader>(
        ctx, trace_event::ExpectedTraceBytes(ctx.path));
  }
};

}  // namespace

std::unique_ptr<Importer> CreateAscendTimelineImporter() {
  return std::make_unique<AscendTimelineImporter>();
}

Status ImportAscendTimelineFromBuffer(std::string_view data, ImportContext& ctx,
                                      AscendTimelineStats* ascend_stats,
                                      ChromeTraceStats* stats,
                                      size_t chunk_size) {
  AscendTimelineStats own;
  if (ascend_stats == nullptr) ascend_stats = &own;
  *ascend_stats = AscendTimelineStats();
  return trace_event::ImportJsonTraceFromBuffer(data, ctx, stats, chunk_size,
                                                PassFactory(ascend_stats));
}

}  // namespace mi::importers
