#pragma once

// The importer contract (one folder per format behind this interface):
//  - a descriptor (name, extensions, priority, what the format is in words),
//  - ClaimRunFiles(): what the format knows about its tool's output folders
//    (which files form one source, their load order, what to leave out),
//  - Sniff(): pure and cheap, looks at the first kSniffLookahead bytes
//    (already decompressed) and the path,
//  - Import(): by default streams the file in chunks through a Reader
//    (Parse(chunk) ... NotifyEndOfFile()), so multi-GB traces never sit in
//    memory whole; formats that need random access (ONNX protobuf) override
//    Import() and memory-map the file instead.
// Registration is an explicit list in builtin_importers.cc.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/memory_budget.h"
#include "diag/diagnostics.h"
#include "model/model.h"
#include "model_inspector/status.h"
#include "trace/trace.h"
#include "training/record.h"

namespace mi::importers {

class RunFiles;

inline constexpr size_t kSniffLookahead = 4096;

// What the caller knows about the role of a graph file.
enum class LevelHint : uint8_t { kAuto, kFramework, kCompiled };

enum class ContentKind : uint8_t { kGraph, kTrace };

struct ImportContext {
  std::string path;  // as given by the user; used in every message
  Model* model = nullptr;
  Trace* trace = nullptr;
  // Where a training snapshot's steps, layers and metrics go (the
  // training_snapshot importer); null when the caller keeps none.
  training::TrainingRecord* training = nullptr;
  DiagnosticSink* diagnostics = nullptr;
  LevelHint level_hint = LevelHint::kAuto;
  // The source (trace/trace.h SourceInfo) a trace file's tracks belong to:
  // the session decides it (one per file, one per profiler output folder);
  // Invalid means "this file alone" (tests, tools), see EnsureSource.
  SourceId source;
  // Called with (bytes done, bytes total) during long reads.
  std::function<void(uint64_t, uint64_t)> progress;

  // Filled by the importer: the root graphs it added.
  std::vector<GraphId> graphs_added;

  // The memory budget the read works within (null: the process's). The
  // model and trace being built are charged to `held` (the session's, so the
  // charge lasts as long as they do; null: a charge of this context's own)
  // by ChargeBuilt(): their MemoryUsage() and the reader's own state.
  MemoryBudget* budget = nullptr;
  MemoryCharge* held = nullptr;
  std::unique_ptr<MemoryCharge> own_held;  // when `held` is null
  // `held`, else `own_held` (made on first use).
  MemoryCharge& held_charge();
};

class Reader {
 public:
  virtual ~Reader() = default;
  virtual Status Parse(std::string_view chunk) = 0;
  virtual Status NotifyEndOfFile() = 0;
  // Bytes the reader holds itself (events waiting for their end, pending
  // rows), charged with the model and trace.
  virtual size_t MemoryUsage() const { return 0; }
  // True for a reader that builds on a thread of its own: it charges what
  // it built itself, from that thread, and returns a charge's error from a
  // later Parse() or NotifyEndOfFile(); Import() then charges only before
  // the first chunk and after the end (the model and trace must not be
  // read while that thread writes them).
  virtual bool ChargesWhatItBuilds() const { return false; }
};

struct ImporterDescriptor {
  std::string_view name;  // "onnx", "chrome_trace", ...
  std::vector<std::string_view> extensions;
  int priority = 0;  // breaks sniff-score ties
  ContentKind content = ContentKind::kTrace;
  // What the format is, for people: "an ONNX model (binary)". The "not a
  // recognised format" error lists every registered importer's.
  std::string_view description;
};

class Importer {
 public:
  virtual ~Importer() = default;
  virtual const ImporterDescriptor& descriptor() const = 0;
  // Run directories and named files, before anything is read: takes the
  // files of the folders this format's tool writes into their sources (with
  // their load order) and leaves out what it knows is a copy, raw data or
  // configuration (importers/common/run_files.h). Claims by path only; a
  // claimed file is still read by whichever importer sniffs it best.
  // Default: claims nothing.
  virtual void ClaimRunFiles(RunFiles& files) const;
  // 0: not this format; 100: certain. Must not allocate much or fail.
  virtual int Sniff(std::string_view head, std::string_view path) const = 0;
  // Streams ctx.path through CreateReader() unless overridden.
  virtual Status Import(ImportContext& ctx) const;

 protected:
  virtual std::unique_ptr<Reader> CreateReader(ImportContext& ctx) const;
};

// The source a trace importer adds this file's tracks to: ctx.source, or,
// when the caller named none, the source keyed by ctx.path ("<buffer>" when
// empty), which is then stored in ctx.source. Records ctx.path among the
// source's files.
SourceId EnsureSource(ImportContext& ctx);

// Charges what the model and trace being built use now (Model, Trace and
// their strings' MemoryUsage(), plus `extra`: a reader's own state) to
// ctx.held_charge(); MemoryLimitError naming `place` ("file@byte N",
// "file:line") and the limit when that would pass it. The streaming readers
// are charged every kChargeInterval bytes of input, so the limit is passed
// by at most what that much input builds.
Status ChargeBuilt(ImportContext& ctx, std::string_view place,
                   size_t extra = 0);
// The same at decompressed byte `offset` of ctx.path ("file@byte N").
Status ChargeBuiltAt(ImportContext& ctx, uint64_t offset, size_t extra);
inline constexpr size_t kChargeInterval = size_t{1} << 20;

// The memory a whole text parsed into a protobuf message (ONNX text, GE
// dumps) holds besides the text itself, estimated for the budget before the
// parse: twice the text (strings copied, repeated fields' slack) plus 128
// bytes per '{' or '(' (a message object each) and 16 per line or ','
// (a field each). Ignores what a comment or string holds, so it errs high.
uint64_t EstimateParsedText(std::string_view text);

// Reads a file whole (gzip inflated) to parse it as text: the text is
// charged to `charge` as it is read, then EstimateParsedText() on top, so
// the limit stops a bomb before the parse. The caller keeps `charge` for as
// long as the text and its parse live.
StatusOr<std::string> ReadTextToParse(const ImportContext& ctx,
                                      MemoryCharge* charge);

// Path without a trailing ".gz".
std::string_view StripGzSuffix(std::string_view path);

// What Sniff() sees of a file: its first kSniffLookahead decompressed bytes.
// When those are all "//" comment lines (onnx-mlir's lit tests open with RUN
// lines and notes, however many), the comment block is passed over, however
// long, and the head is the kSniffLookahead bytes after it; a file with
// anything else in its first kSniffLookahead bytes gets exactly those.
StatusOr<std::string> ReadSniffHead(const std::string& path);

}  // namespace mi::importers
