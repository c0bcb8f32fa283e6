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

MemoryCharge& ImportContext::held_charge() {
  if (held != nullptr) return *held;
  if (own_held == nullptr) own_held = std::make_unique<MemoryCharge>(budget);
  return *own_held;
}

namespace {

// `place()` is called only for the error: the charge that fits, every
// kChargeInterval bytes of input, builds no string.
template <typename Place>
Status ChargeBuiltImpl(ImportContext& ctx, size_t extra, const Place& place) {
  size_t bytes = extra;
  if (ctx.model != nullptr) bytes += ctx.model->MemoryUsage();
  if (ctx.trace != nullptr) {
    bytes += ctx.trace->MemoryUsage() + ctx.trace->strings().MemoryUsage();
  } else if (ctx.model != nullptr) {
    bytes += ctx.model->strings().MemoryUsage();
  }
  MemoryCharge& charge = ctx.held_charge();
  if (charge.Set(bytes)) return Status::Ok();
  std::string what =
      "the model and trace read so far (" + FormatMemorySize(bytes) + ")";
  if (ctx.trace != nullptr && ctx.trace->task_count() > 0) {
    what = "the trace read so far (" + std::to_string(ctx.trace->task_count()) +
           " tasks, " + FormatMemorySize(bytes) + " with the model)";
  }
  return charge.LimitError(place(), what);
}

}  // namespace

Status ChargeBuilt(ImportContext& ctx, std::string_view place, size_t extra) {
  return ChargeBuiltImpl(ctx, extra, [place] { return place; });
}

Status ChargeBuiltAt(ImportContext& ctx, uint64_t offset, size_t extra) {
  return ChargeBuiltImpl(ctx, extra, [&ctx, offset] {
    return ctx.path + "@byte " + std::to_string(offset);
  });
}

uint64_t EstimateParsedText(std::string_view text) {
  uint64_t messages = 0;
  uint64_t fields = 0;
  for (char c : text) {
    messages += (c == '{') | (c == '(');
    fields += (c == '\n') | (c == ',');
  }
  return 2 * uint64_t{text.size()} + 128 * messages + 16 * fields;
}

StatusOr<std::string> ReadTextToParse(const ImportContext& ctx,
                                      MemoryCharge* charge) {
  MI_ASSIGN_OR_RETURN(std::string text,
                      io::ReadDecompressedFile(ctx.path, charge));
  uint64_t parsed = EstimateParsedText(text);
  if (!charge->Add(parsed)) {
    return charge->LimitError(
        ctx.path, "parsing its " + FormatMemorySize(text.size()) +
                      " of text (estimated at " + FormatMemorySize(parsed) +
                      " besides the text)");
  }
  return text;
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
  MI_ASSIGN_OR_RETURN(
      auto chunks,
      io::ChunkReader::OpenReadAhead(
          ctx.path, io::ChunkReader::kDefaultChunkSize, ctx.budget));
  auto charge = [&](uint64_t offset) {
    return ChargeBuiltAt(ctx, offset, reader->MemoryUsage());
  };
  MI_RETURN_IF_ERROR(charge(0));
  while (true) {
    MI_ASSIGN_OR_RETURN(std::string_view chunk, chunks->Next());
    if (chunk.empty()) break;
    // In pieces, the model and trace charged after each: the limit is
    // passed by at most what kChargeInterval bytes of input build.
    uint64_t offset = chunks->bytes_produced() - chunk.size();
    for (size_t i = 0; i < chunk.size(); i += kChargeInterval) {
      MI_RETURN_IF_ERROR(reader->Parse(chunk.substr(i, kChargeInterval)));
      if (!reader->ChargesWhatItBuilds()) {
        MI_RETURN_IF_ERROR(
            charge(offset + std::min(chunk.size(), i + kChargeInterval)));
      }
    }
    if (ctx.progress) {
      ctx.progress(chunks->file_bytes_read(), chunks->file_size());
    }
  }
  MI_RETURN_IF_ERROR(reader->NotifyEndOfFile());
  return charge(chunks->bytes_produced());
}

}  // namespace mi::importers
