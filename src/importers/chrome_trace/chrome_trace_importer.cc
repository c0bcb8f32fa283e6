#include "importers/chrome_trace/chrome_trace_importer.h"
namespace mi::importers {
std::unique_ptr<Importer> CreateChromeTraceImporter() { return nullptr; }
}  // namespace mi::importers
