#include "importers/common/collectives.h"

#include <algorithm>

#include "base/strings.h"

namespace mi::importers {
namespace {

// Lower case without '_' and ' ', at most 64 characters.
std::string Squash(std::string_view name) {
  std::string out;
  out.reserve(std::min<size_t>(name.size(), 64));
  for (char c : name) {
    if (c == '_' || c == ' ' || c == '-') continue;
    out.push_back(AsciiLower(c));
    if (out.size() == 64) break;
  }
  return out;
}

std::optional<int64_t> Digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  for (char c : s) {
    if (!IsAsciiDigit(c)) return std::nullopt;
  }
  return ParseInteger<int64_t>(s);
}

}  // namespace

CollectiveType CollectiveTypeOfName(std::string_view name) {
  if (name.starts_with("hcom_")) name.remove_prefix(5);
  const std::string s = Squash(name);
  // Longest names first: "reducescatter" holds "reduce" and "scatter",
  // "allgather" holds "gather", "alltoall(v)" holds "all".
  struct Entry {
    std::string_view key;
    CollectiveType type;
  };
  static constexpr Entry kEntries[] = {
      {"reducescatter", CollectiveType::kReduceScatter},
      {"allreduce", CollectiveType::kAllReduce},
      {"allgather", CollectiveType::kAllGather},
      {"alltoall", CollectiveType::kAllToAll},
      {"broadcast", CollectiveType::kBroadcast},
      {"barrier", CollectiveType::kBarrier},
      {"batchsendrecv", CollectiveType::kSend},
      {"sendrecv", CollectiveType::kSend},
      {"receive", CollectiveType::kReceive},
      {"recv", CollectiveType::kReceive},
      {"send", CollectiveType::kSend},
      {"reduce", CollectiveType::kReduce},
      {"gather", CollectiveType::kGather},
      {"scatter", CollectiveType::kScatter},
  };
  for (const Entry& e : kEntries) {
    if (s.find(e.key) != std::string::npos) return e.type;
  }
  return CollectiveType::kUnknown;
}

std::string_view CollectiveTypeName(CollectiveType type) {
  switch (type) {
    case CollectiveType::kUnknown:
      return "unknown";
    case CollectiveType::kAllReduce:
      return "all_reduce";
    case CollectiveType::kAllGather:
      return "all_gather";
    case CollectiveType::kReduceScatter:
      return "reduce_scatter";
    case CollectiveType::kBroadcast:
      return "broadcast";
    case CollectiveType::kReduce:
      return "reduce";
    case CollectiveType::kAllToAll:
      return "all_to_all";
    case CollectiveType::kSend:
      return "send";
    case CollectiveType::kReceive:
      return "receive";
    case CollectiveType::kBarrier:
      return "barrier";
    case CollectiveType::kGather:
      return "gather";
    case CollectiveType::kScatter:
      return "scatter";
  }
  return "unknown";
}

std::optional<HcclOpName> ParseHcclOpName(std::string_view name) {
  if (!name.starts_with("hcom_")) return std::nullopt;
  std::string_view rest = name.substr(5);
  size_t sep = rest.find("__");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  HcclOpName out;
  out.collective = rest.substr(0, sep);
  std::vector<std::string_view> parts = Split(rest.substr(sep + 2), '_');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  if (!Digits(parts[0])) return std::nullopt;
  std::optional<int64_t> k = Digits(parts[1]);
  if (!k) return std::nullopt;
  out.group_tag = parts[0];
  out.sequence = *k;
  if (parts.size() == 3) {
    std::optional<int64_t> m = Digits(parts[2]);
    if (!m) return std::nullopt;
    out.trailer = *m;
  }
  return out;
}

uint64_t HcclGroupHash(std::string_view group_name) {
  uint32_t high = 0;
  uint32_t low = 0;
  for (char c : group_name) {
    const uint32_t byte = static_cast<unsigned char>(c);
    high = high * 29u + byte;
    low = low * 131u + byte;
  }
  return (static_cast<uint64_t>(high) << 32) | low;
}

bool IsNcclKernelName(std::string_view name) {
  return name.size() > 4 && name.starts_with("nccl") && name[4] != ':';
}

NcclKernelName ParseNcclKernelName(std::string_view name) {
  NcclKernelName out;
  std::string_view s = name.substr(0, name.find('('));
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (s.starts_with(prefix)) {
      s.remove_prefix(prefix.size());
      std::vector<std::string_view> parts = Split(s, '_');
      if (!parts.empty()) out.collective = parts[0];
      if (parts.size() > 1) out.algorithm = parts[1];
      if (parts.size() > 2) out.protocol = parts[2];
      return out;
    }
  }
  return out;
}

int32_t DtypeSize(std::string_view dtype) {
  const std::string s = Squash(dtype);
  struct Entry {
    std::string_view key;
    int32_t size;
  };
  // Kineto writes c10's ScalarType names, HCCL its enum names.
  static constexpr Entry kEntries[] = {
      {"bfloat16", 2},       {"bfp16", 2},
      {"half", 2},           {"float16", 2},
      {"fp16", 2},           {"float", 4},
      {"float32", 4},        {"fp32", 4},
      {"double", 8},         {"float64", 8},
      {"fp64", 8},           {"char", 1},
      {"byte", 1},           {"bool", 1},
      {"int8", 1},           {"uint8", 1},
      {"short", 2},          {"int16", 2},
      {"uint16", 2},         {"int", 4},
      {"int32", 4},          {"uint32", 4},
      {"long", 8},           {"int64", 8},
      {"uint64", 8},         {"int128", 16},
      {"float8e4m3fn", 1},   {"float8e5m2", 1},
      {"complexfloat", 8},   {"complexdouble", 16},
      {"float8e4m3fnuz", 1}, {"float8e5m2fnuz", 1},
  };
  for (const Entry& e : kEntries) {
    if (s == e.key) return e.size;
  }
  return -1;
}

int64_t CollectiveBytes(int64_t in_elements, int64_t out_elements,
                        int32_t dtype_size) {
  const int64_t n = std::max(in_elements, out_elements);
  if (n < 0 || dtype_size <= 0) return -1;
  int64_t bytes;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size), &bytes)) {
    return -1;
  }
  return bytes;
}

std::optional<std::vector<int32_t>> ParseRankList(std::string_view text,
                                                  size_t max_items) {
  text = Trim(text, " \t");
  if (!text.empty() && (text.front() == '[' || text.front() == '(')) {
    const char close = text.front() == '[' ? ']' : ')';
    if (text.size() < 2 || text.back() != close) return std::nullopt;
    text = text.substr(1, text.size() - 2);
  }
  std::vector<int32_t> ranks;
  if (Trim(text, " \t").empty()) return ranks;
  for (std::string_view item : Split(text, ',')) {
    item = Trim(item, " \t");
    std::optional<int64_t> v = Digits(item);
    if (!v || *v > INT32_MAX || ranks.size() >= max_items) return std::nullopt;
    ranks.push_back(static_cast<int32_t>(*v));
  }
  return ranks;
}

size_t AddHcclCollectiveRecords(Trace& trace, SourceId source,
                                size_t first_task) {
  StringPool& strings = trace.strings();
  const StringId communication = strings.Intern(kTaskClassCommunication);
  const SourceInfo& info = trace.source(source);
  std::vector<CollectiveRecord>& records =
      trace.mutable_communication().collectives;
  size_t added = 0;
  for (size_t i = first_task; i < trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    if (trace.task_class(t) != communication ||
        trace.task_kind(t) != TaskKind::kCompute ||
        trace.task_source(t) != source) {
      continue;
    }
    std::string_view name = trace.str(trace.task_name(t));
    std::optional<HcclOpName> op = ParseHcclOpName(name);
    if (!op) continue;
    CollectiveRecord r;
    r.source = source;
    r.task = t;
    r.name = trace.task_name(t);
    r.type = CollectiveTypeOfName(op->collective);
    r.sequence = op->sequence;
    r.start_ns = trace.task_start_ns(t);
    r.end_ns = trace.task_end_ns(t);
    // The full hash when a process group of the source ends in the tag.
    r.group = strings.Intern(op->group_tag);
    StringId full = StringPool::kEmpty;
    for (const ProcessGroupInfo& g : info.process_groups) {
      if (trace.str(g.name).ends_with(op->group_tag)) {
        if (full != StringPool::kEmpty && full != g.name) {
          full = StringPool::kEmpty;  // two groups share the tag
          break;
        }
        full = g.name;
      }
    }
    if (full != StringPool::kEmpty) r.group = full;
    for (const ProcessGroupInfo& g : info.process_groups) {
      if (g.name == r.group && !g.global_ranks.empty()) {
        r.group_size = static_cast<int32_t>(g.global_ranks.size());
      }
    }
    records.push_back(r);
    ++added;
  }
  return added;
}

void SetCollectiveRuns(Trace& trace, SourceId source, size_t first_record) {
  std::vector<CollectiveRecord>& records =
      trace.mutable_communication().collectives;
  for (size_t i = first_record; i < records.size(); ++i) {
    CollectiveRecord& r = records[i];
    if (r.source != source || !r.task.valid()) continue;
    r.run = trace.task_run(r.task);
  }
}

}  // namespace mi::importers
