#include "base/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "base/mapped_file.h"

namespace mi {
namespace {

namespace fs = std::filesystem;

// A fresh, empty directory per test, removed afterwards.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "mi_atomic_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  static std::string Read(const fs::path& path) {
    auto read = ReadWholeFile(path.string());
    return read.ok() ? *read : "<unreadable: " + read.status().message() + ">";
  }
  static void Put(const fs::path& path, std::string_view data) {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  }
  // Every entry of `dir` by name, "name -> content" for files, "name/" for
  // directories, "name@" for symlinks.
  static std::map<std::string, std::string> Listing(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      if (e.is_symlink()) {
        out[name + "@"] = "";
      } else if (e.is_directory()) {
        out[name + "/"] = "";
      } else {
        out[name] = Read(e.path());
      }
    }
    return out;
  }

  fs::path root_;
};

// The previous export: two files of the set.
const std::map<std::string, std::string> kOldSet = {{"a.json", "old a"},
                                                    {"b.json", "old b"}};

void PutSet(const fs::path& dir,
            const std::map<std::string, std::string>& set) {
  fs::create_directories(dir);
  for (const auto& [name, data] : set) {
    FILE* f = std::fopen((dir / name).c_str(), "wb");
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  }
}

// Runs `body` in a child process whose files may not grow past `limit`
// bytes (RLIMIT_FSIZE): a write past it fails with EFBIG (SIGXFSZ ignored),
// as on a full disk. Returns the child's exit status: 0 when `body`
// returned true.
template <typename Body>
int WithFileSizeLimit(rlim_t limit, Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    ::_exit(body() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST_F(AtomicFileTest, UncommittedWriteLeavesNothing) {
  std::string path = (root_ / "out.json").string();
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    (*writer)->Write("partial");
  }
  EXPECT_TRUE(Listing(root_).empty());
  ASSERT_TRUE(WriteFileAtomically(path, "done").ok());
  EXPECT_EQ(Listing(root_),
            (std::map<std::string, std::string>{{"out.json", "done"}}));
}

TEST_F(AtomicFileTest, UnwritableDirectoryIsAnIoError) {
  Status s = WriteFileAtomically("/nonexistent-dir/x.json", "x");
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_NE(s.message().find("/nonexistent-dir/x.json"), std::string::npos);
}

TEST_F(AtomicFileTest, CreateExclusiveNeverWritesThroughAPlantedSymlink) {
  Put(root_ / "victim", "precious");
  fs::create_symlink(root_ / "victim", root_ / "planted");
  StatusOr<int> fd =
      atomic_file_internal::CreateExclusive((root_ / "planted").string());
  EXPECT_FALSE(fd.ok());
  EXPECT_NE(fd.status().message().find("planted"), std::string::npos);
  // A dangling symlink is not followed to create its target either.
  fs::create_symlink(root_ / "would-be-created", root_ / "dangling");
  fd = atomic_file_internal::CreateExclusive((root_ / "dangling").string());
  EXPECT_FALSE(fd.ok());
  EXPECT_FALSE(fs::exists(root_ / "would-be-created"));
  // A plain existing file is refused too (O_EXCL).
  fd = atomic_file_internal::CreateExclusive((root_ / "victim").string());
  EXPECT_FALSE(fd.ok());
  EXPECT_EQ(Read(root_ / "victim"), "precious");
}

TEST_F(AtomicFileTest, SymlinkAtTheTargetIsReplacedNotWrittenThrough) {
  Put(root_ / "victim", "precious");
  fs::create_symlink(root_ / "victim", root_ / "out.json");
  ASSERT_TRUE(WriteFileAtomically((root_ / "out.json").string(), "new").ok());
  EXPECT_EQ(Read(root_ / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(root_ / "out.json"));
  EXPECT_EQ(Read(root_ / "out.json"), "new");
}

TEST_F(AtomicFileTest, TempFilesHaveUnpredictableNames) {
  // Two writers to the same path at once (same process, same pid) get
  // different temp files.
  std::string path = (root_ / "out.json").string();
  auto first = AtomicFileWriter::Create(path);
  auto second = AtomicFileWriter::Create(path);
  ASSERT_TRUE(first.ok() && second.ok());
  auto listing = Listing(root_);
  ASSERT_EQ(listing.size(), 2u);
  for (const auto& [name, data] : listing) {
    EXPECT_TRUE(
        name.starts_with(".out.json.tmp-" + std::to_string(getpid()) + "-"))
        << name;
  }
}

TEST_F(AtomicFileTest, StaleTempFilesOfAGoneWriterAreRemoved) {
  // A pid that is certainly gone: a child that has exited and been reaped.
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  std::string g = std::to_string(gone);
  std::string live = std::to_string(getppid());  // running: kept
  Put(root_ / (".out.json.tmp-" + g + "-0123456789abcdef"), "stale");
  Put(root_ / ("out.json.tmp." + g), "stale, earlier versions' name");
  Put(root_ / (".out.json.tmp-" + live + "-0123456789abcdef"), "in use");
  Put(root_ / ("other.json.tmp." + g), "not ours");
  ASSERT_TRUE(WriteFileAtomically((root_ / "out.json").string(), "x").ok());
  EXPECT_EQ(Listing(root_),
            (std::map<std::string, std::string>{
                {".out.json.tmp-" + live + "-0123456789abcdef", "in use"},
                {"other.json.tmp." + g, "not ours"},
                {"out.json", "x"}}));
}

TEST_F(AtomicFileTest, FailedWriteLeavesTheOldFileAndNoTemp) {
  Put(root_ / "out.json", "old");
  std::string big(64 * 1024, 'x');
  int status = WithFileSizeLimit(4096, [&] {
    Status s = WriteFileAtomically((root_ / "out.json").string(), big);
    return !s.ok() && s.message().find("out.json") != std::string::npos;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(Listing(root_),
            (std::map<std::string, std::string>{{"out.json", "old"}}));
}

TEST_F(AtomicFileTest, FileSetFailingMidwayReplacesNothing) {
  // The second file cannot be written: the first, already written to its
  // temp file, must not have been renamed over its target.
  PutSet(root_, kOldSet);
  std::string big(64 * 1024, 'x');
  int status = WithFileSizeLimit(4096, [&] {
    return !WriteFilesAtomically({{(root_ / "a.json").string(), "new a"},
                                  {(root_ / "b.json").string(), big}})
                .ok();
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(Listing(root_), kOldSet);
  ASSERT_TRUE(WriteFilesAtomically({{(root_ / "a.json").string(), "new a"},
                                    {(root_ / "b.json").string(), "new b"}})
                  .ok());
  EXPECT_EQ(Listing(root_), (std::map<std::string, std::string>{
                                {"a.json", "new a"}, {"b.json", "new b"}}));
}

TEST_F(AtomicFileTest, DirectoryIsCreatedWhole) {
  fs::path out = root_ / "nested" / "export";
  ASSERT_TRUE(
      WriteDirectoryAtomically(out.string(), {{"a.json", "A"}, {"b.json", "B"}})
          .ok());
  EXPECT_EQ(Listing(out), (std::map<std::string, std::string>{
                              {"a.json", "A"}, {"b.json", "B"}}));
  // Nothing but the directory itself beside it.
  EXPECT_EQ(Listing(root_ / "nested"),
            (std::map<std::string, std::string>{{"export/", ""}}));
}

TEST_F(AtomicFileTest, DirectoryIsSwappedWholeAndKeepsItsPermissions) {
  fs::path out = root_ / "export";
  PutSet(out, kOldSet);
  ::chmod(out.c_str(), 0750);
  struct stat old_st;
  ASSERT_EQ(::stat(out.c_str(), &old_st), 0);
  ASSERT_TRUE(WriteDirectoryAtomically(
                  out.string(), {{"a.json", "new a"}, {"b.json", "new b"}})
                  .ok());
  struct stat st;
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_NE(st.st_ino, old_st.st_ino) << "expected a swapped-in directory";
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(Listing(out), (std::map<std::string, std::string>{
                              {"a.json", "new a"}, {"b.json", "new b"}}));
  EXPECT_EQ(Listing(root_),
            (std::map<std::string, std::string>{{"export/", ""}}));
}

TEST_F(AtomicFileTest, DirectoryFailingMidwayKeepsTheOldSetWhole) {
  for (bool users_files : {false, true}) {
    SCOPED_TRACE(users_files ? "in place" : "swapped");
    fs::path out = root_ / (users_files ? "mine" : "export");
    PutSet(out, kOldSet);
    if (users_files) Put(out / "notes.txt", "the user's");
    std::string big(64 * 1024, 'x');
    int status = WithFileSizeLimit(4096, [&] {
      Status s = WriteDirectoryAtomically(
          out.string(), {{"a.json", "new a"}, {"b.json", big}});
      return !s.ok() && s.message().find("b.json") != std::string::npos;
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    auto expected = kOldSet;
    if (users_files) expected["notes.txt"] = "the user's";
    EXPECT_EQ(Listing(out), expected);
  }
  // No temp directory left beside them.
  EXPECT_EQ(Listing(root_), (std::map<std::string, std::string>{
                                {"export/", ""}, {"mine/", ""}}));
}

TEST_F(AtomicFileTest, DirectoryWithTheUsersFilesIsReplacedInPlace) {
  fs::path out = root_ / "mine";
  PutSet(out, kOldSet);
  Put(out / "notes.txt", "the user's");
  ASSERT_TRUE(WriteDirectoryAtomically(
                  out.string(), {{"a.json", "new a"}, {"b.json", "new b"}})
                  .ok());
  EXPECT_EQ(Listing(out),
            (std::map<std::string, std::string>{{"a.json", "new a"},
                                                {"b.json", "new b"},
                                                {"notes.txt", "the user's"}}));
}

TEST_F(AtomicFileTest, RenameFailingMidwayInPlaceLeavesTheSetMarked) {
  // b.json is a non-empty directory (not ours: the set is replaced in
  // place), so renaming the new b.json over it fails after a.json was
  // renamed: the marker stays and the error says the set is incomplete.
  fs::path out = root_ / "mine";
  PutSet(out, kOldSet);
  fs::remove(out / "b.json");
  fs::create_directories(out / "b.json");
  Put(out / "b.json" / "x", "x");
  Status s = WriteDirectoryAtomically(
      out.string(), {{"a.json", "new a"}, {"b.json", "new b"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("incomplete"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(std::string(kIncompleteMarker)),
            std::string::npos);
  auto listing = Listing(out);
  EXPECT_EQ(listing.size(), 3u);
  EXPECT_EQ(listing["a.json"], "new a");
  EXPECT_TRUE(listing.contains("b.json/"));
  ASSERT_TRUE(listing.contains(std::string(kIncompleteMarker)));
  EXPECT_NE(listing[std::string(kIncompleteMarker)].find("b.json"),
            std::string::npos);
  // Once the obstacle is gone, a complete write removes the marker.
  fs::remove_all(out / "b.json");
  ASSERT_TRUE(
      WriteDirectoryAtomically(out.string(), {{"a.json", "A"}, {"b.json", "B"}})
          .ok());
  EXPECT_EQ(Listing(out), (std::map<std::string, std::string>{
                              {"a.json", "A"}, {"b.json", "B"}}));
}

TEST_F(AtomicFileTest, KilledWriterLeavesTheOldSetAndItsLeftoversGoNextTime) {
  fs::path out = root_ / "export";
  PutSet(out, kOldSet);
  // A writer killed by the kernel (SIGXFSZ, not ignored here, like SIGKILL
  // it runs no cleanup) while writing the second file.
  pid_t pid = ::fork();
  if (pid == 0) {
    rlimit rl{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    std::string big(64 * 1024, 'x');
    (void)WriteDirectoryAtomically(out.string(),
                                   {{"a.json", "new a"}, {"b.json", big}});
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) << status;
  EXPECT_EQ(Listing(out), kOldSet);
  // Its private directory is left beside the output...
  auto beside = Listing(root_);
  EXPECT_EQ(beside.size(), 2u);
  // ...until the next write there.
  ASSERT_TRUE(
      WriteDirectoryAtomically(out.string(), {{"a.json", "A"}, {"b.json", "B"}})
          .ok());
  EXPECT_EQ(Listing(root_),
            (std::map<std::string, std::string>{{"export/", ""}}));
  EXPECT_EQ(Listing(out), (std::map<std::string, std::string>{
                              {"a.json", "A"}, {"b.json", "B"}}));
}

TEST_F(AtomicFileTest, SymlinkedOutputDirectoryStaysALink) {
  fs::path real = root_ / "real";
  PutSet(real, kOldSet);
  fs::create_symlink(real, root_ / "link");
  ASSERT_TRUE(WriteDirectoryAtomically((root_ / "link").string(),
                                       {{"a.json", "A"}, {"b.json", "B"}})
                  .ok());
  EXPECT_TRUE(fs::is_symlink(root_ / "link"));
  EXPECT_EQ(Listing(real), (std::map<std::string, std::string>{
                               {"a.json", "A"}, {"b.json", "B"}}));
}

TEST_F(AtomicFileTest, OutputThatIsAFileIsAnError) {
  Put(root_ / "export", "a file");
  Status s =
      WriteDirectoryAtomically((root_ / "export").string(), {{"a.json", "A"}});
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_NE(s.message().find("not a directory"), std::string::npos);
  EXPECT_EQ(Read(root_ / "export"), "a file");
}

}  // namespace
}  // namespace mi
