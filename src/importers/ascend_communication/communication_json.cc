// communication.json, communication_matrix.json, cluster_communication.json
// and profiler_metadata.json (README.md).

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "importers/ascend_communication/ascend_communication_importer.h"
#include "importers/common/collectives.h"
#include "importers/common/json_place.h"
#include "importers/common/protobuf_text.h"

namespace mi::importers {
namespace {

// In file order: rows are kept as written.
using Json = nlohmann::ordered_json;

constexpr std::string_view kTotalOpInfo = "Total Op Info";

// A JSON number (ms, MB) scaled to an int64 (ns, bytes); -1 when absent,
// not a number or out of range.
int64_t Scaled(const Json& object, std::string_view key, double scale) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return -1;
  double v = it->get<double>() * scale;
  if (!std::isfinite(v) || v < 0 || v >= 9.2e18) return -1;
  return std::llround(v);
}

double Number(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return -1;
  double v = it->get<double>();
  return std::isfinite(v) ? v : -1;
}

// "hcom_allReduce__538_0_1@14972622761537322538" -> name, hash.
std::pair<std::string_view, std::string_view> SplitOpKey(std::string_view key) {
  size_t at = key.rfind('@');
  if (at == std::string_view::npos) return {key, {}};
  return {key.substr(0, at), key.substr(at + 1)};
}

// "step50" -> "50"; "step" (no steps marked) -> "".
std::string_view StepId(std::string_view step_key) {
  return step_key.starts_with("step") ? step_key.substr(4) : step_key;
}

class CommunicationJsonReader {
 public:
  CommunicationJsonReader(ImportContext& ctx, const Json& doc)
      : ctx_(ctx),
        doc_(doc),
        trace_(*ctx.trace),
        strings_(trace_.strings()),
        source_(EnsureSource(ctx)) {}

  Status Read();

 private:
  enum class Kind : uint8_t { kCommunication, kMatrix, kCluster, kMetadata };

  Status Error(const std::string& place, std::string_view what) const {
    return MalformedInputError(
        fmt::format("{}: at {}: {}", ctx_.path, place, what));
  }
  StatusOr<Kind> KindOf() const;
  Status ReadCommunication();
  Status ReadMatrix();
  Status ReadCluster();
  Status ReadMetadata();
  void JoinOp(std::string_view step_key, std::string_view op_name,
              std::string_view group, const Json& time_info);
  void AddBandwidth(std::string_view step_key, std::string_view op_name,
                    std::string_view group, bool p2p, const Json& bandwidth);
  // Collective records of the source by name, built on first use.
  std::vector<size_t>* RecordsNamed(StringId name);
  bool RunIsStep(const CollectiveRecord& r, std::string_view step_id) const;
  StringId Intern(std::string_view s) { return strings_.Intern(s); }

  ImportContext& ctx_;
  const Json& doc_;
  Trace& trace_;
  StringPool& strings_;
  SourceId source_;
  bool indexed_ = false;
  std::unordered_map<uint32_t, std::vector<size_t>> by_name_;
};

StatusOr<CommunicationJsonReader::Kind> CommunicationJsonReader::KindOf()
    const {
  if (!doc_.is_object()) {
    return Error("the top level",
                 "expected a JSON object (torch_npu communication.json / "
                 "communication_matrix.json: {\"step<N>\": {\"p2p\": ..., "
                 "\"collective\": ...}}; msprof-analyze "
                 "cluster_communication.json: {\"(ranks)\": {\"step<N>\": "
                 "...}}; profiler_metadata.json)");
  }
  if (doc_.contains("ENV_VARIABLES") || doc_.contains("distributed_args") ||
      doc_.contains("parallel_group_info") ||
      FileNameOf(StripGzSuffix(ctx_.path)) == "profiler_metadata.json") {
    return Kind::kMetadata;
  }
  bool steps = !doc_.empty();
  for (const auto& [key, value] : doc_.items()) {
    if (!key.starts_with("step")) steps = false;
    if (!value.is_object()) {
      return Error("\"" + key + "\"",
                   "expected an object (the steps' or a group's ops)");
    }
  }
  if (!steps) return Kind::kCluster;
  // Per rank: an op holds "Communication Time Info", a matrix statistic
  // holds links "<src>-<dst>" with a "Transport Type".
  for (const auto& [step, kinds] : doc_.items()) {
    for (const auto& [kind, ops] : kinds.items()) {
      if (!ops.is_object()) continue;
      for (const auto& [op, value] : ops.items()) {
        if (!value.is_object()) continue;
        if (value.contains("Communication Time Info") ||
            value.contains("Communication Bandwidth Info")) {
          return Kind::kCommunication;
        }
        for (const auto& [link, figures] : value.items()) {
          if (figures.is_object() && figures.contains("Transport Type")) {
            return Kind::kMatrix;
          }
        }
      }
    }
  }
  // Nothing inside to tell by (no ops): the name decides.
  return FileNameOf(StripGzSuffix(ctx_.path)).find("matrix") !=
                 std::string_view::npos
             ? Kind::kMatrix
             : Kind::kCommunication;
}

Status CommunicationJsonReader::Read() {
  MI_ASSIGN_OR_RETURN(Kind kind, KindOf());
  switch (kind) {
    case Kind::kCommunication:
      return ReadCommunication();
    case Kind::kMatrix:
      return ReadMatrix();
    case Kind::kCluster:
      return ReadCluster();
    case Kind::kMetadata:
      return ReadMetadata();
  }
  return Status::Ok();
}

std::vector<size_t>* CommunicationJsonReader::RecordsNamed(StringId name) {
  if (!indexed_) {
    indexed_ = true;
    const auto& records = trace_.communication().collectives;
    for (size_t i = 0; i < records.size(); ++i) {
      if (records[i].source == source_) {
        by_name_[records[i].name.value()].push_back(i);
      }
    }
  }
  auto it = by_name_.find(name.value());
  return it == by_name_.end() ? nullptr : &it->second;
}

// The record's run is the step: torch_npu marks steps ProfilerStep#<id>.
bool CommunicationJsonReader::RunIsStep(const CollectiveRecord& r,
                                        std::string_view step_id) const {
  if (r.run < 0 || static_cast<size_t>(r.run) >= trace_.runs().size()) {
    return false;
  }
  std::string_view run = trace_.str(trace_.runs()[r.run].name);
  size_t hash = run.rfind('#');
  return hash != std::string_view::npos && run.substr(hash + 1) == step_id;
}

void CommunicationJsonReader::JoinOp(std::string_view step_key,
                                     std::string_view op_name,
                                     std::string_view group,
                                     const Json& time_info) {
  std::vector<CollectiveRecord>& records =
      trace_.mutable_communication().collectives;
  const StringId name = Intern(op_name);
  const std::string_view step_id = StepId(step_key);
  // The op's record: the one of the same name in that step, else the only
  // one of the name not joined yet.
  CollectiveRecord* record = nullptr;
  if (std::vector<size_t>* list = RecordsNamed(name)) {
    for (size_t i : *list) {
      if (records[i].step_label == StringPool::kEmpty &&
          RunIsStep(records[i], step_id)) {
        record = &records[i];
        break;
      }
    }
    if (record == nullptr) {
      size_t open = 0;
      for (size_t i : *list) {
        if (records[i].step_label == StringPool::kEmpty) {
          record = &records[i];
          ++open;
        }
      }
      if (open != 1) record = nullptr;
    }
  }
  const int64_t start = Scaled(time_info, "Start Timestamp(us)", 1e3);
  const int64_t elapse = Scaled(time_info, "Elapse Time(ms)", 1e6);
  if (record == nullptr) {
    // No timeline task (level of detail, or the file alone): the op from
    // the table only.
    CollectiveRecord r;
    r.source = source_;
    r.name = name;
    std::optional<HcclOpName> parsed = ParseHcclOpName(op_name);
    r.type = CollectiveTypeOfName(op_name);
    if (parsed) r.sequence = parsed->sequence;
    r.start_ns = std::max<int64_t>(start, 0);
    r.end_ns = r.start_ns + std::max<int64_t>(elapse, 0);
    records.push_back(r);
    record = &records.back();
    by_name_[name.value()].push_back(records.size() - 1);
  }
  record->step_label = Intern(step_key);
  if (!group.empty()) {
    record->group = Intern(group);
    // A group no metadata described: known by its hash only.
    SourceInfo& source = trace_.mutable_source(source_);
    bool known = false;
    for (const ProcessGroupInfo& g : source.process_groups) {
      known = known || g.name == record->group;
    }
    if (!known) {
      ProcessGroupInfo g;
      g.name = record->group;
      source.process_groups.push_back(std::move(g));
    }
  }
  record->transit_ns = Scaled(time_info, "Transit Time(ms)", 1e6);
  record->wait_ns = Scaled(time_info, "Wait Time(ms)", 1e6);
  record->synchronization_ns =
      Scaled(time_info, "Synchronization Time(ms)", 1e6);
  record->idle_ns = Scaled(time_info, "Idle Time(ms)", 1e6);
}

void CommunicationJsonReader::AddBandwidth(std::string_view step_key,
                                           std::string_view op_name,
                                           std::string_view group, bool p2p,
                                           const Json& bandwidth) {
  if (!bandwidth.is_object()) return;
  const StringId step = Intern(step_key);
  const StringId op = Intern(op_name);
  const StringId group_id = Intern(group);
  for (const auto& [transport, figures] : bandwidth.items()) {
    if (!figures.is_object()) continue;
    CommunicationBandwidthRow row;
    row.source = source_;
    row.step = step;
    row.op_name = op;
    row.group = group_id;
    row.p2p = p2p;
    row.transport = Intern(transport);
    row.size_bytes = Scaled(figures, "Transit Size(MB)", 1e6);
    row.transit_ns = Scaled(figures, "Transit Time(ms)", 1e6);
    row.bandwidth_gbps = Number(figures, "Bandwidth(GB/s)");
    row.large_packet_ratio = Number(figures, "Large Packet Ratio");
    trace_.mutable_communication().bandwidth.push_back(row);
  }
}

Status CommunicationJsonReader::ReadCommunication() {
  for (const auto& [step, kinds] : doc_.items()) {
    for (const auto& [kind, ops] : kinds.items()) {
      if (kind != "p2p" && kind != "collective") continue;
      if (!ops.is_object()) {
        return Error("\"" + step + "\".\"" + kind + "\"",
                     "expected an object of ops (\"<op name>@<group hash>\": "
                     "{\"Communication Time Info\": ..., \"Communication "
                     "Bandwidth Info\": ...})");
      }
      const bool p2p = kind == "p2p";
      for (const auto& [key, op] : ops.items()) {
        if (!op.is_object()) {
          return Error("\"" + step + "\".\"" + kind + "\".\"" + key + "\"",
                       "expected an object with \"Communication Time "
                       "Info\" and \"Communication Bandwidth Info\"");
        }
        auto [name, group] = SplitOpKey(key);
        auto time = op.find("Communication Time Info");
        if (name != kTotalOpInfo && time != op.end() && time->is_object()) {
          JoinOp(step, name, group, *time);
        }
        auto bandwidth = op.find("Communication Bandwidth Info");
        if (bandwidth != op.end()) {
          AddBandwidth(step, name, group, p2p, *bandwidth);
        }
      }
    }
  }
  return Status::Ok();
}

Status CommunicationJsonReader::ReadMatrix() {
  for (const auto& [step, kinds] : doc_.items()) {
    const StringId step_id = Intern(step);
    for (const auto& [kind, statistics] : kinds.items()) {
      if (kind != "p2p" && kind != "collective") continue;
      if (!statistics.is_object()) {
        return Error("\"" + step + "\".\"" + kind + "\"",
                     "expected an object of statistics (\"<type>-<stat>@"
                     "<group hash>\": {\"<src>-<dst>\": {...}})");
      }
      for (const auto& [key, links] : statistics.items()) {
        if (!links.is_object()) {
          return Error("\"" + step + "\".\"" + kind + "\".\"" + key + "\"",
                       "expected an object of links \"<src>-<dst>\"");
        }
        auto [statistic, group] = SplitOpKey(key);
        const StringId statistic_id = Intern(statistic);
        const StringId group_id = Intern(group);
        for (const auto& [link, figures] : links.items()) {
          if (!figures.is_object()) continue;
          CommunicationLinkRow row;
          row.source = source_;
          row.step = step_id;
          row.statistic = statistic_id;
          row.group = group_id;
          row.p2p = kind == "p2p";
          size_t dash = link.find('-');
          if (dash != std::string::npos) {
            auto src =
                ParseInteger<int32_t>(std::string_view(link).substr(0, dash));
            auto dst =
                ParseInteger<int32_t>(std::string_view(link).substr(dash + 1));
            if (src) row.src_rank = *src;
            if (dst) row.dst_rank = *dst;
          }
          auto transport = figures.find("Transport Type");
          if (transport != figures.end() && transport->is_string()) {
            row.transport = Intern(transport->get_ref<const std::string&>());
          }
          row.size_bytes = Scaled(figures, "Transit Size(MB)", 1e6);
          row.transit_ns = Scaled(figures, "Transit Time(ms)", 1e6);
          row.bandwidth_gbps = Number(figures, "Bandwidth(GB/s)");
          auto op = figures.find("Op Name");
          if (op != figures.end() && op->is_string()) {
            row.op_name = Intern(op->get_ref<const std::string&>());
          }
          trace_.mutable_communication().links.push_back(row);
        }
      }
    }
  }
  return Status::Ok();
}

Status CommunicationJsonReader::ReadCluster() {
  for (const auto& [group_key, steps] : doc_.items()) {
    std::vector<int32_t> group_ranks;
    if (group_key != "p2p") {
      std::optional<std::vector<int32_t>> ranks = ParseRankList(group_key);
      if (!ranks) {
        return Error("\"" + group_key + "\"",
                     "expected a group's ranks as msprof-analyze writes "
                     "them (\"(0, 1, 2, 3)\") or \"p2p\"");
      }
      group_ranks = std::move(*ranks);
    }
    for (const auto& [step, ops] : steps.items()) {
      if (!ops.is_object()) {
        return Error("\"" + group_key + "\".\"" + step + "\"",
                     "expected an object of ops (\"<op name>@<group hash>\": "
                     "{\"<rank>\": {...}})");
      }
      const StringId step_id = Intern(step);
      for (const auto& [key, per_rank] : ops.items()) {
        if (!per_rank.is_object()) {
          return Error(
              "\"" + group_key + "\".\"" + step + "\".\"" + key + "\"",
              "expected an object of ranks (\"<rank>\": {\"Communication "
              "Time Info\": ...})");
        }
        auto [name, group] = SplitOpKey(key);
        const StringId name_id = Intern(name);
        const StringId group_id = Intern(group);
        for (const auto& [rank_key, op] : per_rank.items()) {
          std::optional<int32_t> rank = ParseInteger<int32_t>(rank_key);
          if (!rank || *rank < 0 || !op.is_object()) {
            return Error("\"" + group_key + "\".\"" + step + "\".\"" + key +
                             "\".\"" + rank_key + "\"",
                         "expected a rank number holding the op's "
                         "\"Communication Time Info\"");
          }
          auto time = op.find("Communication Time Info");
          if (time == op.end() || !time->is_object()) continue;
          ClusterCommunicationRow row;
          row.source = source_;
          row.group_ranks = group_ranks;
          row.step = step_id;
          row.op_name = name_id;
          row.group = group_id;
          row.rank = *rank;
          row.start_ns = Scaled(*time, "Start Timestamp(us)", 1e3);
          row.elapse_ns = Scaled(*time, "Elapse Time(ms)", 1e6);
          row.transit_ns = Scaled(*time, "Transit Time(ms)", 1e6);
          row.wait_ns = Scaled(*time, "Wait Time(ms)", 1e6);
          row.synchronization_ns =
              Scaled(*time, "Synchronization Time(ms)", 1e6);
          row.idle_ns = Scaled(*time, "Idle Time(ms)", 1e6);
          trace_.mutable_communication().cluster_communication.push_back(
              std::move(row));
        }
      }
    }
  }
  return Status::Ok();
}

// distributed_args.world_size; parallel_group_info: {HCCL group name:
// {group_name, group_rank, global_ranks}}. Groups are named by
// msprof-analyze's hash of the HCCL name, as the op keys carry it.
Status CommunicationJsonReader::ReadMetadata() {
  SourceInfo& source = trace_.mutable_source(source_);
  auto args = doc_.find("distributed_args");
  if (args != doc_.end() && args->is_object()) {
    auto world = args->find("world_size");
    if (world != args->end() && world->is_number_integer()) {
      int64_t n = world->get<int64_t>();
      if (n > 0 && n <= INT32_MAX && source.world_size < 0) {
        source.world_size = static_cast<int32_t>(n);
      }
    }
  }
  auto groups = doc_.find("parallel_group_info");
  if (groups == doc_.end()) return Status::Ok();
  if (!groups->is_object()) {
    return Error("\"parallel_group_info\"",
                 "expected an object {\"<HCCL group name>\": {\"group_name\": "
                 "..., \"group_rank\": ..., \"global_ranks\": [...]}}");
  }
  for (const auto& [hccl_name, info] : groups->items()) {
    const std::string place = "\"parallel_group_info\".\"" + hccl_name + "\"";
    if (!info.is_object()) {
      return Error(place,
                   "expected an object with group_name, group_rank "
                   "and global_ranks");
    }
    ProcessGroupInfo g;
    g.name = Intern(std::to_string(HcclGroupHash(hccl_name)));
    g.long_name = Intern(hccl_name);
    auto name = info.find("group_name");
    if (name != info.end() && name->is_string()) {
      g.description = Intern(name->get_ref<const std::string&>());
    }
    auto rank = info.find("group_rank");
    if (rank != info.end() && rank->is_number_integer() &&
        rank->get<int64_t>() >= 0 && rank->get<int64_t>() <= INT32_MAX) {
      g.group_rank = static_cast<int32_t>(rank->get<int64_t>());
    }
    auto ranks = info.find("global_ranks");
    if (ranks != info.end()) {
      if (!ranks->is_array()) {
        return Error(place + ".\"global_ranks\"", "expected an array of ranks");
      }
      for (const Json& r : *ranks) {
        if (!r.is_number_integer() || r.get<int64_t>() < 0 ||
            r.get<int64_t>() > INT32_MAX) {
          return Error(place + ".\"global_ranks\"",
                       "expected non-negative integer ranks");
        }
        g.global_ranks.push_back(static_cast<int32_t>(r.get<int64_t>()));
      }
    }
    bool known = false;
    for (const ProcessGroupInfo& other : source.process_groups) {
      known = known || other.name == g.name;
    }
    if (!known) source.process_groups.push_back(std::move(g));
  }
  // Records read before (a timeline loaded first) get the full group hash.
  for (CollectiveRecord& r : trace_.mutable_communication().collectives) {
    if (r.source != source_) continue;
    std::optional<HcclOpName> op = ParseHcclOpName(trace_.str(r.name));
    if (!op || trace_.str(r.group) != op->group_tag) continue;
    StringId full = StringPool::kEmpty;
    int matches = 0;
    for (const ProcessGroupInfo& g : source.process_groups) {
      if (trace_.str(g.name).ends_with(op->group_tag)) {
        full = g.name;
        ++matches;
      }
    }
    if (matches == 1) r.group = full;
  }
  return Status::Ok();
}

}  // namespace

Status ImportAscendCommunicationFromBuffer(std::string_view text,
                                           ImportContext& ctx) {
  if (ctx.path.empty()) ctx.path = "<buffer>";
  if (Trim(text, kJsonWhitespace).empty()) {
    return MalformedInputError(
        ctx.path +
        ":1:1: empty file; expected torch_npu's communication.json / "
        "communication_matrix.json / profiler_metadata.json or "
        "msprof-analyze's cluster_communication.json");
  }
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    return MalformedInputError(fmt::format(
        "{}:{}: not valid JSON; expected torch_npu's communication.json / "
        "communication_matrix.json / profiler_metadata.json or "
        "msprof-analyze's cluster_communication.json",
        ctx.path, JsonSyntaxErrorPlace(text)));
  }
  CommunicationJsonReader reader(ctx, doc);
  MI_RETURN_IF_ERROR(reader.Read());
  SourceInfo& source = ctx.trace->mutable_source(ctx.source);
  if (source.dialect == StringPool::kEmpty) {
    source.dialect = ctx.trace->strings().Intern("ascend");
  }
  if (source.time_base == TimeBase::kUnknown) {
    source.time_base = TimeBase::kEpoch;
  }
  return Status::Ok();
}

}  // namespace mi::importers
