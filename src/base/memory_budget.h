#pragma once

// The memory budget every reader works within. A hostile or broken input (a
// gzip bomb, a quoted CSV field that never closes, millions of tiny trace
// events) must stop with an error naming the limit, not take the machine's
// memory. Readers charge what they hold against a budget as they grow:
// decompressed bytes, the text of a file parsed whole, the field and row of
// a CSV being read, and the model and trace being built (their
// MemoryUsage()); a charge that would pass the limit fails and the reader
// returns MemoryLimitError naming file, place and limit.
//
// One budget per process (Process()), shared by every load: the CLI sets its
// limit from --memory-limit or MI_MEMORY_LIMIT; the server's runs, each open
// session holding the charge of its model and trace, share it too. Its
// default is kDefaultMemoryFraction of the machine's physical memory (or of
// the cgroup's memory.max when lower). Accounting is thread-safe (atomics).

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

namespace mi {

// The default limit's share of physical memory: room for what the readers do
// not count (the analyses after loading, the allocator's slack, the rest of
// the system).
inline constexpr double kDefaultMemoryFraction = 0.75;

class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // The process-wide budget, limited to DefaultMemoryLimit() until
  // set_limit() is called.
  static MemoryBudget& Process();

  uint64_t limit() const { return limit_.load(std::memory_order_relaxed); }
  void set_limit(uint64_t bytes) {
    limit_.store(bytes, std::memory_order_relaxed);
  }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }

  // Adds `bytes` to what is used; false, with nothing added, when that would
  // pass the limit.
  bool TryCharge(uint64_t bytes);
  void Release(uint64_t bytes);

 private:
  std::atomic<uint64_t> limit_;
  std::atomic<uint64_t> used_{0};
};

// A charge held against a budget, adjusted as what it stands for grows or
// shrinks, released when destroyed.
class MemoryCharge {
 public:
  // Null: MemoryBudget::Process().
  explicit MemoryCharge(MemoryBudget* budget = nullptr);
  ~MemoryCharge() { Set(0); }
  MemoryCharge(const MemoryCharge&) = delete;
  MemoryCharge& operator=(const MemoryCharge&) = delete;

  // Makes the charge `bytes`; false, changing nothing, when growing it would
  // pass the budget's limit. Shrinking always succeeds.
  bool Set(uint64_t bytes);
  bool Add(uint64_t bytes) { return Set(bytes_ + bytes); }
  uint64_t bytes() const { return bytes_; }
  MemoryBudget& budget() const { return *budget_; }

  // "<where>: <what> would exceed the memory limit of 64 MiB (9 MiB held by
  // read buffers and other inputs); raise it with --memory-limit SIZE or
  // MI_MEMORY_LIMIT". `where`: file and place (file@byte N, file:line).
  Status LimitError(std::string_view where, std::string_view what) const;

 private:
  MemoryBudget* budget_;
  uint64_t bytes_ = 0;
};

// The machine's physical memory (sysconf), or the cgroup v2 memory.max of
// this process when that is lower; 0 when neither can be read.
uint64_t PhysicalMemoryBytes();

// MI_MEMORY_LIMIT when set and valid, else kDefaultMemoryFraction of
// PhysicalMemoryBytes() (4 GiB when that is unknown).
uint64_t DefaultMemoryLimit();

// MI_MEMORY_LIMIT parsed: 0 when unset or empty; an error naming the
// variable when it is not a size.
StatusOr<uint64_t> MemoryLimitFromEnvironment();

// "512M", "4G", "1.5GiB", "64 MiB", "1000000" (bytes). K, M, G, T (with or
// without "B" / "iB", any case) are powers of 1024. Zero is refused.
StatusOr<uint64_t> ParseMemorySize(std::string_view text);

// "11.7 GiB", "64 MiB", "512 B": one decimal at most, dropped when ".0".
std::string FormatMemorySize(uint64_t bytes);

}  // namespace mi
