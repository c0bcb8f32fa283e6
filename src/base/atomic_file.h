#pragma once

// Writes an output file atomically: data goes to "<path>.tmp.<pid>" and is
// renamed over <path> only on Commit(), so a failure never leaves a
// half-written file behind. The destructor removes an uncommitted temp file.

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

namespace mi {

class AtomicFileWriter {
 public:
  static StatusOr<std::unique_ptr<AtomicFileWriter>> Create(
      const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void Write(std::string_view data);
  Status Commit();

 private:
  AtomicFileWriter() = default;
  std::string path_;
  std::string temp_path_;
  FILE* file_ = nullptr;
  bool failed_ = false;
};

// Convenience: writes a whole string atomically.
Status WriteFileAtomically(const std::string& path, std::string_view data);

}  // namespace mi
