#include "importers/common/importer.h"

#include <algorithm>

#include "importers/common/run_files.h"
#include "io/chunk_reader.h"

namespace mi::importers {

std::string_view StripGzSuffix(std::string_view path) {
  if (path.ends_with(".gz")) path.remove_suffix(3);
  return path;
}

SourceId EnsureSource(ImportContext& ctx) {
  Trace& trace = *ctx.trace;
  if (!ctx.source.valid() || ctx.source.value() >= trace.source_count()) {
    ctx.source = trace.FindOrAddSource(
        trace.strings().Intern(ctx.path.empty() ? "<buffer>" : ctx.path));
  }
  SourceInfo& info = trace.mutable_source(ctx.source);
  StringId file =
      trace.strings().Intern(ctx.path.empty() ? "<buffer>" : ctx.path);
  if (std::find(info.files.begin(), info.files.end(), file) ==
      info.files.end()) {
    info.files.push_back(file);
  }
  return ctx.source;
}

void Importer::ClaimRunFiles(RunFiles&) const {}

std::unique_ptr<Reader> Importer::CreateReader(ImportContext&) const {
  return nullptr;
}

Status Importer::Import(ImportContext& ctx) const {
  std::unique_ptr<Reader> reader = CreateReader(ctx);
  if (reader == nullptr) {
    return InternalError(std::string(descriptor().name) +
                         " importer has neither Import() nor a reader");
  }
  MI_ASSIGN_OR_RETURN(auto chunks, io::ChunkReader::Open(ctx.path));
  while (true) {
    MI_ASSIGN_OR_RETURN(std::string_view chunk, chunks->Next());
    if (chunk.empty()) break;
    MI_RETURN_IF_ERROR(reader->Parse(chunk));
    if (ctx.progress) {
      ctx.progress(chunks->file_bytes_read(), chunks->file_size());
    }
  }
  return reader->NotifyEndOfFile();
}

}  // namespace mi::importers
