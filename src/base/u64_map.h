#pragma once

// An open-addressing hash map from uint64 keys to small values, for the
// model's (graph, name) -> id indexes. std::unordered_map allocates a node
// per entry; on a 100k-node graph those allocations and frees were a tenth
// of the import (measured with callgrind, bench/onnx). Linear probing over
// one flat array, no deletion (the indexes only grow).

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mi {

template <typename Value>
class U64Map {
 public:
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  // Returns the value for `key`, or nullptr.
  const Value* Find(uint64_t key) const {
    if (size_ == 0) return nullptr;
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmptyKey) return nullptr;
    }
  }

  // Inserts (key, value) unless the key exists; returns the stored value
  // and whether it was inserted. `key` must not be kEmptyKey.
  std::pair<Value*, bool> Emplace(uint64_t key, Value value) {
    if ((size_ + 1) * 4 > keys_.size() * 3) Grow();
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return {&values_[i], false};
      if (keys_[i] == kEmptyKey) {
        keys_[i] = key;
        values_[i] = value;
        ++size_;
        return {&values_[i], true};
      }
    }
  }

  void Reserve(size_t n) {
    while (n * 4 > keys_.size() * 3) Grow();
  }
  size_t size() const { return size_; }
  size_t MemoryUsage() const {
    return keys_.capacity() * (sizeof(uint64_t) + sizeof(Value));
  }

 private:
  size_t Slot(uint64_t key) const {
    // Fibonacci hashing spreads (graph << 32 | id) keys over the table.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void Grow() {
    std::vector<uint64_t> old_keys = std::move(keys_);
    std::vector<Value> old_values = std::move(values_);
    size_t capacity = old_keys.empty() ? 64 : old_keys.size() * 2;
    keys_.assign(capacity, kEmptyKey);
    values_.assign(capacity, Value());
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != kEmptyKey) Emplace(old_keys[i], old_values[i]);
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<Value> values_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

}  // namespace mi
