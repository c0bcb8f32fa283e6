#include "base/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace mi {

StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    const std::string& path) {
  std::unique_ptr<AtomicFileWriter> w(new AtomicFileWriter());
  w->path_ = path;
  w->temp_path_ = path + ".tmp." + std::to_string(::getpid());
  w->file_ = std::fopen(w->temp_path_.c_str(), "wb");
  if (w->file_ == nullptr) {
    return IoError(path + ": cannot create: " + std::strerror(errno));
  }
  static constexpr size_t kBuffer = 1 << 20;
  std::setvbuf(w->file_, nullptr, _IOFBF, kBuffer);
  return w;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(temp_path_.c_str());
  }
}

void AtomicFileWriter::Write(std::string_view data) {
  if (failed_ || data.empty()) return;
  if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
    failed_ = true;
  }
}

Status AtomicFileWriter::Commit() {
  bool ok = !failed_ && std::fflush(file_) == 0;
  int err = errno;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok) {
    std::remove(temp_path_.c_str());
    return IoError(path_ + ": write failed: " + std::strerror(err));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    err = errno;
    std::remove(temp_path_.c_str());
    return IoError(path_ + ": cannot rename into place: " + std::strerror(err));
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view data) {
  MI_ASSIGN_OR_RETURN(auto writer, AtomicFileWriter::Create(path));
  writer->Write(data);
  return writer->Commit();
}

}  // namespace mi
