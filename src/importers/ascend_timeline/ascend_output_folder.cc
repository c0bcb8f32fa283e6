#include "importers/ascend_timeline/ascend_output_folder.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "base/strings.h"

namespace mi::importers::ascend_timeline {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTorchNpuOutput = "ASCEND_PROFILER_OUTPUT";
constexpr std::string_view kMsprofOutput = "mindstudio_profiler_output";

// Per-task tables and allocator totals, read after the timelines; the
// other tables read (api_statistic, operator_memory, static_op_mem) need
// nothing of the timeline and load with them.
bool IsTableFileName(std::string_view n) {
  return n == "kernel_details.csv" || n.starts_with("op_summary_") ||
         n.starts_with("memory_record") || n.starts_with("npu_module_mem") ||
         n.starts_with("api_statistic") || n.starts_with("operator_memory") ||
         n.starts_with("static_op_mem");
}

// Per-task figures that join the tasks the timeline or a per-task table
// made (l2_cache: by op name and stream), read after both.
bool IsTaskFiguresFileName(std::string_view n) {
  return n.starts_with("l2_cache") && n.ends_with(".csv");
}

// HCCL's communication tables and the step time split (read by
// importers/ascend_communication), after everything else of the folder: the
// communication tables join onto the collective records the timeline (or,
// without one, kernel_details) made.
bool IsCommunicationFileName(std::string_view n) {
  return n == "communication.json" || n == "communication_matrix.json" ||
         n == "step_trace_time.csv";
}

// torch_npu's profiler_info_{rank}.json / profiler_metadata.json.
bool IsConfigurationFileName(std::string_view n) {
  return n.starts_with("profiler_info") || n == "profiler_metadata.json";
}

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

// msprof names its run folders PROF_<6 digits>_<timestamp>_<letters>; a
// folder of the user's that merely starts with PROF_ is not one.
bool IsMsprofRunFolderName(std::string_view n) {
  return n.size() > 5 && n.starts_with("PROF_") && n[5] >= '0' && n[5] <= '9';
}

// Where a file sits in the run (RunFiles::File::in_run).
struct Place {
  bool in_output = false;   // directly in an output folder
  bool under_prof = false;  // below a msprof PROF_* folder
  // The nearest PROF_* folder's parent, in in_run terms ("" at the top).
  std::optional<std::string> prof_parent;
};

Place PlaceOf(const RunFiles::File& file) {
  Place place;
  fs::path in_run(file.in_run);
  std::string dir = in_run.parent_path().filename().string();
  place.in_output = dir == kTorchNpuOutput || dir == kMsprofOutput;
  for (fs::path folder = in_run.parent_path(); !folder.empty();
       folder = folder.parent_path()) {
    if (IsMsprofRunFolderName(folder.filename().string())) {
      place.under_prof = true;
      if (!place.prof_parent) {
        place.prof_parent = folder.parent_path().lexically_normal().string();
      }
    }
    if (folder == folder.parent_path()) break;
  }
  return place;
}

// The source key: the output folder's parent, as the path names it.
std::string SourceKeyOf(const std::string& path) {
  fs::path folder =
      fs::path(path).parent_path().parent_path().lexically_normal();
  return folder.empty() ? std::string(".") : folder.string();
}

}  // namespace

bool IsTimelineFileName(std::string_view n) {
  if (n.ends_with(".gz")) n.remove_suffix(3);
  return n == "trace_view.json" ||
         (n.starts_with("msprof_") && !n.starts_with("msprof_tx") &&
          n.size() > 5 && n.ends_with(".json"));
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

void ClaimOutputFolders(RunFiles& files) {
  const std::vector<RunFiles::File>& list = files.files();
  std::vector<Place> places;
  places.reserve(list.size());
  // torch_npu output folders of this run (in in_run terms): a PROF_* tree
  // directly inside one is msprof's copy of what ASCEND_PROFILER_OUTPUT/
  // holds.
  std::vector<std::string> torch_npu_folders;
  bool any = false;
  for (const RunFiles::File& file : list) {
    places.push_back(PlaceOf(file));
    fs::path in_run(file.in_run);
    if (in_run.parent_path().filename() == kTorchNpuOutput) {
      torch_npu_folders.push_back(
          in_run.parent_path().parent_path().lexically_normal().string());
    }
    any = any || places.back().in_output || places.back().under_prof;
  }
  if (!any) return;
  std::sort(torch_npu_folders.begin(), torch_npu_folders.end());

  auto source_of = [&](const std::string& path) {
    std::string key = SourceKeyOf(path);
    if (std::optional<size_t> s = files.FindSource(key)) return *s;
    int32_t rank = ReadTorchNpuRank(key);
    return files.AddSource({std::move(key), rank});
  };
  std::vector<size_t> timelines, tables, task_figures, communication;
  for (size_t i = 0; i < list.size(); ++i) {
    if (files.claimed(i)) continue;
    const Place& place = places[i];
    const std::string name = fs::path(list[i].path).filename().string();
    const bool copy =
        place.prof_parent &&
        std::binary_search(torch_npu_folders.begin(), torch_npu_folders.end(),
                           *place.prof_parent);
    if (place.in_output) {
      if (copy) {
        files.LeaveOut(i,
                       "msprof's PROF_* tree inside a torch_npu output folder "
                       "repeats its ASCEND_PROFILER_OUTPUT/, which is read");
      } else if (files.named()) {
        files.Take(i, source_of(list[i].path), 1);
      } else if (IsTimelineFileName(name)) {
        timelines.push_back(i);
      } else if (IsTableFileName(name)) {
        tables.push_back(i);
      } else if (IsTaskFiguresFileName(name)) {
        task_figures.push_back(i);
      } else if (IsCommunicationFileName(name)) {
        communication.push_back(i);
      } else {
        files.LeaveOut(i,
                       "a CANN profiler summary nothing reads (only the "
                       "timeline, kernel_details / op_summary, "
                       "memory_record, npu_module_mem, api_statistic, "
                       "l2_cache, operator_memory, static_op_mem, "
                       "communication.json, communication_matrix.json and "
                       "step_trace_time.csv are read)");
      }
    } else if (place.under_prof) {
      files.LeaveOut(i,
                     "msprof raw data (host/, device_N/): its "
                     "mindstudio_profiler_output/ is read instead");
    } else if (name == "profiler_metadata.json" &&
               std::binary_search(torch_npu_folders.begin(),
                                  torch_npu_folders.end(),
                                  fs::path(list[i].in_run)
                                      .parent_path()
                                      .lexically_normal()
                                      .string())) {
      // World size and parallel groups, before the timeline: its
      // collective records take the groups' full hashes.
      fs::path folder = fs::path(list[i].path).parent_path().lexically_normal();
      std::string key = folder.empty() ? std::string(".") : folder.string();
      std::optional<size_t> s = files.FindSource(key);
      if (!s) s = files.AddSource({key, ReadTorchNpuRank(key)});
      files.Take(i, *s, 1);
    } else if (IsConfigurationFileName(name)) {
      files.LeaveOut(i,
                     "torch_npu profiler configuration, not a trace (the "
                     "rank is read from profiler_info_<rank>.json)");
    }
  }
  // Slices in slice order: the first one holds the metadata.
  std::stable_sort(timelines.begin(), timelines.end(), [&](size_t a, size_t b) {
    return NaturalLess(list[a].path, list[b].path);
  });
  for (size_t i : timelines) files.Take(i, source_of(list[i].path), 1);
  for (size_t i : tables) files.Take(i, source_of(list[i].path), 2);
  for (size_t i : task_figures) files.Take(i, source_of(list[i].path), 3);
  for (size_t i : communication) files.Take(i, source_of(list[i].path), 4);
}

}  // namespace mi::importers::ascend_timeline
