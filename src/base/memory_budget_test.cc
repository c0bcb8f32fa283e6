#include "base/memory_budget.h"

#include <cstdlib>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace mi {
namespace {

TEST(ParseMemorySize, AcceptsBytesAndBinaryUnits) {
  // Powers of 1024, written out: 512 * 2^20, 4 * 2^30, 1.5 * 2^30.
  EXPECT_EQ(*ParseMemorySize("512M"), 536870912u);
  EXPECT_EQ(*ParseMemorySize("4G"), 4294967296u);
  EXPECT_EQ(*ParseMemorySize("1.5GiB"), 1610612736u);
  EXPECT_EQ(*ParseMemorySize("64 MiB"), 67108864u);
  EXPECT_EQ(*ParseMemorySize("2kb"), 2048u);
  EXPECT_EQ(*ParseMemorySize("1T"), 1099511627776u);
  EXPECT_EQ(*ParseMemorySize("1000000"), 1000000u);
  EXPECT_EQ(*ParseMemorySize("100B"), 100u);
}

TEST(ParseMemorySize, RefusesWhatIsNotASize) {
  for (const char* text :
       {"", "G", "abc", "4X", "1.2.3G", "0", "0.1", "-5M", "99999999999T"}) {
    auto r = ParseMemorySize(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("512M"), std::string::npos);
  }
}

TEST(FormatMemorySize, OneDecimalAtMost) {
  EXPECT_EQ(FormatMemorySize(512), "512 B");
  EXPECT_EQ(FormatMemorySize(64u << 20), "64 MiB");
  // 11.7 GiB = 12562779750 bytes / 2^30 = 11.70...
  EXPECT_EQ(FormatMemorySize(12562779750ull), "11.7 GiB");
  EXPECT_EQ(FormatMemorySize(1536), "1.5 KiB");
}

TEST(MemoryBudget, ChargesUpToTheLimitAndReleases) {
  MemoryBudget budget(1000);
  EXPECT_TRUE(budget.TryCharge(600));
  EXPECT_FALSE(budget.TryCharge(401));
  EXPECT_EQ(budget.used(), 600u);
  EXPECT_TRUE(budget.TryCharge(400));
  EXPECT_FALSE(budget.TryCharge(1));
  budget.Release(1000);
  EXPECT_EQ(budget.used(), 0u);
  // A limit lowered below what is held refuses every new charge.
  EXPECT_TRUE(budget.TryCharge(800));
  budget.set_limit(500);
  EXPECT_FALSE(budget.TryCharge(1));
  budget.Release(800);
}

TEST(MemoryCharge, GrowsShrinksAndReleasesOnDestruction) {
  MemoryBudget budget(100);
  {
    MemoryCharge a(&budget);
    MemoryCharge b(&budget);
    EXPECT_TRUE(a.Set(60));
    EXPECT_FALSE(b.Set(41));  // 60 + 41 > 100: nothing charged
    EXPECT_EQ(b.bytes(), 0u);
    EXPECT_TRUE(b.Set(40));
    EXPECT_TRUE(a.Set(10));  // shrinking always succeeds
    EXPECT_EQ(budget.used(), 50u);
    EXPECT_TRUE(b.Add(50));
    EXPECT_EQ(budget.used(), 100u);
    // b holds 90 of the 100 used; a holds the other 10.
    Status error = b.LimitError("trace.json@byte 7", "the trace");
    EXPECT_EQ(error.code(), StatusCode::kMemoryLimit);
    EXPECT_EQ(error.message(),
              "trace.json@byte 7: the trace would exceed the memory limit of "
              "100 B (10 B held by read buffers and other inputs); raise it "
              "with --memory-limit SIZE or MI_MEMORY_LIMIT");
    EXPECT_TRUE(a.Set(0));
    EXPECT_EQ(b.LimitError("t.csv:3", "the row").message(),
              "t.csv:3: the row would exceed the memory limit of 100 B; raise "
              "it with --memory-limit SIZE or MI_MEMORY_LIMIT");
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(MemoryBudget, ConcurrentChargesNeverPassTheLimit) {
  MemoryBudget budget(10000);
  std::vector<std::thread> threads;
  std::atomic<uint64_t> granted{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        if (budget.TryCharge(3)) granted += 3;
      }
    });
  }
  for (auto& t : threads) t.join();
  // 4 * 10000 * 3 bytes were asked for; exactly the largest multiple of 3
  // not above 10000 can be granted.
  EXPECT_EQ(granted.load(), 9999u);
  EXPECT_EQ(budget.used(), 9999u);
}

TEST(MemoryLimitFromEnvironment, ReadsMiMemoryLimit) {
  ::setenv("MI_MEMORY_LIMIT", "3G", 1);
  EXPECT_EQ(*MemoryLimitFromEnvironment(), 3ull << 30);
  EXPECT_EQ(DefaultMemoryLimit(), 3ull << 30);
  ::setenv("MI_MEMORY_LIMIT", "lots", 1);
  auto bad = MemoryLimitFromEnvironment();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MI_MEMORY_LIMIT"), std::string::npos);
  ::unsetenv("MI_MEMORY_LIMIT");
  EXPECT_EQ(*MemoryLimitFromEnvironment(), 0u);
  // Unset: a fraction of physical memory, never more than there is.
  EXPECT_GT(DefaultMemoryLimit(), 0u);
  if (PhysicalMemoryBytes() > 0) {
    EXPECT_LT(DefaultMemoryLimit(), PhysicalMemoryBytes());
  }
}

}  // namespace
}  // namespace mi
