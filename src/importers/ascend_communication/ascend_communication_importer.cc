#include "importers/ascend_communication/ascend_communication_importer.h"

#include <filesystem>
#include <optional>

#include "base/memory_budget.h"
#include "base/strings.h"

namespace mi::importers {
namespace {

namespace fs = std::filesystem;

std::string_view BaseName(std::string_view path) {
  return FileNameOf(StripGzSuffix(path));
}

// The first non-blank byte of a head.
char FirstByte(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  head = TrimLeft(head, kJsonWhitespace);
  return head.empty() ? '\0' : head.front();
}

// The text is read whole (these files are small: a few KB per rank, MB for
// thousands of ops), charged to the budget before it is parsed; what the
// tables built is charged with the trace.
Status ImportWhole(ImportContext& ctx,
                   Status (*from_buffer)(std::string_view, ImportContext&)) {
  MemoryCharge text_charge(ctx.budget);
  MI_ASSIGN_OR_RETURN(std::string text, ReadTextToParse(ctx, &text_charge));
  MI_RETURN_IF_ERROR(from_buffer(text, ctx));
  return ChargeBuilt(ctx, ctx.path);
}

class AscendCommunicationImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor d{
        "ascend_communication",
        {".json"},
        12,
        ContentKind::kTrace,
        "HCCL communication tables (torch_npu communication.json, "
        "communication_matrix.json, profiler_metadata.json; msprof-analyze "
        "cluster_communication.json)"};
    return d;
  }

  void ClaimRunFiles(RunFiles& files) const override {
    ascend_communication::ClaimClusterAnalysisOutput(files);
  }

  // By name with a JSON object head, or by what only these files write.
  // Above chrome_trace (95 at most) and ascend_timeline (97).
  int Sniff(std::string_view head, std::string_view path) const override {
    if (FirstByte(head) != '{') return 0;
    std::string_view name = BaseName(path);
    if (name == "communication.json" || name == "communication_matrix.json" ||
        name == "cluster_communication.json" ||
        name == "profiler_metadata.json") {
      return 98;
    }
    if (Contains(head, "\"distributed_args\"") ||
        Contains(head, "\"parallel_group_info\"")) {
      return 96;
    }
    if (Contains(head, "\"traceEvents\"")) return 0;
    if (Contains(head, "\"Communication Time Info\"") ||
        (Contains(head, "\"Transport Type\"") &&
         Contains(head, "\"Transit Size(MB)\""))) {
      return 98;
    }
    return 0;
  }

  Status Import(ImportContext& ctx) const override {
    return ImportWhole(ctx, &ImportAscendCommunicationFromBuffer);
  }
};

class AscendStepTraceImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor d{
        "ascend_step_trace",
        {".csv"},
        6,
        ContentKind::kTrace,
        "a step time split (torch_npu step_trace_time.csv, msprof-analyze "
        "cluster_step_trace_time.csv)"};
    return d;
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    std::string_view first = head.substr(0, head.find('\n'));
    if (first.starts_with("\xEF\xBB\xBF")) first.remove_prefix(3);
    if (Contains(first, "Step,") && Contains(first, "Computing,") &&
        Contains(first, "Communication(Not Overlapped)")) {
      return 92;
    }
    std::string_view name = BaseName(path);
    return name == "step_trace_time.csv" ||
                   name == "cluster_step_trace_time.csv"
               ? 40
               : 0;
  }

  Status Import(ImportContext& ctx) const override {
    return ImportWhole(ctx, &ImportAscendStepTraceFromBuffer);
  }
};

}  // namespace

namespace ascend_communication {

void ClaimClusterAnalysisOutput(RunFiles& files) {
  const std::vector<RunFiles::File>& list = files.files();
  for (size_t i = 0; i < list.size(); ++i) {
    if (files.claimed(i)) continue;
    fs::path path(list[i].path);
    const std::string folder = path.parent_path().filename().string();
    if (!std::string_view(folder).ends_with("cluster_analysis_output")) {
      continue;
    }
    const std::string name = path.filename().string();
    const std::string_view base = BaseName(name);
    if (base == "cluster_step_trace_time.csv" ||
        base == "cluster_communication.json") {
      std::string key = path.parent_path().lexically_normal().string();
      std::optional<size_t> source = files.FindSource(key);
      if (!source) source = files.AddSource({key, -1});
      files.Take(i, *source, 1);
    } else if (base == "cluster_communication_matrix.json" ||
               base == "communication_group.json") {
      // (cluster_analysis.db is the SQLite importer's to claim.)
      files.LeaveOut(i,
                     "msprof-analyze output not read (of its JSON and CSV "
                     "only cluster_step_trace_time.csv and "
                     "cluster_communication.json are)");
    }
  }
}

}  // namespace ascend_communication

std::unique_ptr<Importer> CreateAscendCommunicationImporter() {
  return std::make_unique<AscendCommunicationImporter>();
}

std::unique_ptr<Importer> CreateAscendStepTraceImporter() {
  return std::make_unique<AscendStepTraceImporter>();
}

}  // namespace mi::importers
