#pragma once

// Interns strings: each distinct string is stored once and named by a
// StringId. Id 0 is always the empty string. Views returned by Get() stay
// valid for the pool's lifetime (blocks are never moved).

#include <memory>
#include <string_view>
#include <unordered_map>
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
  void Reserve(size_t n) {
    strings_.reserve(strings_.size() + n);
    index_.reserve(index_.size() + n);
  }
  // Looks up without inserting; Invalid() when absent.
  StringId Find(std::string_view s) const;
  std::string_view Get(StringId id) const { return strings_[id.value()]; }
  size_t size() const { return strings_.size(); }
  // Bytes held by the pool (blocks + index), for memory reports.
  size_t MemoryUsage() const;

  static constexpr StringId kEmpty = StringId(0);

 private:
  std::string_view Store(std::string_view s);

  static constexpr size_t kBlockSize = 1 << 20;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = kBlockSize;
  size_t block_capacity_ = kBlockSize;
  size_t stored_bytes_ = 0;
  std::vector<std::string_view> strings_;
  std::unordered_map<std::string_view, StringId> index_;
};

}  // namespace mi
