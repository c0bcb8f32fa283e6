#include "io/chunk_reader.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

// The rest of a reader's chunks, concatenated.
std::string ReadRest(ChunkReader& r) {
  std::string all;
  while (true) {
    auto chunk = r.Next();
    EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
    if (!chunk.ok() || chunk->empty()) return all;
    all.append(*chunk);
  }
}

TEST(ChunkReaderTest, ReadsPlainFileInChunks) {
  std::string path = TempPath("mi_chunk_plain.txt");
  std::string data(10000, 'a');
  data[9999] = 'z';
  std::ofstream(path) << data;
  auto r = ChunkReader::Open(path, 4096);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReadRest(**r), data);
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

// Every chunk of a file, read with or without read-ahead.
StatusOr<std::string> ReadAll(const std::string& path, size_t chunk_size,
                              size_t depth, std::vector<size_t>* sizes) {
  auto r = depth == 0
               ? ChunkReader::Open(path, chunk_size)
               : ChunkReader::OpenReadAhead(path, chunk_size, nullptr, depth);
  if (!r.ok()) return r.status();
  std::string all;
  while (true) {
    auto chunk = (*r)->Next();
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) break;
    if (sizes != nullptr) sizes->push_back(chunk->size());
    all.append(*chunk);
    // Counters are those of the chunks handed out, not of those read ahead.
    if ((*r)->bytes_produced() != all.size()) {
      return InternalError("bytes_produced " +
                           std::to_string((*r)->bytes_produced()) +
                           " != " + std::to_string(all.size()));
    }
  }
  // Past the end it stays at the end.
  auto again = (*r)->Next();
  if (!again.ok() || !again->empty()) return InternalError("not at the end");
  return all;
}

std::string VariedText(size_t n) {
  std::string data;
  uint32_t x = 12345;
  while (data.size() < n) {
    x = x * 1103515245u + 12345u;
    data += "{\"ts\":" + std::to_string(x % 100000) + ",\"name\":\"k" +
            std::to_string(x % 977) + "\"},\n";
  }
  data.resize(n);
  return data;
}

TEST(ChunkReaderTest, ReadAheadGivesTheSameChunksPlainAndGzip) {
  const std::string data = VariedText(1 << 20);
  std::string plain = TempPath("mi_chunk_ra.json");
  std::ofstream(plain, std::ios::binary) << data;
  std::string gz = TempPath("mi_chunk_ra.json.gz");
  WriteGzip(gz, data);
  for (const std::string& path : {plain, gz}) {
    for (size_t chunk : {size_t{1000}, size_t{65536}, size_t{4 << 20}}) {
      for (size_t depth : {size_t{1}, size_t{2}, size_t{5}}) {
        std::vector<size_t> plain_sizes, ahead_sizes;
        auto expected = ReadAll(path, chunk, 0, &plain_sizes);
        auto got = ReadAll(path, chunk, depth, &ahead_sizes);
        ASSERT_TRUE(expected.ok()) << expected.status().ToString();
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        EXPECT_EQ(*got, data) << path << " chunk " << chunk;
        EXPECT_EQ(ahead_sizes, plain_sizes) << path << " chunk " << chunk;
      }
    }
  }
}

TEST(ChunkReaderTest, ReadAheadReportsATruncatedGzipAfterItsGoodChunks) {
  std::string path = TempPath("mi_chunk_ra_trunc.json.gz");
  const std::string data = VariedText(400000);
  WriteGzip(path, data);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  auto r = ChunkReader::OpenReadAhead(path, 4096, nullptr, 3);
  ASSERT_TRUE(r.ok());
  std::string good;
  Status error;
  while (true) {
    auto chunk = (*r)->Next();
    if (!chunk.ok()) {
      error = chunk.status();
      break;
    }
    ASSERT_FALSE(chunk->empty()) << "a truncated gzip ended without error";
    good.append(*chunk);
  }
  EXPECT_EQ(error.code(), StatusCode::kMalformedInput);
  EXPECT_NE(error.message().find("truncated"), std::string::npos);
  // What came before the damage is the file's own text.
  ASSERT_GT(good.size(), 0u);
  EXPECT_EQ(good, data.substr(0, good.size()));
}

TEST(ChunkReaderTest, ReadAheadStopsCleanlyWhenClosedEarly) {
  std::string path = TempPath("mi_chunk_ra_early.json.gz");
  WriteGzip(path, VariedText(1 << 20));
  for (int i = 0; i < 20; ++i) {
    auto r = ChunkReader::OpenReadAhead(path, 4096, nullptr, 2);
    ASSERT_TRUE(r.ok());
    for (int k = 0; k < i; ++k) ASSERT_TRUE((*r)->Next().ok());
    // The destructor stops and joins the thread, wherever it is.
  }
}

TEST(ChunkReaderTest, ReadAheadWithoutRoomInTheBudgetReadsInNext) {
  std::string path = TempPath("mi_chunk_ra_budget.json");
  const std::string data = VariedText(300000);
  std::ofstream(path, std::ios::binary) << data;
  // Room for the one chunk buffer, not for two more.
  MemoryBudget budget(100000);
  auto r = ChunkReader::OpenReadAhead(path, 65536, &budget, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(budget.used(), 65536u);
  EXPECT_EQ(ReadRest(**r), data);
}

TEST(ChunkReaderTest, MissingFileIsNotFound) {
  auto r = ChunkReader::Open("/nonexistent/file.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace mi::io
