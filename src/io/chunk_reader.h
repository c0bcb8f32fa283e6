#pragma once

// Reads a file as a sequence of chunks, inflating gzip transparently (PyTorch
// writes `.pt.trace.json.gz`). Importers see the decompressed bytes only, and
// multi-GB traces never need to sit in memory whole.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"

namespace mi::io {

class ChunkReader {
 public:
  static constexpr size_t kDefaultChunkSize = 8 << 20;

  static StatusOr<std::unique_ptr<ChunkReader>> Open(
      const std::string& path, size_t chunk_size = kDefaultChunkSize);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Returns the next chunk of decompressed data, or an empty view at end of
  // file. The view is valid until the next call.
  StatusOr<std::string_view> Next();

  bool is_gzip() const { return is_gzip_; }
  // Bytes of the file (compressed, for gzip) consumed so far / in total:
  // for progress reporting.
  uint64_t file_bytes_read() const { return file_bytes_read_; }
  uint64_t file_size() const { return file_size_; }
  // Decompressed bytes produced so far (what an error offset refers to).
  uint64_t bytes_produced() const { return bytes_produced_; }

 private:
  ChunkReader() = default;
  StatusOr<size_t> ReadRaw(char* dst, size_t n);

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
};

// Reads up to `max_bytes` of decompressed data from the start of a file.
StatusOr<std::string> ReadDecompressedHead(const std::string& path,
                                           size_t max_bytes);

// Reads and decompresses a whole (small) file into memory.
StatusOr<std::string> ReadDecompressedFile(const std::string& path);

}  // namespace mi::io
