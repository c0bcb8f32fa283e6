#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mi {
namespace {

Status ErrnoError(const std::string& path, const char* what) {
  int err = errno;
  if (err == ENOENT) return NotFoundError(path + ": no such file");
  return IoError(path + ": cannot " + what + ": " + std::strerror(err));
}

}  // namespace

StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(
    const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, "open");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = ErrnoError(path, "stat");
    ::close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(path + ": is a directory, expected a file");
  }
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      Status s = ErrnoError(path, "map");
      ::close(fd);
      return s;
    }
    file->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return file;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
  }
}

StatusOr<std::string> ReadFileHead(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, "open");
  std::string out(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::read(fd, out.data() + got, max_bytes - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = ErrnoError(path, "read");
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  MI_ASSIGN_OR_RETURN(auto mapped, MappedFile::Open(path));
  return std::string(mapped->view());
}

}  // namespace mi
