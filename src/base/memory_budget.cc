#include "base/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "base/strings.h"

namespace mi {

MemoryBudget& MemoryBudget::Process() {
  static MemoryBudget* const budget = new MemoryBudget(DefaultMemoryLimit());
  return *budget;
}

bool MemoryBudget::TryCharge(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    uint64_t limit = limit_.load(std::memory_order_relaxed);
    if (used > limit || bytes > limit - used) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes,
                                        std::memory_order_relaxed));
  return true;
}

void MemoryBudget::Release(uint64_t bytes) {
  used_.fetch_sub(bytes, std::memory_order_relaxed);
}

MemoryCharge::MemoryCharge(MemoryBudget* budget)
    : budget_(budget != nullptr ? budget : &MemoryBudget::Process()) {}

bool MemoryCharge::Set(uint64_t bytes) {
  if (bytes > bytes_) {
    if (!budget_->TryCharge(bytes - bytes_)) return false;
  } else if (bytes < bytes_) {
    budget_->Release(bytes_ - bytes);
  }
  bytes_ = bytes;
  return true;
}

Status MemoryCharge::LimitError(std::string_view where,
                                std::string_view what) const {
  // What other charges hold (read buffers, other files, other runs).
  uint64_t others = budget_->used() - std::min(budget_->used(), bytes_);
  return MemoryLimitError(
      fmt::format("{}: {} would exceed the memory limit of {}{}; raise it with "
                  "--memory-limit SIZE or MI_MEMORY_LIMIT",
                  where, what, FormatMemorySize(budget_->limit()),
                  others == 0 ? std::string()
                              : " (" + FormatMemorySize(others) +
                                    " held by read buffers and other inputs)"));
}

namespace {

// cgroup v2: the limit of this process's group ("max" or a byte count).
uint64_t CgroupMemoryMax() {
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line;
  std::string path;
  while (std::getline(cgroup, line)) {
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  }
  if (path.empty()) return 0;
  std::ifstream max("/sys/fs/cgroup" + path + "/memory.max");
  std::string value;
  if (!(max >> value) || value == "max") return 0;
  return ParseInteger<uint64_t>(value).value_or(0);
}

}  // namespace

uint64_t PhysicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page_size = ::sysconf(_SC_PAGESIZE);
  uint64_t physical =
      pages > 0 && page_size > 0
          ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
          : 0;
  uint64_t cgroup = CgroupMemoryMax();
  if (cgroup > 0 && (physical == 0 || cgroup < physical)) return cgroup;
  return physical;
}

StatusOr<uint64_t> MemoryLimitFromEnvironment() {
  const char* value = std::getenv("MI_MEMORY_LIMIT");
  if (value == nullptr || *value == '\0') return uint64_t{0};
  auto bytes = ParseMemorySize(value);
  if (!bytes.ok()) {
    return InvalidArgumentError("MI_MEMORY_LIMIT: " + bytes.status().message());
  }
  return *bytes;
}

uint64_t DefaultMemoryLimit() {
  auto from_env = MemoryLimitFromEnvironment();
  if (from_env.ok() && *from_env > 0) return *from_env;
  uint64_t physical = PhysicalMemoryBytes();
  if (physical == 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(static_cast<double>(physical) *
                               kDefaultMemoryFraction);
}

StatusOr<uint64_t> ParseMemorySize(std::string_view text) {
  auto bad = [&text](std::string_view why) {
    return InvalidArgumentError(
        fmt::format("'{}' is not a memory size ({}); expected bytes or a "
                    "number with K, M, G or T, e.g. 512M, 4G, 1.5GiB",
                    text, why));
  };
  size_t i = 0;
  while (
      i < text.size() &&
      (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  std::string number(text.substr(0, i));
  if (number.empty() || number == "." ||
      number.find('.') != number.rfind('.')) {
    return bad("no number");
  }
  std::string unit;
  for (char c : text.substr(i)) {
    if (c == ' ') continue;
    unit.push_back(
        static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  if (unit.size() > 1 && (unit.ends_with("IB") || unit.ends_with("B"))) {
    unit.resize(unit.ends_with("IB") ? unit.size() - 2 : unit.size() - 1);
  }
  double scale;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K") {
    scale = 1024.0;
  } else if (unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return bad("unknown unit");
  }
  std::optional<double> value = ParseDouble(number);
  if (!value) return bad("no number");
  double bytes = *value * scale;
  if (!std::isfinite(bytes) || bytes >= 1.8e19) return bad("too large");
  if (bytes < 1) return bad("must be more than zero");
  return static_cast<uint64_t>(bytes);
}

std::string FormatMemorySize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  std::string text = fmt::format("{:.1f}", value);
  if (text.ends_with(".0")) text.resize(text.size() - 2);
  return text + " " + kUnits[unit];
}

}  // namespace mi
