#include "importers/common/ascend_task_type.h"

namespace mi::importers {
namespace {

char Lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// `needle` is lower case.
bool ContainsIgnoringCase(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && Lower(haystack[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

}  // namespace

bool IsAscendCommunicationType(std::string_view t) {
  return EqualsIgnoringCase(t, "HCCL") ||
         EqualsIgnoringCase(t, "COMMUNICATION");
}

TaskKind AscendTaskKind(std::string_view t) {
  static constexpr std::string_view kCompute[] = {
      "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV",
      "AI_CPU",  "DSA_SQE",        "FFTS",    "FFTS_PLUS"};
  for (std::string_view c : kCompute) {
    if (EqualsIgnoringCase(t, c)) return TaskKind::kCompute;
  }
  if ((t.size() > 7 && EqualsIgnoringCase(t.substr(0, 7), "KERNEL_")) ||
      IsAscendCommunicationType(t)) {
    return TaskKind::kCompute;
  }
  if (ContainsIgnoringCase(t, "memcpy") || ContainsIgnoringCase(t, "sdma") ||
      ContainsIgnoringCase(t, "dma") || ContainsIgnoringCase(t, "memset")) {
    return TaskKind::kDataMovement;
  }
  if (ContainsIgnoringCase(t, "notify") || ContainsIgnoringCase(t, "event") ||
      ContainsIgnoringCase(t, "write value") ||
      ContainsIgnoringCase(t, "wait") || ContainsIgnoringCase(t, "record") ||
      ContainsIgnoringCase(t, "barrier")) {
    return TaskKind::kSync;
  }
  return TaskKind::kOther;
}

}  // namespace mi::importers
