#pragma once

// Output files written so that a reader never sees a half-written file or a
// half-replaced set, whatever happens to the writer.
//
// Every temp file is created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW|
// O_CLOEXEC) under an unpredictable name beside its target
// (".<name>.tmp-<pid>-<random>"), so a file or symlink planted at the temp
// name is never written through; it is fsynced before it is renamed over its
// target (rename replaces a symlink planted at the target, it never writes
// through it), and the directory is fsynced after the rename. A failure
// removes the temp files. Temp files of a writer that was killed (SIGKILL,
// power loss) are removed by the next write to the same place once their
// process is gone.

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  // Flushes and fsyncs the temp file, renames it over the target and fsyncs
  // the directory. Without Commit() the destructor removes the temp file.
  Status Commit();

 private:
  AtomicFileWriter() = default;
  std::string path_;
  std::string temp_path_;
  FILE* file_ = nullptr;
  bool failed_ = false;
  int write_errno_ = 0;
};

// Convenience: writes a whole string atomically.
Status WriteFileAtomically(const std::string& path, std::string_view data);

// One file of a set: its path (or, for WriteDirectoryAtomically, its name in
// the directory) and its whole content.
using FileContent = std::pair<std::string, std::string_view>;

// Writes every file to its temp file first (written and fsynced), and only
// then renames them into place one after the other: a failure while writing,
// by far the long part, leaves every target as it was. Independent paths
// (possibly in different directories) cannot be swapped as one, so a crash
// between two renames can still leave some replaced.
Status WriteFilesAtomically(const std::vector<FileContent>& files);

// Replaces the set of files `files` (plain names) in directory `dir` as a
// whole, so that `dir` holds either the complete previous set or the
// complete new one:
//  - when `dir` does not exist, or holds nothing but files of this set (the
//    usual case: a directory the set was written to before), the new set is
//    written into a fresh private directory beside it
//    (".<dir>.new-<pid>-<random>", same file system), fsynced, and swapped
//    with `dir` in one renameat2(RENAME_EXCHANGE) (a plain rename when `dir`
//    does not exist yet); the previous directory is then removed;
//  - when `dir` also holds other things (the user's own files: it cannot be
//    swapped away), every file is written and fsynced as a temp file in
//    `dir`, then kIncompleteMarker is created in `dir` before the first
//    rename and removed after the last one: a writer killed between them
//    leaves the marker, naming the set as mixed. The same happens where the
//    file system cannot exchange directories.
// Leftovers of a killed earlier writer beside or inside `dir` (their process
// is gone) are removed first, as are the "<name>.tmp.<pid>" files that
// earlier versions of this writer left behind.
Status WriteDirectoryAtomically(const std::string& dir,
                                const std::vector<FileContent>& files);

// Present in a directory whose file set was being replaced in place when the
// writer stopped: the set there mixes two generations.
inline constexpr std::string_view kIncompleteMarker =
    "model-inspector.INCOMPLETE";

namespace atomic_file_internal {
// Creates `path` exclusively (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0666
// before umask) and returns its descriptor; an existing file or symlink at
// `path` is an error. Exposed for tests.
StatusOr<int> CreateExclusive(const std::string& path);
}  // namespace atomic_file_internal

}  // namespace mi
