// Clusters of ranks (model_inspector/cluster.h, docs/design/clusters.md):
// rank discovery, the per-rank reduction through an ordinary Session,
// parallel reading, summary files, and the analyses over merged summaries
// (src/analysis/cluster).

#include "model_inspector/cluster.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/cluster/cluster_analysis.h"
#include "analysis/cluster/rank_reduce.h"
#include "base/atomic_file.h"
#include "base/mapped_file.h"
#include "base/strings.h"
#include "encoders/json_encoder.h"
#include "importers/ascend_db/ascend_db_importer.h"
#include "importers/common/json_place.h"
#include "importers/common/torch_npu_rank.h"
#include "io/chunk_reader.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSummarySchema = "model-inspector/cluster-summary/1";

bool IsIgnoredDirectory(const fs::path& p) {
  std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name == "node_modules" ||
         name == "model-inspector-export";
}

// The first `limit` decompressed bytes of a file ("" when unreadable).
std::string Head(const std::string& path, size_t limit) {
  auto reader = io::ChunkReader::Open(path, 256 << 10);
  if (!reader.ok()) return "";
  std::string out;
  while (out.size() < limit) {
    auto chunk = (*reader)->Next();
    if (!chunk.ok() || chunk->empty()) break;
    out.append(chunk->data(), std::min(chunk->size(), limit - out.size()));
  }
  return out;
}

// The JSON value (object) that follows `"key":` in `text`, by brace
// matching (strings respected); empty when absent or cut off.
std::string ObjectAfterKey(std::string_view text, std::string_view key) {
  size_t k = text.find("\"" + std::string(key) + "\"");
  if (k == std::string_view::npos) return "";
  size_t open = text.find_first_of("{[", k + key.size() + 2);
  if (open == std::string_view::npos) return "";
  int depth = 0;
  bool in_string = false;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return std::string(text.substr(open, i - open + 1));
    }
  }
  return "";
}

std::optional<int32_t> RankFromFileName(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  static const std::regex kRank(R"((?:^|[^a-z])rank[-_]?(\d+))",
                                std::regex::icase);
  static const std::regex kTrailing(R"(_(\d+)\.)");
  std::smatch m;
  if (std::regex_search(name, m, kRank) ||
      std::regex_search(name, m, kTrailing)) {
    return ParseInteger<int32_t>(m.str(1));
  }
  return std::nullopt;
}

// torch_npu's DB export: RANK_DEVICE_MAP(rankId, deviceId), read by the
// DB importer's own reader (read-only, immutable).
std::optional<int32_t> RankFromDb(const std::string& path) {
  StatusOr<importers::DbRankDevice> read =
      importers::ReadAscendDbRankDevice(path);
  if (!read.ok() || read->rank < 0) return std::nullopt;
  return read->rank;
}

// A torch_npu rank folder: its rank from profiler_info_N.json (rank_id),
// else the DB export's RANK_DEVICE_MAP; world size from
// profiler_metadata.json's distributed_args.
void ReadAscendRank(const fs::path& dir, ClusterRankInput* in) {
  // profiler_info_<rank>.json, read as the importers read it.
  if (int32_t rank = importers::ReadTorchNpuRank(dir.string()); rank >= 0) {
    in->rank = rank;
    in->rank_from = "profiler_info";
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "profiler_metadata.json") {
      std::ifstream f(e.path());
      nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
      if (j.is_object() && j.contains("distributed_args") &&
          j["distributed_args"].is_object()) {
        const auto& d = j["distributed_args"];
        if (d.contains("world_size") && d["world_size"].is_number_integer()) {
          in->world_size = d["world_size"].get<int32_t>();
        }
      }
    }
  }
  if (in->rank >= 0) return;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 2) it.disable_recursion_pending();
    const std::string name = it->path().filename().string();
    if (name.starts_with("ascend_pytorch_profiler") && name.ends_with(".db")) {
      if (auto r = RankFromDb(it->path().string())) {
        in->rank = *r;
        in->rank_from = "RANK_DEVICE_MAP";
        return;
      }
    }
  }
}

// An msprof PROF_* folder: the device id of its device_N folder.
void ReadMsprofRank(const fs::path& dir, ClusterRankInput* in) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.starts_with("device_")) {
      if (auto d = ParseInteger<int32_t>(std::string_view(name).substr(7))) {
        in->rank = *d;
        in->rank_from = "msprof device";
        return;
      }
    }
  }
}

// A Kineto trace: distributedInfo.rank / world_size and the device name
// from the file's head (Kineto writes them before the events).
bool ReadKinetoRank(const std::string& path, ClusterRankInput* in) {
  const std::string head = Head(path, 1 << 20);
  if (head.find("\"traceEvents\"") == std::string::npos &&
      head.find("\"schemaVersion\"") == std::string::npos) {
    return false;
  }
  const std::string info = ObjectAfterKey(head, "distributedInfo");
  if (!info.empty()) {
    nlohmann::json j = nlohmann::json::parse(info, nullptr, false);
    if (j.is_object() && j.contains("rank") && j["rank"].is_number_integer()) {
      in->rank = j["rank"].get<int32_t>();
      in->rank_from = "distributedInfo";
      if (j.contains("world_size") && j["world_size"].is_number_integer()) {
        in->world_size = j["world_size"].get<int32_t>();
      }
    }
  }
  const std::string props = ObjectAfterKey(head, "deviceProperties");
  if (!props.empty()) {
    nlohmann::json j = nlohmann::json::parse(props, nullptr, false);
    if (j.is_array() && !j.empty() && j[0].is_object() &&
        j[0].contains("name") && j[0]["name"].is_string()) {
      in->device_name = j[0]["name"].get<std::string>();
    }
  }
  return true;
}

bool IsKinetoName(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

}  // namespace

bool IsClusterSummaryFile(const std::string& path) {
  const std::string head = Head(path, 4096);
  const size_t k = head.find("\"schema\"");
  return k != std::string::npos &&
         head.find(kSummarySchema, k) != std::string::npos &&
         head.find(kSummarySchema, k) < k + 64;
}

StatusOr<ClusterInputs> DiscoverClusterRanks(
    const std::vector<std::string>& paths) {
  ClusterInputs out;
  std::vector<ClusterRankInput> found;
  std::vector<std::string> unranked;
  auto add_file = [&](const std::string& path) {
    if (IsClusterSummaryFile(path)) {
      out.summary_files.push_back(path);
      return;
    }
    const std::string name = fs::path(path).filename().string();
    if (!IsKinetoName(name)) return;
    ClusterRankInput in;
    if (!ReadKinetoRank(path, &in)) return;
    in.files = {path};
    if (in.rank < 0) {
      if (auto r = RankFromFileName(path)) {
        in.rank = *r;
        in.rank_from = "file name";
      }
    }
    if (in.rank < 0) {
      unranked.push_back(path);
      return;
    }
    found.push_back(std::move(in));
  };
  auto add_folder = [&](const fs::path& dir, bool ascend) {
    ClusterRankInput in;
    in.files = {dir.string()};
    if (ascend) {
      ReadAscendRank(dir, &in);
    } else {
      ReadMsprofRank(dir, &in);
    }
    if (in.rank < 0) {
      if (auto r = RankFromFileName(dir.filename().string() + ".")) {
        in.rank = *r;
        in.rank_from = "file name";
      }
    }
    if (in.rank < 0) {
      unranked.push_back(dir.string());
      return;
    }
    found.push_back(std::move(in));
  };
  auto is_ascend = [](const fs::path& p) {
    const std::string n = p.filename().string();
    return n.ends_with("_ascend_pt") || n.ends_with("_ascend_ms");
  };
  auto is_prof = [](const fs::path& p) {
    return p.filename().string().starts_with("PROF_");
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      return NotFoundError(path + ": no such file or directory");
    }
    if (!fs::is_directory(st)) {
      add_file(path);
      continue;
    }
    const fs::path root(path);
    if (is_ascend(fs::weakly_canonical(root))) {
      add_folder(root, true);
      continue;
    }
    if (is_prof(fs::weakly_canonical(root))) {
      add_folder(root, false);
      continue;
    }
    std::vector<fs::path> entries;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory()) {
        if (IsIgnoredDirectory(it->path())) {
          it.disable_recursion_pending();
          continue;
        }
        if (is_ascend(it->path()) || is_prof(it->path())) {
          entries.push_back(it->path());
          it.disable_recursion_pending();
          continue;
        }
        if (it.depth() > 4) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file()) entries.push_back(it->path());
    }
    if (ec) return IoError(path + ": cannot list directory: " + ec.message());
    std::sort(entries.begin(), entries.end());
    for (const fs::path& e : entries) {
      if (fs::is_directory(e)) {
        add_folder(e, is_ascend(e));
      } else {
        add_file(e.string());
      }
    }
  }
  std::sort(found.begin(), found.end(),
            [](const ClusterRankInput& a, const ClusterRankInput& b) {
              return a.rank < b.rank;
            });
  for (size_t k = 1; k < found.size(); ++k) {
    if (found[k].rank == found[k - 1].rank) {
      return InvalidArgumentError(fmt::format(
          "rank {} is claimed by two inputs: {} ({}) and {} ({})",
          found[k].rank, found[k - 1].files.front(), found[k - 1].rank_from,
          found[k].files.front(), found[k].rank_from));
    }
  }
  if (!unranked.empty()) {
    return InvalidArgumentError(fmt::format(
        "{}: cannot tell which rank this profile is (expected "
        "profiler_info_N.json with rank_id, a DB export's RANK_DEVICE_MAP, "
        "Kineto's distributedInfo.rank, an msprof device_N folder, or "
        "rank-N / rankN / _N. in the file name)",
        unranked.front()));
  }
  if (found.empty() && out.summary_files.empty()) {
    std::string list;
    for (const auto& p : paths) list += (list.empty() ? "" : ", ") + p;
    return InvalidArgumentError(
        list +
        ": no rank profiles found (expected *_ascend_pt folders, PROF_* "
        "folders, PyTorch profiler traces, or rank summary files)");
  }
  out.ranks = std::move(found);
  return out;
}

ClusterSummary Session::ClusterRanks() const {
  ClusterSummary out;
  for (SourceId s : analysis::RankSources(impl_->trace)) {
    out.ranks.push_back(
        analysis::ReduceRank(impl_->model, impl_->trace, impl_->links, s));
  }
  for (ClusterRankSummary& r : out.ranks) {
    // The rank as the source says it: Kineto's distributedInfo, torch_npu's
    // profiler_info (or RANK_DEVICE_MAP) as the importer read it.
    if (r.rank_from.empty()) r.rank_from = "source";
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const ClusterRankSummary& a,
                      const ClusterRankSummary& b) { return a.rank < b.rank; });
  // msprof-analyze's cluster tables, whoever read them.
  const Trace& t = impl_->trace;
  for (const StepTraceRow& r : t.communication().step_trace) {
    if (t.str(r.type).empty()) continue;
    ClusterStepTraceRow x;
    x.step = std::string(t.str(r.step));
    x.type = std::string(t.str(r.type));
    x.ranks = r.ranks;
    x.figures = {
        r.computing_ns,  r.communication_not_overlapped_ns,
        r.overlapped_ns, r.communication_ns,
        r.free_ns,       r.stage_ns,
        r.bubble_ns,     r.communication_not_overlapped_excluding_receive_ns,
        r.preparing_ns};
    out.cluster_step_trace.push_back(std::move(x));
  }
  for (const ClusterCommunicationRow& r :
       t.communication().cluster_communication) {
    ClusterCommunicationOp x;
    x.group_ranks = r.group_ranks;
    x.step = std::string(t.str(r.step));
    x.op_name = std::string(t.str(r.op_name));
    x.group = std::string(t.str(r.group));
    x.rank = r.rank;
    x.start_ns = r.start_ns;
    x.elapse_ns = r.elapse_ns;
    x.transit_ns = r.transit_ns;
    x.wait_ns = r.wait_ns;
    x.synchronization_ns = r.synchronization_ns;
    x.idle_ns = r.idle_ns;
    out.cluster_communication.push_back(std::move(x));
  }
  return out;
}

bool Session::HasSeveralRanks() const {
  std::set<int32_t> ranks;
  for (SourceId s : analysis::RankSources(impl_->trace)) {
    const int32_t r = impl_->trace.source(s).rank;
    if (r >= 0) ranks.insert(r);
  }
  return ranks.size() >= 2;
}

StatusOr<ClusterSummary> ReduceClusterRank(const ClusterRankInput& input,
                                           const ClusterOptions& options) {
  OpenOptions open;
  open.paths = input.files;
  open.keep_going = true;
  open.calibrate_clocks = false;
  open.memory_limit = 0;  // the process's budget, shared by the readers
  auto session = Session::Open(open);
  if (!session.ok()) {
    return Status(
        session.status().code(),
        fmt::format("rank {}: {}", input.rank, session.status().message()));
  }
  ClusterSummary summary = (*session)->ClusterRanks();
  if (summary.ranks.size() == 1) {
    ClusterRankSummary& r = summary.ranks.front();
    if (r.rank >= 0 && r.rank != input.rank) {
      return InvalidArgumentError(fmt::format(
          "{}: discovery read rank {} ({}) but the profile says rank {}",
          input.files.front(), input.rank, input.rank_from, r.rank));
    }
    r.rank = input.rank;
    r.rank_from = input.rank_from;
    r.files = input.files;
    if (r.world_size < 0) r.world_size = input.world_size;
    if (r.chip.empty()) r.chip = input.device_name;
  } else if (summary.ranks.empty()) {
    return InvalidArgumentError(fmt::format(
        "rank {}: {}: no trace in the rank's files", input.rank,
        input.files.empty() ? std::string("?") : input.files.front()));
  }
  for (ClusterRankSummary& r : summary.ranks) {
    if (r.rank_from.empty()) r.rank_from = input.rank_from;
  }
  if (!options.rank_summaries_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.rank_summaries_dir, ec);
    if (ec) {
      return IoError(options.rank_summaries_dir +
                     ": cannot create directory: " + ec.message());
    }
    const std::string file = (fs::path(options.rank_summaries_dir) /
                              fmt::format("rank_{}.json", input.rank))
                                 .string();
    MI_RETURN_IF_ERROR(WriteFileAtomically(file, ClusterSummaryJson(summary)));
  }
  return summary;
}

Status MergeClusterSummaries(ClusterSummary& into, ClusterSummary&& from) {
  return analysis::MergeRankSummaries(into, std::move(from));
}

std::string ClusterSummaryJson(const ClusterSummary& summary) {
  std::string out;
  encoders::JsonResultWriter w(&out, /*pretty=*/false);
  WriteClusterSummary(w, summary);
  out.push_back('\n');
  return out;
}

namespace {

// Reading a summary back: every key Write() writes, null for absent.
class SummaryReader {
 public:
  explicit SummaryReader(std::string what) : what_(std::move(what)) {}

  Status Read(const nlohmann::json& j, ClusterSummary* out) {
    if (!j.is_object() || !j.contains("schema") ||
        j["schema"] != kSummarySchema) {
      Fail("", fmt::format("expected a rank summary with \"schema\": "
                           "\"{}\"",
                           kSummarySchema));
      return MalformedInputError(error_);
    }
    const auto& ranks = Arr(j, "ranks", "");
    for (size_t i = 0; i < ranks.size() && ok_; ++i) {
      out->ranks.push_back(Rank(ranks[i], fmt::format("ranks[{}]", i)));
    }
    const auto& st = Arr(j, "cluster_step_trace", "");
    for (size_t i = 0; i < st.size() && ok_; ++i) {
      const std::string p = fmt::format("cluster_step_trace[{}]", i);
      ClusterStepTraceRow r;
      r.step = Str(st[i], "step", p);
      r.type = Str(st[i], "type", p);
      r.ranks = Ints32(st[i], "ranks", p);
      r.figures = Figures(Obj(st[i], "figures", p), p + ".figures");
      out->cluster_step_trace.push_back(std::move(r));
    }
    const auto& cc = Arr(j, "cluster_communication", "");
    for (size_t i = 0; i < cc.size() && ok_; ++i) {
      const std::string p = fmt::format("cluster_communication[{}]", i);
      const auto& e = cc[i];
      ClusterCommunicationOp r;
      r.group_ranks = Ints32(e, "group_ranks", p);
      r.step = Str(e, "step", p);
      r.op_name = Str(e, "op_name", p);
      r.group = Str(e, "group", p);
      r.rank = static_cast<int32_t>(Int(e, "rank", p));
      r.start_ns = Int(e, "start_ns", p);
      r.elapse_ns = Int(e, "elapse_ns", p);
      r.transit_ns = Int(e, "transit_ns", p);
      r.wait_ns = Int(e, "wait_ns", p);
      r.synchronization_ns = Int(e, "synchronization_ns", p);
      r.idle_ns = Int(e, "idle_ns", p);
      out->cluster_communication.push_back(std::move(r));
    }
    return ok_ ? Status::Ok() : MalformedInputError(error_);
  }

 private:
  static const nlohmann::json& Empty() {
    static const nlohmann::json kEmpty = nlohmann::json::array();
    return kEmpty;
  }
  void Fail(const std::string& place, const std::string& what) {
    if (ok_) {
      ok_ = false;
      error_ = what_ + (place.empty() ? "" : ": " + place) + ": " + what;
    }
  }
  const nlohmann::json& Get(const nlohmann::json& o, const char* key,
                            const std::string& p) {
    if (!o.is_object() || !o.contains(key)) {
      Fail(p, fmt::format("expected the key \"{}\"", key));
      return Empty();
    }
    return o[key];
  }
  const nlohmann::json& Arr(const nlohmann::json& o, const char* key,
                            const std::string& p) {
    const auto& v = Get(o, key, p);
    if (!v.is_array()) {
      Fail(p, fmt::format("\"{}\": expected an array", key));
      return Empty();
    }
    return v;
  }
  const nlohmann::json& Obj(const nlohmann::json& o, const char* key,
                            const std::string& p) {
    const auto& v = Get(o, key, p);
    if (!v.is_object()) Fail(p, fmt::format("\"{}\": expected an object", key));
    return v;
  }
  std::string Str(const nlohmann::json& o, const char* key,
                  const std::string& p) {
    const auto& v = Get(o, key, p);
    if (!v.is_string()) {
      Fail(p, fmt::format("\"{}\": expected a string", key));
      return "";
    }
    return v.get<std::string>();
  }
  int64_t Int(const nlohmann::json& o, const char* key, const std::string& p) {
    const auto& v = Get(o, key, p);
    if (v.is_null()) return -1;
    if (!v.is_number_integer()) {
      Fail(p, fmt::format("\"{}\": expected an integer or null", key));
      return -1;
    }
    return v.get<int64_t>();
  }
  double Dbl(const nlohmann::json& o, const char* key, const std::string& p) {
    const auto& v = Get(o, key, p);
    if (v.is_null()) return -1;
    if (!v.is_number()) {
      Fail(p, fmt::format("\"{}\": expected a number or null", key));
      return -1;
    }
    return v.get<double>();
  }
  bool Bool(const nlohmann::json& o, const char* key, const std::string& p) {
    const auto& v = Get(o, key, p);
    if (!v.is_boolean()) {
      Fail(p, fmt::format("\"{}\": expected true or false", key));
      return false;
    }
    return v.get<bool>();
  }
  std::vector<std::string> Strs(const nlohmann::json& o, const char* key,
                                const std::string& p) {
    std::vector<std::string> out;
    for (const auto& v : Arr(o, key, p)) {
      if (!v.is_string()) {
        Fail(p, fmt::format("\"{}\": expected strings", key));
        break;
      }
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  std::vector<int32_t> Ints32(const nlohmann::json& o, const char* key,
                              const std::string& p) {
    std::vector<int32_t> out;
    for (const auto& v : Arr(o, key, p)) {
      if (!v.is_number_integer()) {
        Fail(p, fmt::format("\"{}\": expected integers", key));
        break;
      }
      out.push_back(v.get<int32_t>());
    }
    return out;
  }
  ClusterStepTraceFigures Figures(const nlohmann::json& o,
                                  const std::string& p) {
    ClusterStepTraceFigures f;
    f.computing_ns = Int(o, "computing_ns", p);
    f.communication_not_overlapped_ns =
        Int(o, "communication_not_overlapped_ns", p);
    f.overlapped_ns = Int(o, "overlapped_ns", p);
    f.communication_ns = Int(o, "communication_ns", p);
    f.free_ns = Int(o, "free_ns", p);
    f.stage_ns = Int(o, "stage_ns", p);
    f.bubble_ns = Int(o, "bubble_ns", p);
    f.communication_not_overlapped_excluding_receive_ns =
        Int(o, "communication_not_overlapped_excluding_receive_ns", p);
    f.preparing_ns = Int(o, "preparing_ns", p);
    return f;
  }
  ClusterRankSummary Rank(const nlohmann::json& e, const std::string& p) {
    ClusterRankSummary r;
    r.rank = static_cast<int32_t>(Int(e, "rank", p));
    if (r.rank < 0) Fail(p, "\"rank\": expected a rank (0 or more)");
    r.rank_from = Str(e, "rank_from", p);
    r.world_size = static_cast<int32_t>(Int(e, "world_size", p));
    r.host = Str(e, "host", p);
    r.devices = Strs(e, "devices", p);
    r.files = Strs(e, "files", p);
    r.chip = Str(e, "chip", p);
    const auto& groups = Arr(e, "process_groups", p);
    for (size_t i = 0; i < groups.size() && ok_; ++i) {
      const std::string q = fmt::format("{}.process_groups[{}]", p, i);
      ClusterProcessGroup g;
      g.name = Str(groups[i], "name", q);
      g.long_name = Str(groups[i], "long_name", q);
      g.description = Str(groups[i], "description", q);
      g.global_ranks = Ints32(groups[i], "global_ranks", q);
      g.group_rank = static_cast<int32_t>(Int(groups[i], "group_rank", q));
      r.process_groups.push_back(std::move(g));
    }
    const auto& steps = Arr(e, "steps", p);
    for (size_t i = 0; i < steps.size() && ok_; ++i) {
      const std::string q = fmt::format("{}.steps[{}]", p, i);
      const auto& s = steps[i];
      ClusterRankStep st;
      st.step = Int(s, "step", q);
      st.label = Str(s, "label", q);
      st.start_ns = Int(s, "start_ns", q);
      st.end_ns = Int(s, "end_ns", q);
      st.wall_ns = Int(s, "wall_ns", q);
      st.compute_ns = Int(s, "compute_ns", q);
      st.communication_ns = Int(s, "communication_ns", q);
      st.exposed_communication_ns = Int(s, "exposed_communication_ns", q);
      st.overlapped_communication_ns = Int(s, "overlapped_communication_ns", q);
      st.idle_ns = Int(s, "idle_ns", q);
      st.host_bound_ns = Int(s, "host_bound_ns", q);
      st.data_loading_ns = Int(s, "data_loading_ns", q);
      st.first_device_start_ns = Int(s, "first_device_start_ns", q);
      for (const auto& o : Arr(s, "op_types", q)) {
        st.op_types.push_back(
            {Str(o, "op_type", q), Int(o, "time_ns", q), Int(o, "count", q)});
      }
      for (const auto& n : Arr(s, "top_nodes", q)) {
        ClusterNodeTime nt;
        nt.name = Str(n, "name", q);
        nt.op_type = Str(n, "op_type", q);
        nt.level = Str(n, "level", q);
        nt.node = Int(n, "node", q);
        nt.time_ns = Int(n, "time_ns", q);
        nt.count = Int(n, "count", q);
        st.top_nodes.push_back(std::move(nt));
      }
      const auto& trace = Get(s, "step_trace", q);
      if (trace.is_object()) {
        st.has_step_trace = true;
        st.step_trace = Figures(trace, q + ".step_trace");
      }
      r.steps.push_back(std::move(st));
    }
    const auto& colls = Arr(e, "collectives", p);
    for (size_t i = 0; i < colls.size() && ok_; ++i) {
      const std::string q = fmt::format("{}.collectives[{}]", p, i);
      const auto& c = colls[i];
      ClusterRankCollective x;
      x.name = Str(c, "name", q);
      x.type = Str(c, "type", q);
      x.group = Str(c, "group", q);
      x.group_size = static_cast<int32_t>(Int(c, "group_size", q));
      x.sequence = Int(c, "sequence", q);
      x.step = Int(c, "step", q);
      x.step_label = Str(c, "step_label", q);
      x.start_ns = Int(c, "start_ns", q);
      x.end_ns = Int(c, "end_ns", q);
      x.bytes = Int(c, "bytes", q);
      x.in_elements = Int(c, "in_elements", q);
      x.out_elements = Int(c, "out_elements", q);
      x.dtype = Str(c, "dtype", q);
      x.algorithm = Str(c, "algorithm", q);
      x.protocol = Str(c, "protocol", q);
      x.transit_ns = Int(c, "transit_ns", q);
      x.wait_ns = Int(c, "wait_ns", q);
      x.synchronization_ns = Int(c, "synchronization_ns", q);
      x.idle_ns = Int(c, "idle_ns", q);
      x.overlapped_ns = Int(c, "overlapped_ns", q);
      x.task = Int(c, "task", q);
      x.issued_by = Str(c, "issued_by", q);
      x.node = Int(c, "node", q);
      x.node_name = Str(c, "node_name", q);
      x.node_level = Str(c, "node_level", q);
      r.collectives.push_back(std::move(x));
    }
    for (const auto& b : Arr(e, "bandwidth", p)) {
      ClusterBandwidthRow x;
      x.step = Str(b, "step", p);
      x.op_name = Str(b, "op_name", p);
      x.group = Str(b, "group", p);
      x.p2p = Bool(b, "p2p", p);
      x.transport = Str(b, "transport", p);
      x.size_bytes = Int(b, "size_bytes", p);
      x.transit_ns = Int(b, "transit_ns", p);
      x.bandwidth_gbps = Dbl(b, "bandwidth_gbps", p);
      r.bandwidth.push_back(std::move(x));
    }
    for (const auto& l : Arr(e, "links", p)) {
      ClusterLinkRow x;
      x.step = Str(l, "step", p);
      x.statistic = Str(l, "statistic", p);
      x.group = Str(l, "group", p);
      x.p2p = Bool(l, "p2p", p);
      x.src_rank = static_cast<int32_t>(Int(l, "src_rank", p));
      x.dst_rank = static_cast<int32_t>(Int(l, "dst_rank", p));
      x.transport = Str(l, "transport", p);
      x.size_bytes = Int(l, "size_bytes", p);
      x.transit_ns = Int(l, "transit_ns", p);
      x.bandwidth_gbps = Dbl(l, "bandwidth_gbps", p);
      x.op_name = Str(l, "op_name", p);
      r.links.push_back(std::move(x));
    }
    return r;
  }

  std::string what_;
  bool ok_ = true;
  std::string error_;
};

}  // namespace

StatusOr<ClusterSummary> ReadClusterSummary(const std::string& path) {
  StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return NotFoundError(path + ": cannot open the rank summary");
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) {
    return MalformedInputError(fmt::format(
        "{}:{}: not valid JSON; expected a rank summary written by `cluster "
        "reduce`",
        path, importers::JsonSyntaxErrorPlace(*text)));
  }
  ClusterSummary out;
  SummaryReader reader(path);
  MI_RETURN_IF_ERROR(reader.Read(j, &out));
  std::set<int32_t> seen;
  for (const auto& r : out.ranks) {
    if (!seen.insert(r.rank).second) {
      return MalformedInputError(
          fmt::format("{}: rank {} is in the summary twice", path, r.rank));
    }
  }
  return out;
}

StatusOr<std::vector<LinkPeak>> ReadLinkPeaks(const std::string& path) {
  StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    return NotFoundError(path + ": cannot open the link-peaks file");
  }
  if (!nlohmann::json::accept(*text)) {
    return InvalidArgumentError(fmt::format(
        "{}:{}: not valid JSON; expected an object with a \"link_peaks\" "
        "array",
        path, importers::JsonSyntaxErrorPlace(*text)));
  }
  return analysis::ParseLinkPeaks(*text, path);
}

std::vector<LinkPeak> BuiltinLinkPeaks() {
  auto peaks = analysis::ParseLinkPeaks(analysis::BuiltinLinkPeaksJson(),
                                        "link_peaks.json");
  return peaks.ok() ? std::move(*peaks) : std::vector<LinkPeak>{};
}

StatusOr<ClusterReport> AnalyzeCluster(const ClusterSummary& summary,
                                       const ClusterAnalysisOptions& options) {
  if (summary.ranks.empty()) {
    return InvalidArgumentError("the cluster has no ranks to analyse");
  }
  return analysis::AnalyzeClusterSummary(summary, options);
}

StatusOr<ClusterReport> OpenCluster(const ClusterOptions& options) {
  MI_ASSIGN_OR_RETURN(ClusterInputs inputs,
                      DiscoverClusterRanks(options.paths));
  ClusterAnalysisOptions analysis = options.analysis;
  if (!options.link_peaks_file.empty()) {
    MI_ASSIGN_OR_RETURN(analysis.link_peaks,
                        ReadLinkPeaks(options.link_peaks_file));
  }
  ClusterSummary merged;
  for (const std::string& f : inputs.summary_files) {
    MI_ASSIGN_OR_RETURN(ClusterSummary s, ReadClusterSummary(f));
    MI_RETURN_IF_ERROR(MergeClusterSummaries(merged, std::move(s)));
  }
  // Ranks in parallel: each worker opens, reduces and closes one rank at
  // a time, so at most `jobs` ranks' events are in memory.
  const size_t n = inputs.ranks.size();
  unsigned jobs = options.jobs
                      ? options.jobs
                      : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, std::max<size_t>(n, 1)));
  std::vector<std::optional<StatusOr<ClusterSummary>>> results(n);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex progress_mutex;
  auto worker = [&] {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= n || failed.load()) return;
      results[i] = ReduceClusterRank(inputs.ranks[i], options);
      if (!results[i]->ok()) failed.store(true);
      const uint64_t d = ++done;
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        options.progress(fmt::format("rank {}", inputs.ranks[i].rank), d, n);
      }
    }
  };
  if (jobs <= 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (unsigned k = 0; k < jobs; ++k) threads.emplace_back(worker);
    for (std::thread& t : threads) t.join();
  }
  for (size_t i = 0; i < n; ++i) {
    if (!results[i]) continue;
    if (!results[i]->ok()) return results[i]->status();
    MI_RETURN_IF_ERROR(MergeClusterSummaries(merged, std::move(**results[i])));
  }
  return AnalyzeCluster(merged, analysis);
}

}  // namespace mi
