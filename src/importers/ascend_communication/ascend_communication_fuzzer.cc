// Fuzzes the HCCL communication JSON reader (communication.json,
// communication_matrix.json, cluster_communication.json,
// profiler_metadata.json) with the entry point the importer uses. An input
// holding a line `--file--` is read as two files of one source (metadata
// or a table first, then the file it joins onto).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "importers/ascend_communication/ascend_communication_importer.h"
#include "importers/common/trace_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  mi::StringPool strings;
  mi::Trace trace(&strings);
  mi::DiagnosticSink diagnostics;
  size_t split = input.find("\n--file--\n");
  std::string_view parts[2] = {input, {}};
  if (split != std::string_view::npos) {
    parts[0] = input.substr(0, split);
    parts[1] = input.substr(split + 10);
  }
  mi::SourceId source;
  for (std::string_view part : parts) {
    if (part.data() == nullptr) break;
    mi::importers::ImportContext ctx;
    ctx.path = "fuzz/communication.json";
    ctx.trace = &trace;
    ctx.diagnostics = &diagnostics;
    ctx.source = source;
    mi::Status status =
        mi::importers::ImportAscendCommunicationFromBuffer(part, ctx);
    if (status.code() == mi::StatusCode::kInternal) std::abort();
    source = ctx.source;
  }
  return 0;
}
