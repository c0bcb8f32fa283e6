#include "base/atomic_file.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "base/mapped_file.h"

namespace mi {
namespace {

TEST(AtomicFileTest, UncommittedWriteLeavesNothing) {
  auto dir = std::filesystem::temp_directory_path() / "mi_atomic_test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "out.json").string();
  std::filesystem::remove(path);
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    (*writer)->Write("partial");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ADD_FAILURE() << "left behind: " << e.path();
  }
  ASSERT_TRUE(WriteFileAtomically(path, "done").ok());
  auto read = ReadWholeFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "done");
  std::filesystem::remove_all(dir);
}

TEST(AtomicFileTest, UnwritableDirectoryIsAnIoError) {
  Status s = WriteFileAtomically("/nonexistent-dir/x.json", "x");
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_NE(s.message().find("/nonexistent-dir/x.json"), std::string::npos);
}

}  // namespace
}  // namespace mi
