#include "base/string_pool.h"

#include <cstring>
#include <string_view>

namespace mi {

StringPool::StringPool() {
  slots_.assign(1024, 0);
  mask_ = slots_.size() - 1;
  strings_.emplace_back();
  uint64_t h = Hash(std::string_view());
  hashes_.push_back(static_cast<uint32_t>(h));
  slots_[h & mask_] = 1;
}

uint64_t StringPool::Hash(std::string_view s) {
  // 8 bytes at a time, multiply-xorshift mixing (wyhash-style constants).
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0xA0761D6478BD642Full ^ (s.size() * kMul);
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * kMul;
  }
  h ^= h >> 32;
  h *= 0xE7037ED1A0B428DBull;
  h ^= h >> 29;
  return h;
}

void StringPool::GrowIndex() {
  slots_.assign(slots_.size() * 2, 0);
  mask_ = slots_.size() - 1;
  for (uint32_t id = 0; id < strings_.size(); ++id) {
    // Only 32 hash bits are kept: re-hash the string for its slot.
    size_t i = Hash(strings_[id]) & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = id + 1;
  }
}

void StringPool::Reserve(size_t n) {
  strings_.reserve(strings_.size() + n);
  hashes_.reserve(hashes_.size() + n);
  while ((strings_.size() + n) * 4 > slots_.size() * 3) GrowIndex();
}

std::string_view StringPool::Store(std::string_view s) {
  if (s.size() > kBlockSize / 4) {
    // Large strings get their own block so they do not waste a shared one.
    blocks_.push_back(std::make_unique<char[]>(s.size()));
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    stored_bytes_ += s.size();
    return std::string_view(blocks_.back().get(), s.size());
  }
  if (block_used_ + s.size() > block_capacity_) {
    blocks_.push_back(std::make_unique<char[]>(kBlockSize));
    block_used_ = 0;
    block_capacity_ = kBlockSize;
    stored_bytes_ += kBlockSize;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(dst, s.size());
}

StringId StringPool::Intern(std::string_view s) {
  uint64_t h = Hash(s);
  auto h32 = static_cast<uint32_t>(h);
  size_t i = h & mask_;
  for (; slots_[i] != 0; i = (i + 1) & mask_) {
    uint32_t id = slots_[i] - 1;
    if (hashes_[id] == h32 && strings_[id] == s) return StringId(id);
  }
  StringId id(static_cast<uint32_t>(strings_.size()));
  strings_.push_back(Store(s));
  hashes_.push_back(h32);
  slots_[i] = id.value() + 1;
  if (strings_.size() * 4 > slots_.size() * 3) GrowIndex();
  return id;
}

StringId StringPool::Find(std::string_view s) const {
  uint64_t h = Hash(s);
  auto h32 = static_cast<uint32_t>(h);
  for (size_t i = h & mask_; slots_[i] != 0; i = (i + 1) & mask_) {
    uint32_t id = slots_[i] - 1;
    if (hashes_[id] == h32 && strings_[id] == s) return StringId(id);
  }
  return StringId::Invalid();
}

size_t StringPool::MemoryUsage() const {
  return stored_bytes_ +
         strings_.capacity() * (sizeof(std::string_view) + sizeof(uint32_t)) +
         slots_.capacity() * sizeof(uint32_t);
}

}  // namespace mi
