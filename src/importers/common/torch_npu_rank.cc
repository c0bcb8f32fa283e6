#include "importers/common/torch_npu_rank.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"

namespace mi::importers {
namespace {

namespace fs = std::filesystem;

int32_t ReadTorchNpuRankIn(const std::string& folder) {
  std::error_code ec;
  std::vector<fs::path> infos;
  for (auto it = fs::directory_iterator(folder, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.starts_with("profiler_info") && name.ends_with(".json") &&
        it->is_regular_file()) {
      infos.push_back(it->path());
    }
  }
  std::sort(infos.begin(), infos.end());
  for (const fs::path& info : infos) {
    auto text = ReadWholeFile(info.string());
    if (!text.ok()) continue;
    nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_object()) {
      auto rank = doc.find("rank_id");
      if (rank != doc.end() && rank->is_number_integer() &&
          rank->get<int64_t>() >= 0 && rank->get<int64_t>() <= INT32_MAX) {
        return static_cast<int32_t>(rank->get<int64_t>());
      }
    }
  }
  return -1;
}

}  // namespace

bool IsMsprofRunFolderName(std::string_view n) {
  return n.size() > 5 && n.starts_with("PROF_") && n[5] >= '0' && n[5] <= '9';
}

int32_t ReadTorchNpuRank(const std::string& folder) {
  int32_t rank = ReadTorchNpuRankIn(folder);
  fs::path p(folder);
  if (rank < 0 && IsMsprofRunFolderName(p.filename().string()) &&
      !p.parent_path().empty()) {
    rank = ReadTorchNpuRankIn(p.parent_path().string());
  }
  return rank;
}

}  // namespace mi::importers
