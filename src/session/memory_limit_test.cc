// Inputs that would need more memory than the set limit stop with a
// memory-limit error naming the file, the place and the limit; each input is
// a gzip bomb written by the test (a few hundred KiB on disk).

#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "base/memory_budget.h"
#include "io/chunk_reader.h"
#include "model_inspector/session.h"

namespace mi {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kLimit = uint64_t{64} << 20;  // 64 MiB, set by the test

class MemoryLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mi_memory_limit_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `name` gzipped: `head`, then `body` repeated `times`, then `tail`.
  std::string WriteGz(const std::string& name, const std::string& head,
                      const std::string& body, uint64_t times,
                      const std::string& tail = "") {
    std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb1");
    EXPECT_NE(f, nullptr);
    gzwrite(f, head.data(), static_cast<unsigned>(head.size()));
    // In blocks of ~1 MiB: fast to write, the same bytes.
    std::string block;
    uint64_t per_block = std::max<uint64_t>(1, (1 << 20) / body.size());
    for (uint64_t i = 0; i < per_block; ++i) block += body;
    uint64_t left = times;
    while (left > 0) {
      uint64_t n = std::min(left, per_block);
      gzwrite(f, block.data(), static_cast<unsigned>(n * body.size()));
      left -= n;
    }
    gzwrite(f, tail.data(), static_cast<unsigned>(tail.size()));
    gzclose(f);
    return path;
  }

  StatusOr<std::unique_ptr<Session>> Open(const std::string& path) {
    OpenOptions options;
    options.paths = {path};
    options.memory_limit = kLimit;
    return Session::Open(options);
  }

  fs::path dir_;
};

void ExpectLimitError(const Status& status, const std::string& path,
                      const std::string& place) {
  ASSERT_EQ(status.code(), StatusCode::kMemoryLimit) << status.ToString();
  const std::string& m = status.message();
  EXPECT_EQ(m.rfind(path + place, 0), 0u) << m;
  EXPECT_NE(m.find("would exceed the memory limit of 64 MiB"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("--memory-limit SIZE or MI_MEMORY_LIMIT"), std::string::npos)
      << m;
}

TEST_F(MemoryLimitTest, BudgetIsFreeAfterEveryRefusal) {
  // The process budget is untouched by loads with their own limit, and a
  // refused read leaves nothing charged.
  uint64_t before = MemoryBudget::Process().used();
  std::string path = WriteGz("zeros.bin.gz", "", std::string(4096, '0'),
                             (uint64_t{96} << 20) / 4096);
  MemoryBudget budget(kLimit);
  MemoryCharge charge(&budget);
  auto text = io::ReadDecompressedFile(path, &charge);
  ASSERT_FALSE(text.ok());
  ExpectLimitError(text.status(), path, "@byte ");
  EXPECT_EQ(charge.bytes(), 0u);
  EXPECT_EQ(MemoryBudget::Process().used(), before);
  // A reader's buffer alone larger than the limit is refused when opened.
  MemoryBudget tiny(1 << 20);
  auto reader = io::ChunkReader::Open(path, 8 << 20, &tiny);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kMemoryLimit);
  EXPECT_EQ(tiny.used(), 0u);
}

TEST_F(MemoryLimitTest, DecompressedTextStopsAtTheLimit) {
  // 96 MiB of "ir_version: 7" lines, well under 1 MiB gzipped: the text
  // alone passes 64 MiB, so the read stops before the parse.
  std::string path = WriteGz("bomb.onnxtxt.gz", "", "ir_version: 7\n",
                             (uint64_t{96} << 20) / 14);
  auto session = Open(path);
  ASSERT_FALSE(session.ok());
  ExpectLimitError(session.status(), path, "@byte ");
  // The byte named is where the text would have passed 64 MiB: at most the
  // limit into the file.
  const std::string& m = session.status().message();
  uint64_t byte = std::stoull(m.substr(path.size() + 6));
  EXPECT_LE(byte, kLimit);
  EXPECT_GT(byte, 0u);
}

TEST_F(MemoryLimitTest, ParseEstimateCountsBeforeTheParse) {
  // 8 MiB of empty "node {}" messages: the text fits in 64 MiB, its parse
  // (a NodeProto of ~100+ bytes per 9 bytes of text) would not.
  std::string path = WriteGz("nodes.onnxtxt.gz", "ir_version: 7\ngraph {\n",
                             "node { }\n", (uint64_t{8} << 20) / 9, "}\n");
  auto session = Open(path);
  ASSERT_FALSE(session.ok());
  ExpectLimitError(session.status(), path, ": parsing its 8 MiB of text");
}

TEST_F(MemoryLimitTest, NeverClosedQuotedCsvFieldStopsAtTheFieldCap) {
  // A CANN op_summary header, one row whose last field opens a quote on
  // line 2 and 24 MiB of text follow without the closing quote. The field
  // cap (16 MiB) applies inside quotes; the error names the quote's line.
  std::string path = WriteGz(
      "op_summary_0.csv.gz",
      "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)\n"
      "conv1,Conv2D,AI_CORE,1,\"",
      std::string(4096, 'x') + "\n", (uint64_t{24} << 20) / 4097);
  OpenOptions options;
  options.paths = {path};  // the default budget: the cap, not it, stops this
  auto session = Session::Open(options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kMalformedInput);
  EXPECT_EQ(session.status().message().rfind(
                path + ":2: quoted field longer than 16 MiB", 0),
            0u)
      << session.status().message();
}

TEST_F(MemoryLimitTest, CsvRowOfManyFieldsStopsAtTheFieldCount) {
  std::string path = WriteGz(
      "op_summary_0.csv.gz",
      "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)\n"
      "conv1,Conv2D,AI_CORE,1,2\n",
      ",", uint64_t{1} << 20);
  auto session = Open(path);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().message().rfind(
                path + ":3: row with more than 65536 fields", 0),
            0u)
      << session.status().message();
}

TEST_F(MemoryLimitTest, NeverClosedQuoteInTraceEventCsvStopsAtTheRecordCap) {
  // Trace events flattened to CSV (onnx-array-api's columns): a quote opens
  // on line 2 and 80 MiB follow without the closing quote; a record is
  // capped at 64 MiB, as a JSON trace event is. (Under a 64 MiB limit the
  // budget stops it first: the record's buffer is charged.)
  std::string path =
      WriteGz("prof.csv.gz", "cat,pid,tid,dur,ts,ph,name\n\"",
              std::string(4095, 'x') + "\n", (uint64_t{80} << 20) / 4096);
  OpenOptions options;
  options.paths = {path};  // the default budget: the cap, not it, stops this
  auto session = Session::Open(options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kMalformedInput);
  EXPECT_EQ(session.status().message().rfind(
                path + ":2:1: record longer than 64 MiB", 0),
            0u)
      << session.status().message();
}

std::string TinyEvent() {
  return R"({"ph":"X","name":"k","ts":1,"dur":1,"pid":1,"tid":1},)";
}

TEST_F(MemoryLimitTest, MillionsOfTinyTraceEventsStopAtTheLimit) {
  // 2M events (~100 MiB of JSON, ~1 MiB gzipped). A task costs ~100 bytes
  // of columns (trace/trace.h: 7 string ids, 5 int64s, ...), so 64 MiB
  // holds well under 1M of them: the read stops part way, at an event
  // boundary the message names by byte.
  const uint64_t events = 2'000'000;
  std::string path = WriteGz("bomb.json.gz", R"({"traceEvents":[)", TinyEvent(),
                             events, "{}]}");
  auto session = Open(path);
  ASSERT_FALSE(session.ok());
  ExpectLimitError(session.status(), path, "@byte ");
  const std::string& m = session.status().message();
  EXPECT_NE(m.find("the trace read so far ("), std::string::npos) << m;
  uint64_t tasks = std::stoull(m.substr(m.find("so far (") + 8));
  EXPECT_GT(tasks, 100'000u) << m;
  EXPECT_LT(tasks, events) << m;
  uint64_t byte = std::stoull(m.substr(path.size() + 6));
  EXPECT_LT(byte, events * TinyEvent().size());
}

TEST_F(MemoryLimitTest, TheSameTraceSmallerLoadsWithinTheLimit) {
  // The control: 50k of the same events (2.5 MiB of JSON) fit in 64 MiB,
  // so it is the limit, not the events, that stops the larger one; and the
  // charge is released with the session.
  std::string path = WriteGz("small.json.gz", R"({"traceEvents":[)",
                             TinyEvent(), 50'000, "{}]}");
  auto session = Open(path);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->Summary({}).tasks, 50'000u);
}

}  // namespace
}  // namespace mi
