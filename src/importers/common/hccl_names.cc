#include "importers/common/hccl_names.h"

#include <string>

#include "base/strings.h"

namespace mi::importers {

uint64_t HcclGroupHash(std::string_view group_name) {
  uint32_t h29 = 0;
  uint32_t h131 = 0;
  for (char c : group_name) {
    const uint32_t byte = static_cast<unsigned char>(c);
    h29 = h29 * 29u + byte;
    h131 = h131 * 131u + byte;
  }
  return (uint64_t{h29} << 32) | h131;
}

bool IsHcclGroupHash(std::string_view group_name) {
  if (group_name.empty()) return false;
  for (char c : group_name) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string HcclGroupKey(std::string_view group_name) {
  if (group_name.empty() || IsHcclGroupHash(group_name)) {
    return std::string(group_name);
  }
  return std::to_string(HcclGroupHash(group_name));
}

HcclOpName ParseHcclOpName(std::string_view name) {
  HcclOpName out;
  if (!StartsWithIgnoringCase(name, "hcom_")) return out;
  std::string_view rest = name.substr(5);
  const size_t sep = rest.find("__");
  if (sep == std::string_view::npos) return out;
  out.collective = rest.substr(0, sep);
  rest = rest.substr(sep + 2);
  const size_t g_end = rest.find('_');
  if (g_end == std::string_view::npos) return out;
  out.group_suffix = rest.substr(0, g_end);
  rest = rest.substr(g_end + 1);
  std::string_view k = rest.substr(0, rest.find('_'));
  if (auto value = ParseInteger<int64_t>(k); value && *value >= 0) {
    out.sequence = *value;
  }
  return out;
}

CollectiveType HcclCollectiveType(std::string_view s) {
  if (StartsWithIgnoringCase(s, "hcom_")) s = s.substr(5);
  // The collective ends at the first '_' (op types end "_", names "__").
  s = s.substr(0, s.find('_'));
  std::string lower;
  lower.reserve(s.size());
  for (char c : s) {
    lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  // Longer names before their prefixes (reducescatter before reduce).
  if (lower.starts_with("allreduce")) return CollectiveType::kAllReduce;
  if (lower.starts_with("allgather")) return CollectiveType::kAllGather;
  if (lower.starts_with("reducescatter")) {
    return CollectiveType::kReduceScatter;
  }
  if (lower.starts_with("alltoall")) return CollectiveType::kAllToAll;
  if (lower.starts_with("broadcast")) return CollectiveType::kBroadcast;
  if (lower.starts_with("reduce")) return CollectiveType::kReduce;
  if (lower.starts_with("batchsendrecv") || lower.starts_with("send")) {
    return CollectiveType::kSend;
  }
  if (lower.starts_with("receive") || lower.starts_with("recv")) {
    return CollectiveType::kReceive;
  }
  if (lower.starts_with("barrier")) return CollectiveType::kBarrier;
  if (lower.starts_with("gather")) return CollectiveType::kGather;
  if (lower.starts_with("scatter")) return CollectiveType::kScatter;
  return CollectiveType::kUnknown;
}

int64_t HcclDataTypeBytes(std::string_view t) {
  struct Size {
    std::string_view name;
    int64_t bytes;
  };
  static constexpr Size kSizes[] = {
      {"INT8", 1},  {"UINT8", 1},  {"INT16", 2}, {"UINT16", 2},  {"FP16", 2},
      {"BFP16", 2}, {"BF16", 2},   {"INT32", 4}, {"UINT32", 4},  {"FP32", 4},
      {"INT64", 8}, {"UINT64", 8}, {"FP64", 8},  {"INT128", 16},
  };
  for (const Size& s : kSizes) {
    if (EqualsIgnoringCase(t, s.name)) return s.bytes;
  }
  return 0;
}

}  // namespace mi::importers
