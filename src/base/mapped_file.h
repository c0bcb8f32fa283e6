#pragma once

// A read-only memory map of a whole file. Pages are only read when touched,
// which is how a multi-GB ONNX file opens without reading its weights.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

namespace mi {

class MappedFile {
 public:
  static StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  std::string_view view() const {
    return std::string_view(reinterpret_cast<const char*>(data_), size_);
  }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  std::string path_;
};

// Reads up to `max_bytes` from the start of a file (for sniffing).
StatusOr<std::string> ReadFileHead(const std::string& path, size_t max_bytes);
// Reads a whole (small) file.
StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace mi
