#include "io/chunk_reader.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace mi::io {
namespace {

std::string TempPath(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

void WriteGzip(const std::string& path, const std::string& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  gzclose(f);
}

TEST(ChunkReaderTest, ReadsPlainFileInChunks) {
  std::string path = TempPath("mi_chunk_plain.txt");
  std::string data(10000, 'a');
  data[9999] = 'z';
  std::ofstream(path) << data;
  auto r = ChunkReader::Open(path, 4096);
  ASSERT_TRUE(r.ok());
  std::string all;
  while (true) {
    auto chunk = (*r)->Next();
    ASSERT_TRUE(chunk.ok());
    if (chunk->empty()) break;
    all.append(*chunk);
  }
  EXPECT_EQ(all, data);
  EXPECT_FALSE((*r)->is_gzip());
}

TEST(ChunkReaderTest, InflatesGzipTransparently) {
  std::string path = TempPath("mi_chunk.json.gz");
  std::string data;
  for (int i = 0; i < 50000; ++i) data += "{\"ts\":" + std::to_string(i) + "}";
  WriteGzip(path, data);
  auto all = ReadDecompressedFile(path);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, data);
}

TEST(ChunkReaderTest, TruncatedGzipIsMalformedWithOffset) {
  std::string path = TempPath("mi_chunk_trunc.json.gz");
  std::string data(100000, 'x');
  for (size_t i = 0; i < data.size(); i += 7) data[i] = char('a' + i % 26);
  WriteGzip(path, data);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  auto all = ReadDecompressedFile(path);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), StatusCode::kMalformedInput);
  EXPECT_NE(all.status().message().find("@byte"), std::string::npos);
  EXPECT_NE(all.status().message().find("truncated"), std::string::npos);
}

TEST(ChunkReaderTest, MissingFileIsNotFound) {
  auto r = ChunkReader::Open("/nonexistent/file.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace mi::io
