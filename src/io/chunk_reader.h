#pragma once

// Reads a file as a sequence of chunks, inflating gzip transparently (PyTorch
// writes `.pt.trace.json.gz`). Importers see the decompressed bytes only, and
// multi-GB traces never need to sit in memory whole. Decompressed bytes held
// count against the memory budget (base/memory_budget.h): a reader's buffers
// while it is open, the whole file for ReadDecompressedFile.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/memory_budget.h"
#include "model_inspector/status.h"

namespace mi::io {

class ChunkReader {
 public:
  static constexpr size_t kDefaultChunkSize = 8 << 20;

  // The buffers (chunk_size, plus 1 MiB of compressed input for gzip) are
  // charged to `budget` (null: the process's) while the reader is open.
  static StatusOr<std::unique_ptr<ChunkReader>> Open(
      const std::string& path, size_t chunk_size = kDefaultChunkSize,
      MemoryBudget* budget = nullptr);
  // The same, with the next `depth` chunks read (and inflated) on a thread
  // of its own while the caller works on the current one: a gzip trace's
  // decompression overlaps its parsing. Buffers: (depth + 1) chunks; when
  // the budget has no room for the extra ones it reads in Next() instead.
  static StatusOr<std::unique_ptr<ChunkReader>> OpenReadAhead(
      const std::string& path, size_t chunk_size = kDefaultChunkSize,
      MemoryBudget* budget = nullptr, size_t depth = 2);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Returns the next chunk of decompressed data, or an empty view at end of
  // file. The view is valid until the next call.
  StatusOr<std::string_view> Next();

  bool is_gzip() const { return is_gzip_; }
  // Bytes of the file (compressed, for gzip) consumed so far / in total:
  // for progress reporting.
  // With read-ahead: of the chunks handed out.
  uint64_t file_bytes_read() const {
    return read_ahead_ ? consumed_file_bytes_read_ : file_bytes_read_;
  }
  uint64_t file_size() const { return file_size_; }
  // Decompressed bytes produced so far (what an error offset refers to).
  uint64_t bytes_produced() const {
    return read_ahead_ ? consumed_bytes_produced_ : bytes_produced_;
  }

 private:
  struct ReadAhead;
  explicit ChunkReader(MemoryBudget* budget);
  StatusOr<size_t> ReadRaw(char* dst, size_t n);
  // The next chunk into `out` (chunk_size_ bytes of room); 0 at the end.
  StatusOr<size_t> Fill(char* out);
  Status StartReadAhead(size_t depth);
  StatusOr<std::string_view> NextReadAhead();

  std::string path_;
  FILE* file_ = nullptr;
  bool is_gzip_ = false;
  bool gzip_done_ = false;
  struct ZState;
  std::unique_ptr<ZState> z_;
  std::vector<char> in_buffer_;
  std::vector<char> out_buffer_;
  size_t chunk_size_ = kDefaultChunkSize;
  uint64_t file_bytes_read_ = 0;
  uint64_t file_size_ = 0;
  uint64_t bytes_produced_ = 0;
  std::string pending_head_;  // bytes read while sniffing the gzip magic
  MemoryCharge buffers_charge_;
  std::unique_ptr<ReadAhead> read_ahead_;  // null: reads in Next()
  uint64_t consumed_file_bytes_read_ = 0;
  uint64_t consumed_bytes_produced_ = 0;
};

// Reads up to `max_bytes` of decompressed data from the start of a file.
StatusOr<std::string> ReadDecompressedHead(const std::string& path,
                                           size_t max_bytes);

// Reads and decompresses a whole file into memory, charging the text as it
// grows: the limit stops a gzip bomb at the byte where it would pass it
// (MemoryLimitError). With `held`, the charge stays on it after the return,
// for as long as the caller keeps the text; without, it is released on
// return (the text is then the caller's to account for).
StatusOr<std::string> ReadDecompressedFile(const std::string& path,
                                           MemoryCharge* held = nullptr);

}  // namespace mi::io
