#include "base/string_pool.h"

#include <cstring>

namespace mi {

StringPool::StringPool() {
  strings_.emplace_back();
  index_.emplace(std::string_view(), StringId(0));
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
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  std::string_view stored = Store(s);
  StringId id(static_cast<uint32_t>(strings_.size()));
  strings_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

StringId StringPool::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? StringId::Invalid() : it->second;
}

size_t StringPool::MemoryUsage() const {
  return stored_bytes_ + strings_.capacity() * sizeof(std::string_view) +
         index_.size() * (sizeof(std::string_view) + sizeof(StringId) + 16);
}

}  // namespace mi
