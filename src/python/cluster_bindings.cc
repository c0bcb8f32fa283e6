// model_inspector._core's cluster steps, one call each, so that Python can
// map the per-rank reduction over a Dask cluster
// (python/model_inspector/cluster.py; include/model_inspector/cluster.h):
//   discover_cluster_ranks(paths) -> {"ranks": [{rank, rank_from, files,
//     world_size, device_name}], "summary_files": [...]}
//   reduce_cluster_rank(rank) -> str: one rank's summary as JSON
//     (ClusterSummaryJson), small and picklable, computed where it runs
//   analyze_cluster_json(summary_files, link_peaks_file="") -> str: the
//     summaries read back, merged and analysed: the report's JSON, the text
//     of `model-inspector cluster --format json`.
// The long calls release the GIL.

#include "python/cluster_bindings.h"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "encoders/json_encoder.h"
#include "model_inspector/cluster.h"
#include "python/raise_status.h"

namespace py = pybind11;

namespace mi::python {
namespace {

py::dict Discover(const std::vector<std::string>& paths) {
  StatusOr<ClusterInputs> inputs = InvalidArgumentError("");
  {
    py::gil_scoped_release release;
    inputs = DiscoverClusterRanks(paths);
  }
  if (!inputs.ok()) Raise(inputs.status());
  py::list ranks;
  for (const ClusterRankInput& r : inputs->ranks) {
    ranks.append(py::dict(
        py::arg("rank") = r.rank, py::arg("rank_from") = r.rank_from,
        py::arg("files") = r.files, py::arg("world_size") = r.world_size,
        py::arg("device_name") = r.device_name));
  }
  return py::dict(py::arg("ranks") = ranks,
                  py::arg("summary_files") = inputs->summary_files);
}

std::string Reduce(const py::dict& rank) {
  ClusterRankInput input;
  input.rank = rank["rank"].cast<int32_t>();
  input.rank_from = py::str(rank["rank_from"]);
  input.files = rank["files"].cast<std::vector<std::string>>();
  if (rank.contains("world_size")) {
    input.world_size = rank["world_size"].cast<int32_t>();
  }
  if (rank.contains("device_name")) {
    input.device_name = py::str(rank["device_name"]);
  }
  StatusOr<ClusterSummary> summary = InvalidArgumentError("");
  std::string json;
  {
    py::gil_scoped_release release;
    ClusterOptions options;
    options.jobs = 1;
    summary = ReduceClusterRank(input, options);
    if (summary.ok()) json = ClusterSummaryJson(*summary);
  }
  if (!summary.ok()) Raise(summary.status());
  return json;
}

std::string Analyze(const std::vector<std::string>& summary_files,
                    const std::string& link_peaks_file) {
  Status status;
  std::string json;
  {
    py::gil_scoped_release release;
    status = [&]() -> Status {
      ClusterAnalysisOptions analysis;
      if (!link_peaks_file.empty()) {
        MI_ASSIGN_OR_RETURN(analysis.link_peaks,
                            ReadLinkPeaks(link_peaks_file));
      }
      ClusterSummary merged;
      for (const std::string& f : summary_files) {
        MI_ASSIGN_OR_RETURN(ClusterSummary s, ReadClusterSummary(f));
        MI_RETURN_IF_ERROR(MergeClusterSummaries(merged, std::move(s)));
      }
      MI_ASSIGN_OR_RETURN(ClusterReport report,
                          AnalyzeCluster(merged, analysis));
      json = encoders::EncodeJson(report);
      return Status::Ok();
    }();
  }
  if (!status.ok()) Raise(status);
  return json;
}

}  // namespace

void RegisterClusterBindings(py::module_& m) {
  m.def("discover_cluster_ranks", &Discover, py::arg("paths"));
  m.def("reduce_cluster_rank", &Reduce, py::arg("rank"));
  m.def("analyze_cluster_json", &Analyze, py::arg("summary_files"),
        py::arg("link_peaks_file") = "");
}

}  // namespace mi::python
