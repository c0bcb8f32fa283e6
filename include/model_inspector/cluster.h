#pragma once

// Clusters of ranks: the profiles of one distributed job (one per rank)
// side by side. Data flow (docs/design/clusters.md):
//
//   paths -> DiscoverClusterRanks -> per rank, in parallel, an ordinary
//   Session over that rank's files -> ReduceClusterRank: a compact
//   ClusterRankSummary (per-step figures, the rank's collectives, no
//   events) -> MergeClusterSummaries (associative: a union of ranks) ->
//   AnalyzeCluster: the ClusterReport (collectives matched across ranks,
//   arrival skew, bandwidth, slow ranks and why, overlap, critical path,
//   findings) -> front ends (`model-inspector cluster`, cluster.json in the
//   export, GET /api/cluster).
//
// A summary is written as JSON (ClusterSummaryJson, one file per rank with
// `cluster --rank-summaries DIR`) and read back (ReadClusterSummary), so
// the reduction can run on other machines and the merge anywhere.
// Times are epoch nanoseconds of each rank's own host clock (see
// ClusterClockInfo); durations ns, sizes bytes; -1 where not known.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/status.h"

namespace mi {

// ---------------------------------------------------------------------------
// Inputs

// One rank's files as discovery found them.
struct ClusterRankInput {
  int32_t rank = -1;
  // Where the rank id came from: "profiler_info" (torch_npu
  // profiler_info_N.json rank_id), "RANK_DEVICE_MAP" (torch_npu DB export),
  // "distributedInfo" (Kineto), "msprof device" (PROF_* device id),
  // "file name" (rank-N, rankN, _N. in the name: the last resort).
  std::string rank_from;
  // The files and folders that make up the rank (an *_ascend_pt folder, a
  // Kineto JSON, a PROF_* folder), opened together as one Session.
  std::vector<std::string> files;
  // Ranks in the job as this rank's files say (-1: they do not).
  int32_t world_size = -1;
  // The accelerator as the files name it ("NVIDIA B200"; Kineto's
  // deviceProperties), for the link peaks; empty when not said.
  std::string device_name;
};

// What the discovery of a cluster's inputs found.
struct ClusterInputs {
  std::vector<ClusterRankInput> ranks;  // by rank
  // Inputs that are rank summaries already (ClusterSummaryJson files,
  // detected by content): read, not reduced.
  std::vector<std::string> summary_files;
};

// A link type's peak bandwidth (GB/s, decimal, one direction) with where
// the figure comes from (src/analysis/cluster/link_peaks.json).
struct LinkPeak {
  std::string link_type;  // "HCCS", "PCIE", "RDMA", "NVLink4", ...
  std::string chip;       // "" for any, or e.g. "V2_1_0"
  double peak_gbps = 0;
  std::string origin;
};

struct ClusterAnalysisOptions {
  // Link peaks; empty: the built-in table (link_peaks.json).
  std::vector<LinkPeak> link_peaks;
  // Collectives listed in the report with their per-rank figures, ranked
  // by exposed time (all are counted; 0 = all listed).
  size_t max_collectives = 500;
  // A rank is slow when it arrives last at more than this share of the
  // collectives it took part in (and more often than 1/ranks would).
  double slow_rank_last_arrival_share = 0.5;
  // Load imbalance findings above this (max - mean) / mean of step compute.
  double imbalance_threshold = 0.05;
};

struct ClusterOptions {
  // Directories and files: rank profiles, or rank summary files.
  std::vector<std::string> paths;
  // Ranks read at a time; 0 = the machine's hardware threads. Each rank's
  // Session is closed after its reduction, so peak memory is about jobs x
  // one rank's, not the sum.
  unsigned jobs = 0;
  // A link-peaks JSON file overriding the built-in table ("" = built in).
  std::string link_peaks_file;
  // The memory budget in bytes (0 = the process's, --memory-limit); ranks
  // read in parallel share it.
  uint64_t memory_limit = 0;
  // When set, each rank's summary is written there as rank_<N>.json.
  std::string rank_summaries_dir;
  // (what, done, total) as ranks finish: ("rank 3", 4, 8).
  std::function<void(const std::string&, uint64_t, uint64_t)> progress;
  ClusterAnalysisOptions analysis;
};

// ---------------------------------------------------------------------------
// Rank summaries: compact, mergeable, no events.

// Time and count of one op type (or node) in a step.
struct ClusterOpTime {
  std::string op_type;
  int64_t time_ns = 0;
  int64_t count = 0;
};

// A node (or, when no graph is linked, a task name) in a step: the
// drill-down to the graph.
struct ClusterNodeTime {
  std::string name;
  std::string op_type;
  std::string level;  // "compiled" | "framework" | "" (task name only)
  int64_t node = -1;  // model node id on that level (graph.json), -1 none
  int64_t time_ns = 0;
  int64_t count = 0;
};

// The profiler's own split of a step (step_trace_time.csv,
// analysis.db StepTraceTime), in ns; -1 where absent.
struct ClusterStepTraceFigures {
  int64_t computing_ns = -1;
  int64_t communication_not_overlapped_ns = -1;
  int64_t overlapped_ns = -1;
  int64_t communication_ns = -1;
  int64_t free_ns = -1;
  int64_t stage_ns = -1;
  int64_t bubble_ns = -1;
  int64_t communication_not_overlapped_excluding_receive_ns = -1;
  int64_t preparing_ns = -1;
};

// One step of one rank (a ProfilerStep run; the whole trace as one step
// when none is marked).
struct ClusterRankStep {
  int64_t step = -1;     // the profiler's step id (ProfilerStep#N), -1 none
  std::string label;     // "ProfilerStep#3"
  int64_t start_ns = 0;  // epoch, this rank's host clock
  int64_t end_ns = 0;
  int64_t wall_ns = 0;
  // Device time: merged compute kernels; merged communication; the part of
  // communication no compute ran beside (exposed) and the rest
  // (overlapped); idle = wall - (compute U communication U other device
  // work).
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t exposed_communication_ns = 0;
  int64_t overlapped_communication_ns = 0;
  int64_t idle_ns = 0;
  // Idle time of the devices waiting for the host to launch work
  // (idle_overlap's "launch" reasons) and host time in DataLoader ops.
  int64_t host_bound_ns = 0;
  int64_t data_loading_ns = 0;
  // First device work after the step began (late start).
  int64_t first_device_start_ns = -1;
  std::vector<ClusterOpTime> op_types;     // compute time by op type
  std::vector<ClusterNodeTime> top_nodes;  // the longest, bounded
  bool has_step_trace = false;
  ClusterStepTraceFigures step_trace;
};

// One collective the rank took part in.
struct ClusterRankCollective {
  std::string name;   // "hcom_allReduce__538_0_1", "ncclDevKernel_..."
  std::string type;   // "allreduce", "allgather", ... ("unknown")
  std::string group;  // the process group's name (Kineto PG name, HCCL hash)
  int32_t group_size = -1;
  int64_t sequence = -1;  // within the group on this rank (from 0)
  int64_t step = -1;      // the step id it started in
  std::string step_label;
  int64_t start_ns = 0;  // epoch, this rank's clock
  int64_t end_ns = 0;
  int64_t bytes = -1;
  int64_t in_elements = -1;
  int64_t out_elements = -1;
  std::string dtype;
  std::string algorithm;
  std::string protocol;
  // HCCL's own split of the op, when the profiler wrote it.
  int64_t transit_ns = -1;
  int64_t wait_ns = -1;
  int64_t synchronization_ns = -1;
  int64_t idle_ns = -1;
  // Compute that ran beside it on the rank's devices.
  int64_t overlapped_ns = 0;
  // The device task (trace.json id in the rank's own run), the host op
  // that launched it, and the node that issued it (-1 / "" when unknown).
  int64_t task = -1;
  std::string issued_by;
  int64_t node = -1;
  std::string node_name;
  std::string node_level;
};

// A process group as the rank's files describe it.
struct ClusterProcessGroup {
  std::string name;       // what collectives call it
  std::string long_name;  // HCCL group name / pg_desc
  std::string description;
  std::vector<int32_t> global_ranks;  // in group-rank order; empty unknown
  int32_t group_rank = -1;
};

// communication.json / analysis.db bandwidth rows and matrix links, kept
// as read (times ns, sizes bytes).
struct ClusterBandwidthRow {
  std::string step;
  std::string op_name;
  std::string group;
  bool p2p = false;
  std::string transport;
  int64_t size_bytes = -1;
  int64_t transit_ns = -1;
  double bandwidth_gbps = -1;
};

struct ClusterLinkRow {
  std::string step;
  std::string statistic;  // "allreduce-total"
  std::string group;
  bool p2p = false;
  int32_t src_rank = -1;  // in-group ranks
  int32_t dst_rank = -1;
  std::string transport;
  int64_t size_bytes = -1;
  int64_t transit_ns = -1;
  double bandwidth_gbps = -1;
  std::string op_name;
};

// A row of msprof-analyze's cluster_step_trace_time.csv, as is.
struct ClusterStepTraceRow {
  std::string step;
  std::string type;  // "rank" | "stage"
  std::vector<int32_t> ranks;
  ClusterStepTraceFigures figures;
};

// An op of one rank in msprof-analyze's cluster_communication.json, as is.
struct ClusterCommunicationOp {
  std::vector<int32_t> group_ranks;
  std::string step;
  std::string op_name;
  std::string group;
  int32_t rank = -1;
  int64_t start_ns = -1;
  int64_t elapse_ns = -1;
  int64_t transit_ns = -1;
  int64_t wait_ns = -1;
  int64_t synchronization_ns = -1;
  int64_t idle_ns = -1;
};

struct ClusterRankSummary {
  int32_t rank = -1;
  std::string rank_from;
  int32_t world_size = -1;  // as the rank's files say
  std::string host;
  std::vector<std::string> devices;  // "GPU 0", "NPU 3"
  std::vector<std::string> files;
  // The chip for the link peaks: Ascend chip id ("V2_1_0") or the device
  // name ("NVIDIA B200"); empty when not known.
  std::string chip;
  std::vector<ClusterProcessGroup> process_groups;
  std::vector<ClusterRankStep> steps;              // in time order
  std::vector<ClusterRankCollective> collectives;  // in start order
  std::vector<ClusterBandwidthRow> bandwidth;
  std::vector<ClusterLinkRow> links;
};

// The merge of rank summaries, plus the cluster-level tables
// msprof-analyze wrote (when they were among the inputs).
struct ClusterSummary {
  std::vector<ClusterRankSummary> ranks;  // by rank, each rank once
  std::vector<ClusterStepTraceRow> cluster_step_trace;
  std::vector<ClusterCommunicationOp> cluster_communication;
};

// ---------------------------------------------------------------------------
// The report (cluster.json; docs/reference/schemas/cluster.schema.json).

struct ClusterRankInfo {
  int32_t rank = -1;
  std::string rank_from;
  std::string host;
  std::vector<std::string> devices;
  std::vector<std::string> files;
  int64_t steps = 0;
  int64_t collectives = 0;
  // Summed over the rank's steps.
  int64_t wall_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t exposed_communication_ns = 0;
  int64_t idle_ns = 0;
};

struct ClusterStepRank {
  int32_t rank = -1;
  int64_t start_ns = 0;
  int64_t wall_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t exposed_communication_ns = 0;
  int64_t overlapped_communication_ns = 0;
  int64_t idle_ns = 0;
  int64_t host_bound_ns = 0;
  int64_t data_loading_ns = 0;
  bool has_step_trace = false;
  ClusterStepTraceFigures step_trace;
};

struct ClusterStep {
  int64_t step = -1;
  std::string label;
  std::vector<ClusterStepRank> ranks;  // by rank
  int64_t max_wall_ns = 0;
  int64_t median_wall_ns = 0;
  int32_t slowest_rank = -1;  // the most compute in the step
  // Load imbalance of step compute: (max - mean) / mean, and
  // msprof-analyze's (max - min) / mean.
  double compute_max_over_mean = 0;
  double compute_spread_over_mean = 0;
};

struct ClusterCollectiveRank {
  int32_t rank = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // Last arrival - own arrival: the time this rank waited for the others.
  int64_t wait_ns = 0;
  // Its time no compute of the rank overlapped.
  int64_t exposed_ns = 0;
  int64_t task = -1;
  std::string issued_by;
  int64_t node = -1;
  std::string node_name;
};

// One collective instance matched across ranks.
struct ClusterCollective {
  std::string group;
  int64_t sequence = -1;
  std::string name;
  std::string type;
  int64_t step = -1;
  std::string step_label;
  int32_t group_size = -1;
  int64_t bytes = -1;
  std::string dtype;
  std::string algorithm;
  // "group_sequence" (group + sequence within it), "step_name_group"
  // (HCCL: step, op name, group hash), "order_size" (fallback).
  std::string matched_by;
  std::vector<ClusterCollectiveRank> ranks;  // the ranks that ran it
  int32_t last_rank = -1;                    // arrived last
  int64_t arrival_skew_ns = 0;               // last arrival - first arrival
  int64_t end_spread_ns = 0;  // last end - first end (clock-skew bound)
  int64_t transfer_ns = 0;    // earliest end - last arrival (>= 0)
  double algbw_gbps = -1;     // bytes / transfer time
  double busbw_factor = -1;   // nccl-tests' factor for type and size
  double busbw_gbps = -1;
  std::string link_type;  // "" unknown
  double peak_gbps = -1;
  double efficiency = -1;  // busbw / peak
  int64_t exposed_ns = 0;  // summed over ranks
  int64_t wait_ns = 0;     // summed over ranks
};

struct ClusterOpTypeDelta {
  std::string op_type;
  int64_t rank_ns = 0;
  int64_t median_ns = 0;
  int64_t excess_ns = 0;
};

struct ClusterNodeDelta {
  std::string name;
  std::string op_type;
  std::string level;
  int64_t node = -1;
  int64_t rank_ns = 0;
  int64_t median_ns = 0;
  int64_t excess_ns = 0;
};

struct ClusterSlowReason {
  // "compute" | "host_bound" | "data_loading" | "slower_link" |
  // "late_start"
  std::string kind;
  std::string message;    // with the figures
  int64_t excess_ns = 0;  // over the median rank, summed over steps
  std::vector<ClusterOpTypeDelta> op_types;  // compute: the largest first
  std::vector<ClusterNodeDelta> nodes;
};

struct ClusterSlowRank {
  int32_t rank = -1;
  int64_t collectives = 0;    // it took part in (more than one rank ran)
  int64_t last_arrivals = 0;  // it arrived last
  double last_arrival_share = 0;
  int64_t mean_lateness_ns = 0;  // mean arrival skew when last
  int64_t others_wait_ns = 0;    // the others' wait for it, summed
  // msprof-analyze's cross-check (Dixon's Q / 3 sigma on op durations):
  // times this rank was flagged as the fastest outlier.
  int64_t duration_outlier_count = 0;
  std::vector<ClusterSlowReason> reasons;  // the largest first
};

struct ClusterRankOverlap {
  int32_t rank = -1;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t overlapped_ns = 0;
  // HTA's overlap: time both run / merged communication time.
  double overlap_share = 0;
  int64_t exposed_communication_ns = 0;
  // Ascend: step_trace Overlapped / Communication, when read; -1 absent.
  double step_trace_overlap_share = -1;
};

struct ClusterLinkBandwidth {
  std::string link_type;
  int64_t collectives = 0;
  int64_t bytes = 0;
  int64_t transfer_ns = 0;
  double busbw_gbps = -1;  // bytes-weighted: sum(busbw x t) / sum t
  double peak_gbps = -1;
  double efficiency = -1;
  std::string peak_origin;
};

struct ClusterMatrixEntry {
  std::string group;
  std::string statistic;
  int32_t src_rank = -1;  // global when mapped, else in-group
  int32_t dst_rank = -1;
  bool global = false;  // parallel_group_info / pg ranks mapped them
  std::string transport;
  int64_t size_bytes = 0;
  int64_t transit_ns = 0;
  double bandwidth_gbps = -1;
};

// One link of the cross-rank critical path of a step: the compute of the
// rank that arrived last before a collective, then its transfer.
struct ClusterPathLink {
  int64_t collective = -1;  // index into ClusterReport::collectives, -1
                            // when it is not listed
  std::string name;
  std::string group;
  int64_t sequence = -1;
  int32_t last_rank = -1;
  int64_t compute_before_ns = 0;  // on last_rank, since the previous link
  int64_t transfer_ns = 0;
};

struct ClusterCriticalPath {
  int64_t step = -1;
  std::string label;
  int64_t total_ns = 0;
  std::vector<ClusterPathLink> links;
};

// A cluster finding, in the diagnosis rules' form
// (docs/reference/diagnosis-rules.md "Cluster rules").
struct ClusterFinding {
  std::string rule_id;
  std::string title;
  std::string severity;  // "info" | "warning" | "error"
  std::string message;   // with the figures
  std::string suggestion;
  double threshold = 0;
  int64_t time_ns = 0;
  double share = 0;
  // Evidence: ranks, step ids, collectives (indices into collectives),
  // node names.
  std::vector<int32_t> ranks;
  std::vector<int64_t> steps;
  std::vector<int64_t> collectives;
  std::vector<std::string> nodes;
};

struct ClusterClockInfo {
  int32_t hosts = 0;
  // Each rank's times are its host's clock. Collectives end together on
  // every rank, so the largest end spread bounds the clock skew between
  // hosts (and the median one is the usual error of a cross-rank figure).
  int64_t max_end_spread_ns = 0;
  int64_t median_end_spread_ns = 0;
  std::string note;
  // When the ends disagree by more than a collective's transfer takes
  // (median end spread > median transfer), the clocks are off: each
  // rank's offset is estimated as the median of (its end - the instance's
  // median end) and taken off before skews, waits and step starts are
  // compared (aligned = true; the spreads above are then the residual
  // ones). Times in the report stay each rank's own.
  bool aligned = false;
  std::vector<int64_t> rank_offsets_ns;  // per ClusterReport::ranks entry
};

struct ClusterReport : AnalysisResult {
  int32_t world_size = -1;
  // "world_size" (the files say), "process groups" (union of the groups'
  // global ranks), "ranks" (the number of rank inputs; unsafe).
  std::string world_size_from;
  std::vector<ClusterRankInfo> ranks;
  std::vector<int32_t> missing_ranks;
  std::vector<ClusterStep> steps;
  int64_t collective_instances = 0;            // matched, listed or not
  std::vector<ClusterCollective> collectives;  // by exposed time
  std::vector<ClusterSlowRank> slow_ranks;
  std::vector<ClusterRankOverlap> overlap;
  std::vector<ClusterLinkBandwidth> bandwidth;
  std::vector<ClusterMatrixEntry> matrix;
  std::vector<ClusterCriticalPath> critical_path;
  std::vector<ClusterFinding> findings;
  ClusterClockInfo clock;
  std::vector<LinkPeak> link_peaks;  // the table applied
  // msprof-analyze's cluster outputs, as read.
  std::vector<ClusterStepTraceRow> cluster_step_trace;
  std::vector<ClusterCommunicationOp> cluster_communication;

  std::string_view analysis_id() const override { return "cluster"; }
  // {"schema": "model-inspector/cluster/1", ...}
  void Write(ResultWriter& w) const override;
};

// ---------------------------------------------------------------------------
// Functions

// Ranks from paths (docs/design/clusters.md "Ranks"). InvalidArgument when
// two inputs claim one rank (naming both) or nothing is a rank profile.
StatusOr<ClusterInputs> DiscoverClusterRanks(
    const std::vector<std::string>& paths);

// Opens one rank's files as a Session, reduces it and closes it.
StatusOr<ClusterSummary> ReduceClusterRank(const ClusterRankInput& input,
                                           const ClusterOptions& options);

// Adds `from`'s ranks and tables to `into`. InvalidArgument naming the
// rank when both hold it.
Status MergeClusterSummaries(ClusterSummary& into, ClusterSummary&& from);

// The summary as JSON ({"schema": "model-inspector/cluster-summary/1",
// ...}; docs/reference/schemas/cluster-summary.schema.json), and back.
std::string ClusterSummaryJson(const ClusterSummary& summary);
// The same through any ResultWriter (src/results/cluster_result.cc).
void WriteClusterSummary(ResultWriter& w, const ClusterSummary& summary);
StatusOr<ClusterSummary> ReadClusterSummary(const std::string& path);
// Whether a file is a summary written by ClusterSummaryJson (by content).
bool IsClusterSummaryFile(const std::string& path);

// Link peaks from a JSON file ({"link_peaks": [{"link_type", "chip",
// "peak_gbps", "origin"}]}); the built-in table.
StatusOr<std::vector<LinkPeak>> ReadLinkPeaks(const std::string& path);
std::vector<LinkPeak> BuiltinLinkPeaks();

StatusOr<ClusterReport> AnalyzeCluster(const ClusterSummary& summary,
                                       const ClusterAnalysisOptions& options);

// Discover, reduce in parallel (options.jobs), merge, analyse.
StatusOr<ClusterReport> OpenCluster(const ClusterOptions& options);

}  // namespace mi
