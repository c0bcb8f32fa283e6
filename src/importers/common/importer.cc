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

namespace {

// True when `text` is only blank lines and lines whose first non-blank
// characters are "//" (the last one possibly cut short).
bool OnlySlashCommentLines(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t i = text.find_first_not_of(" \t\r\n", pos);
    if (i == std::string_view::npos) return true;
    if (text.substr(i, 2) != "//" &&
        !(i + 1 == text.size() && text[i] == '/')) {
      return false;
    }
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) return true;
    pos = end + 1;
  }
  return true;
}

}  // namespace

StatusOr<std::string> ReadSniffHead(const std::string& path) {
  MI_ASSIGN_OR_RETURN(std::string head,
                      io::ReadDecompressedHead(path, kSniffLookahead));
  if (head.size() < kSniffLookahead || !OnlySlashCommentLines(head)) {
    return head;
  }
  // Stream past the comment block (bounded memory: one chunk at a time).
  MI_ASSIGN_OR_RETURN(auto reader, io::ChunkReader::Open(path, 1 << 16));
  std::string out;
  bool line_start = true;   // at the start of a line, or only blanks so far
  bool in_comment = false;  // inside a "//" line
  bool slash = false;       // one '/' seen at a line's start
  while (out.size() < kSniffLookahead) {
    MI_ASSIGN_OR_RETURN(std::string_view chunk, reader->Next());
    if (chunk.empty()) break;
    size_t i = 0;
    if (out.empty()) {
      for (; i < chunk.size(); ++i) {
        char c = chunk[i];
        if (in_comment) {
          if (c == '\n') in_comment = false, line_start = true;
        } else if (slash) {
          if (c != '/') break;  // a lone '/' starts the content
          slash = false;
          in_comment = true;
        } else if (c == '/' && line_start) {
          slash = true;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
          line_start = true;
        } else {
          break;
        }
      }
      if (i == chunk.size()) continue;
      if (slash) out.push_back('/');
    }
    out.append(chunk.substr(i, kSniffLookahead - out.size()));
  }
  return out;
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
