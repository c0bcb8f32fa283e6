#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>

namespace mi {

namespace fs = std::filesystem;

namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// 16 hex digits from the kernel's random source: temp names nobody can
// predict and plant a file at in advance.
std::string RandomSuffix() {
  uint64_t bits = 0;
  if (::getrandom(&bits, sizeof(bits), 0) != sizeof(bits)) {
    std::random_device device;
    bits = (uint64_t{device()} << 32) ^ device();
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx",
                static_cast<unsigned long long>(bits));
  return out;
}

std::string PidText() { return std::to_string(::getpid()); }

// The directory `path` is in ("." for a bare name).
fs::path DirectoryOf(const fs::path& path) {
  fs::path dir = path.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

Status FsyncDirectory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return IoError(dir.string() + ": cannot open the directory to sync it: " +
                   ErrnoText(errno));
  }
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems cannot sync a directory at all (EINVAL): nothing more
  // can be done there.
  if (rc != 0 && err != EINVAL) {
    return IoError(dir.string() +
                   ": cannot sync the directory: " + ErrnoText(err));
  }
  return Status::Ok();
}

Status WriteAll(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(what + ": write failed: " + ErrnoText(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// The umask, read without changing it (umask() would, for every thread).
mode_t CurrentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
  }
  return 022;
}

// The pid in "<prefix><pid>-<suffix>", or 0 when `name` is not of that form.
pid_t PidAfter(std::string_view name, std::string_view prefix, char separator) {
  if (!name.starts_with(prefix)) return 0;
  name.remove_prefix(prefix.size());
  pid_t pid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || pid <= 0) return 0;
  if (separator == '\0') return end == name.data() + name.size() ? pid : 0;
  return end != name.data() + name.size() && *end == separator ? pid : 0;
}

bool ProcessGone(pid_t pid) {
  return pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Removes, in `dir`, the temp files of writers that are gone: ours
// (".<name>.tmp-<pid>-<random>") and those of earlier versions
// ("<name>.tmp.<pid>"), for the given names only.
void RemoveStaleTempFiles(const fs::path& dir,
                          const std::vector<std::string>& names) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string entry = it->path().filename().string();
    for (const std::string& name : names) {
      pid_t pid = PidAfter(entry, "." + name + ".tmp-", '-');
      if (pid == 0) pid = PidAfter(entry, name + ".tmp.", '\0');
      if (pid != 0 && ProcessGone(pid)) {
        std::error_code ignored;
        fs::remove(it->path(), ignored);  // a symlink is removed, not followed
        break;
      }
    }
  }
}

// Removes, in `parent`, the private directories (".<base>.new-<pid>-...")
// of writers of `parent/base` that are gone.
void RemoveStaleDirectories(const fs::path& parent, const std::string& base) {
  std::error_code ec;
  std::string prefix = "." + base + ".new-";
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    pid_t pid = PidAfter(it->path().filename().string(), prefix, '-');
    if (pid != 0 && ProcessGone(pid)) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);  // symlinks are not followed
    }
  }
}

// Creates a fresh temp file beside `target`; returns its descriptor.
StatusOr<int> CreateTempBeside(const fs::path& target, std::string* temp) {
  fs::path dir = DirectoryOf(target);
  std::string stem =
      "." + target.filename().string() + ".tmp-" + PidText() + "-";
  for (int attempt = 0;; ++attempt) {
    *temp = (dir / (stem + RandomSuffix())).string();
    int fd = ::open(temp->c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST || attempt == 8) {
      return IoError(target.string() +
                     ": cannot create a temp file beside it (" + *temp +
                     "): " + ErrnoText(errno));
    }
  }
}

// Writes `data` to a new file at `path` (exclusively) and fsyncs it.
Status WriteNewFile(const std::string& path, std::string_view data,
                    const std::string& what) {
  StatusOr<int> fd = atomic_file_internal::CreateExclusive(path);
  if (!fd.ok()) return fd.status();
  Status s = WriteAll(*fd, data, what);
  if (s.ok() && ::fsync(*fd) != 0) {
    s = IoError(what + ": cannot sync to disk: " + ErrnoText(errno));
  }
  if (::close(*fd) != 0 && s.ok()) {
    s = IoError(what + ": write failed: " + ErrnoText(errno));
  }
  if (!s.ok()) ::unlink(path.c_str());
  return s;
}

// Writes a temp file beside `target` holding `data`, fsynced; returns its
// path.
StatusOr<std::string> WriteTempBeside(const fs::path& target,
                                      std::string_view data) {
  std::string temp;
  MI_ASSIGN_OR_RETURN(int fd, CreateTempBeside(target, &temp));
  Status s = WriteAll(fd, data, target.string());
  if (s.ok() && ::fsync(fd) != 0) {
    s = IoError(target.string() + ": cannot sync to disk: " + ErrnoText(errno));
  }
  if (::close(fd) != 0 && s.ok()) {
    s = IoError(target.string() + ": write failed: " + ErrnoText(errno));
  }
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  return temp;
}

void RemoveFiles(const std::vector<std::string>& paths, size_t from = 0) {
  for (size_t i = from; i < paths.size(); ++i) ::unlink(paths[i].c_str());
}

// Moves the written files (`from`, each complete and fsynced) over their
// names in `dir`, with kIncompleteMarker present in `dir` while the set
// there mixes generations. Removes what it could not move.
Status MoveIntoPlace(const fs::path& dir, const std::vector<std::string>& from,
                     const std::vector<FileContent>& files) {
  fs::path marker = dir / std::string(kIncompleteMarker);
  std::string note =
      "model-inspector was replacing these files here and stopped before it "
      "had replaced them all; they may come from two different runs:\n";
  for (const FileContent& f : files) note += "  " + f.first + "\n";
  note += "Write them again; this file is removed once all are replaced.\n";
  Status s = WriteFileAtomically(marker.string(), note);
  if (!s.ok()) {
    RemoveFiles(from);
    return s;
  }
  for (size_t i = 0; i < from.size(); ++i) {
    fs::path to = dir / files[i].first;
    if (::rename(from[i].c_str(), to.c_str()) != 0) {
      int err = errno;
      RemoveFiles(from, i);
      return IoError(to.string() + ": cannot rename into place: " +
                     ErrnoText(err) + "; " + std::to_string(i) + " of " +
                     std::to_string(from.size()) + " files in " + dir.string() +
                     " were replaced, so the set there is incomplete (" +
                     marker.string() + " says so)");
    }
  }
  MI_RETURN_IF_ERROR(FsyncDirectory(dir));
  if (::unlink(marker.c_str()) != 0) {
    return IoError(marker.string() + ": cannot remove: " + ErrnoText(errno));
  }
  return FsyncDirectory(dir);
}

// True when `dir` holds nothing but regular files named in `names`.
bool HoldsOnly(const fs::path& dir, const std::set<std::string>& names) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; it != end; it.increment(ec)) {
    if (ec) return false;
    if (!it->is_regular_file(ec) || it->is_symlink(ec) ||
        !names.contains(it->path().filename().string())) {
      return false;
    }
  }
  return !ec;
}

}  // namespace

namespace atomic_file_internal {

StatusOr<int> CreateExclusive(const std::string& path) {
  int fd = ::open(path.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    return IoError(path + ": cannot create: " + ErrnoText(errno));
  }
  return fd;
}

}  // namespace atomic_file_internal

StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    const std::string& path) {
  std::unique_ptr<AtomicFileWriter> w(new AtomicFileWriter());
  w->path_ = path;
  fs::path target(path);
  RemoveStaleTempFiles(DirectoryOf(target), {target.filename().string()});
  MI_ASSIGN_OR_RETURN(int fd, CreateTempBeside(target, &w->temp_path_));
  w->file_ = ::fdopen(fd, "wb");
  if (w->file_ == nullptr) {
    int err = errno;
    ::close(fd);
    ::unlink(w->temp_path_.c_str());
    return IoError(path + ": cannot create: " + ErrnoText(err));
  }
  static constexpr size_t kBuffer = 1 << 20;
  std::setvbuf(w->file_, nullptr, _IOFBF, kBuffer);
  return w;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    ::unlink(temp_path_.c_str());
  }
}

void AtomicFileWriter::Write(std::string_view data) {
  if (failed_ || data.empty()) return;
  if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
    failed_ = true;
    write_errno_ = errno;
  }
}

Status AtomicFileWriter::Commit() {
  int err = write_errno_;
  bool ok = !failed_;
  if (ok && std::fflush(file_) != 0) {
    ok = false;
    err = errno;
  }
  if (ok && ::fsync(::fileno(file_)) != 0) {
    ok = false;
    err = errno;
  }
  if (std::fclose(file_) != 0 && ok) {
    ok = false;
    err = errno;
  }
  file_ = nullptr;
  if (!ok) {
    ::unlink(temp_path_.c_str());
    return IoError(path_ + ": write failed: " + ErrnoText(err));
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    err = errno;
    ::unlink(temp_path_.c_str());
    return IoError(path_ + ": cannot rename into place: " + ErrnoText(err));
  }
  return FsyncDirectory(DirectoryOf(fs::path(path_)));
}

Status WriteFileAtomically(const std::string& path, std::string_view data) {
  MI_ASSIGN_OR_RETURN(auto writer, AtomicFileWriter::Create(path));
  writer->Write(data);
  return writer->Commit();
}

Status WriteFilesAtomically(const std::vector<FileContent>& files) {
  std::vector<std::string> temps;
  for (const FileContent& f : files) {
    fs::path target(f.first);
    RemoveStaleTempFiles(DirectoryOf(target), {target.filename().string()});
    StatusOr<std::string> temp = WriteTempBeside(target, f.second);
    if (!temp.ok()) {
      RemoveFiles(temps);
      return temp.status();
    }
    temps.push_back(*std::move(temp));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      int err = errno;
      RemoveFiles(temps, i);
      std::string done;
      for (size_t j = 0; j < i; ++j) done += " " + files[j].first;
      return IoError(files[i].first +
                     ": cannot rename into place: " + ErrnoText(err) +
                     (i == 0 ? std::string("; nothing was replaced")
                             : "; already replaced:" + done));
    }
  }
  std::set<std::string> dirs;
  for (const FileContent& f : files) {
    dirs.insert(DirectoryOf(fs::path(f.first)).string());
  }
  for (const std::string& dir : dirs) MI_RETURN_IF_ERROR(FsyncDirectory(dir));
  return Status::Ok();
}

Status WriteDirectoryAtomically(const std::string& dir_arg,
                                const std::vector<FileContent>& files) {
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(dir_arg), ec).lexically_normal();
  if (ec) return IoError(dir_arg + ": " + ec.message());
  if (dir.filename().empty()) dir = dir.parent_path();
  // A symlink named as the output stands for the directory it points to:
  // that directory is replaced, and the link stays.
  if (fs::is_symlink(fs::symlink_status(dir, ec))) {
    fs::path resolved = fs::canonical(dir, ec);
    if (ec) return IoError(dir.string() + ": " + ec.message());
    dir = resolved;
  }
  fs::path parent = dir.parent_path();
  std::string base = dir.filename().string();
  fs::create_directories(parent, ec);
  if (ec) {
    return IoError(parent.string() +
                   ": cannot create directory: " + ec.message());
  }
  RemoveStaleDirectories(parent, base);

  std::vector<std::string> names;
  std::set<std::string> own = {std::string(kIncompleteMarker)};
  for (const FileContent& f : files) {
    names.push_back(f.first);
    own.insert(f.first);
  }
  names.push_back(std::string(kIncompleteMarker));

  struct stat st;
  bool exists = ::lstat(dir.c_str(), &st) == 0;
  if (exists && !S_ISDIR(st.st_mode)) {
    return IoError(dir.string() + ": exists and is not a directory");
  }
  if (exists) RemoveStaleTempFiles(dir, names);

  bool in_place = exists && (!HoldsOnly(dir, own) ||
                             fs::equivalent(dir, fs::current_path(ec), ec));
  if (in_place) {
    // The directory holds other things too, or is the working directory
    // (which a swap would leave deleted under the user's shell): replace
    // the files in place.
    std::vector<std::string> temps;
    for (const FileContent& f : files) {
      StatusOr<std::string> temp = WriteTempBeside(dir / f.first, f.second);
      if (!temp.ok()) {
        RemoveFiles(temps);
        return temp.status();
      }
      temps.push_back(*std::move(temp));
    }
    return MoveIntoPlace(dir, temps, files);
  }

  // A private directory beside `dir`, on the same file system.
  std::string fresh =
      (parent / ("." + base + ".new-" + PidText() + "-XXXXXX")).string();
  if (::mkdtemp(fresh.data()) == nullptr) {
    return IoError(
        dir.string() +
        ": cannot create a temp directory beside it: " + ErrnoText(errno));
  }
  auto discard = [&fresh]() {
    std::error_code ignored;
    fs::remove_all(fresh, ignored);
  };
  std::vector<std::string> written;
  for (const FileContent& f : files) {
    std::string path = (fs::path(fresh) / f.first).string();
    Status s = WriteNewFile(path, f.second, (dir / f.first).string());
    if (!s.ok()) {
      discard();
      return s;
    }
    written.push_back(path);
  }
  mode_t mode = exists ? (st.st_mode & 07777) : (0777 & ~CurrentUmask());
  Status synced = FsyncDirectory(fresh);
  if (synced.ok() && ::chmod(fresh.c_str(), mode) != 0) {
    synced = IoError(fresh + ": cannot set permissions: " + ErrnoText(errno));
  }
  if (!synced.ok()) {
    discard();
    return synced;
  }
  int rc = exists ? ::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, dir.c_str(),
                                RENAME_EXCHANGE)
                  : ::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, dir.c_str(),
                                RENAME_NOREPLACE);
  if (rc != 0 && !exists && errno == EEXIST) {
    // Created meanwhile: exchange with it.
    rc = ::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, dir.c_str(),
                     RENAME_EXCHANGE);
  }
  if (rc != 0) {
    // The directory cannot be swapped (a file system without
    // RENAME_EXCHANGE, a mount point): move the files instead.
    if (!exists) fs::create_directories(dir, ec);
    Status moved = MoveIntoPlace(dir, written, files);
    discard();
    return moved;
  }
  Status s = FsyncDirectory(parent);
  // `fresh` now names the previous directory (or nothing).
  discard();
  return s;
}

}  // namespace mi
