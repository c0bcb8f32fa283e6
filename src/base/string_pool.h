#pragma once

// Interns strings: each distinct string is stored once and named by a
// StringId. Id 0 is always the empty string. Views returned by Get() stay
// valid for the pool's lifetime (blocks are never moved).

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/ids.h"

namespace mi {

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  StringId Intern(std::string_view s);
  // Expects about `n` more distinct strings (avoids rehashing).
  void Reserve(size_t n);
  // Looks up without inserting; Invalid() when absent.
  StringId Find(std::string_view s) const;
  std::string_view Get(StringId id) const { return strings_[id.value()]; }
  size_t size() const { return strings_.size(); }
  // Bytes held by the pool (blocks + index), for memory reports.
  size_t MemoryUsage() const;

  static constexpr StringId kEmpty = StringId(0);

 private:
  std::string_view Store(std::string_view s);
  static uint64_t Hash(std::string_view s);
  void GrowIndex();

  static constexpr size_t kBlockSize = 1 << 20;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = kBlockSize;
  size_t block_capacity_ = kBlockSize;
  size_t stored_bytes_ = 0;
  std::vector<std::string_view> strings_;
  std::vector<uint32_t> hashes_;  // low 32 bits of each string's hash
  // Open addressing (linear probing): id + 1 per slot, 0 = empty. Interning
  // is the hottest path of every importer; std::unordered_map's node
  // allocations cost more than the hashing (callgrind, bench/onnx).
  std::vector<uint32_t> slots_;
  size_t mask_ = 0;
};

}  // namespace mi
