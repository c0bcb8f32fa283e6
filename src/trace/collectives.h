#pragma once

// Collective communication as the profilers describe it, kept beside the
// tasks: one record per collective instance a rank took part in (an NCCL
// kernel with its Kineto args, an HCCL hcom_* op, a row of torch_npu's
// COMMUNICATION_OP table), the process groups a source names, and the
// communication tables torch_npu and msprof-analyze write (per-op time
// split, per-transport bandwidth, per-link matrix, per-step time split).
// Importers append; the cluster analyses read them (src/analysis/cluster).
//
// Times are in the source's raw clock like tasks (trace.h): add the
// source's base_ns for its time base (epoch for Kineto, torch_npu, msprof).
// Durations are ns, sizes bytes; -1 (or empty) where the file did not say.
// Format facts: docs/reference/cluster-formats.md.

#include <cstdint>
#include <vector>

#include "base/ids.h"
#include "base/string_pool.h"

namespace mi {

// A process group (communicator) a source names: Kineto's
// distributedInfo.pg_config, torch_npu's parallel_group_info
// (profiler_metadata.json or the DB's META_DATA), a group a collective
// record names that no table describes (ranks then unknown).
struct ProcessGroupInfo {
  // What collective records call the group (CollectiveRecord::group):
  // Kineto's "Process Group Name" ("3"); on Ascend the group hash as
  // msprof-analyze prints it (the decimal double_hash of the HCCL group
  // name, "17148521525495523210"), which communication.json keys carry.
  StringId name = StringPool::kEmpty;
  // The HCCL group name ("90.91.105.46%enp189s0f0_60000_0_1736410538306028")
  // or Kineto's pg_desc ("default_pg"); what parallel_group_info calls it
  // ("dp", "tp", "pp"), when a file says.
  StringId long_name = StringPool::kEmpty;
  StringId description = StringPool::kEmpty;
  // Global ranks, in group-rank order; empty when no file lists them.
  std::vector<int32_t> global_ranks;
  // The source's own rank within the group (-1 unknown).
  int32_t group_rank = -1;
};

// The collective, normalised across NCCL, HCCL and torch.distributed names
// ("AllReduce", "allReduce", "_allgather_base", "ncclDevKernel_AllGather").
enum class CollectiveType : uint8_t {
  kUnknown,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSend,
  kReceive,
  kBarrier,
  kGather,
  kScatter,
};

struct CollectiveRecord {
  SourceId source;
  // The device task of the collective (the NCCL kernel, the hcom_* op on
  // the HCCL track); Invalid when only a table names it.
  TaskId task;
  // The op as the source names it: "hcom_allReduce__538_0_1",
  // "ncclDevKernel_AllGather_RING_LL(...)"; the cross-rank join key on
  // Ascend together with the group.
  StringId name = StringPool::kEmpty;
  CollectiveType type = CollectiveType::kUnknown;
  // ProcessGroupInfo::name of the group it ran in (empty: unknown). An
  // HCCL op whose group hash no file gave (a Level0 timeline without
  // communication.json or parallel_group_info) has the <G> of its name
  // instead: the hash's last three digits, the same on every rank.
  StringId group = StringPool::kEmpty;
  int32_t group_size = -1;
  // Position among the collectives of its group on this rank, from 0: the
  // profiler's own (HCCL's <k> in hcom_<op>__<G>_<k>_<m>, Kineto's "Seq"
  // when written), else -1 and the matcher numbers records by start order.
  int64_t sequence = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // Message: element counts as Kineto writes them (In/Out msg nelems),
  // HCCL's count; the data type ("BFloat16", "FP16"); the size S in bytes
  // as nccl-tests define it (all-gather / reduce-scatter: the whole array).
  int64_t in_elements = -1;
  int64_t out_elements = -1;
  StringId dtype = StringPool::kEmpty;
  int64_t bytes = -1;
  // NCCL's algorithm and protocol from the kernel name (RING / LL), HCCL's
  // algType ("MESH-RING").
  StringId algorithm = StringPool::kEmpty;
  StringId protocol = StringPool::kEmpty;
  // The step (run index, trace.h) it started in; -1 when not known yet
  // (importers that know the profiler's step id put it in step_label).
  int64_t run = -1;
  StringId step_label = StringPool::kEmpty;  // "step50" as the file says
  // HCCL's own split of the op (communication.json, CommAnalyzerTime,
  // COMMUNICATION_OP.waitNs); -1 when absent.
  int64_t transit_ns = -1;
  int64_t wait_ns = -1;
  int64_t synchronization_ns = -1;
  int64_t idle_ns = -1;
};

// One op's bandwidth on one transport (communication.json "Communication
// Bandwidth Info", analysis.db CommAnalyzerBandwidth).
struct CommunicationBandwidthRow {
  SourceId source;
  StringId step = StringPool::kEmpty;     // "step50"
  StringId op_name = StringPool::kEmpty;  // "hcom_allReduce__538_0_1";
                                          // "Total Op Info" for the total
  StringId group = StringPool::kEmpty;    // the group hash after '@'
  bool p2p = false;
  StringId transport = StringPool::kEmpty;  // HCCS, PCIE, RDMA, SDMA, SIO
  int64_t size_bytes = -1;                  // Transit Size(MB) x 1e6
  int64_t transit_ns = -1;
  double bandwidth_gbps = -1;  // as written (GB/s, decimal)
  double large_packet_ratio = -1;
};

// One link of communication_matrix.json (analysis.db CommAnalyzerMatrix):
// a statistic ("allreduce-top1", "allreduce-total") of one collective type
// and group, between two in-group ranks.
struct CommunicationLinkRow {
  SourceId source;
  StringId step = StringPool::kEmpty;
  StringId statistic = StringPool::kEmpty;  // "allreduce-top1"
  StringId group = StringPool::kEmpty;
  bool p2p = false;
  int32_t src_rank = -1;  // in-group ranks as HCCL numbers them
  int32_t dst_rank = -1;
  StringId transport = StringPool::kEmpty;  // LOCAL, HCCS, PCIE, RDMA, SDMA
  int64_t size_bytes = -1;
  int64_t transit_ns = -1;
  double bandwidth_gbps = -1;
  StringId op_name = StringPool::kEmpty;  // empty for "total"
};

// One step of step_trace_time.csv (analysis.db StepTraceTime), or of
// msprof-analyze's cluster_step_trace_time.csv: the profiler's own split
// of a step's device time. -1 where a column is absent.
struct StepTraceRow {
  SourceId source;
  StringId step = StringPool::kEmpty;  // "50"; empty when unmarked
  int32_t device = -1;                 // Device_id column, when present
  // cluster_step_trace_time.csv only: "rank" or "stage", and the rank (or
  // the stage's ranks) the row is for.
  StringId type = StringPool::kEmpty;
  std::vector<int32_t> ranks;
  int64_t computing_ns = -1;
  int64_t communication_not_overlapped_ns = -1;
  int64_t overlapped_ns = -1;
  int64_t communication_ns = -1;
  int64_t free_ns = -1;
  int64_t stage_ns = -1;
  int64_t bubble_ns = -1;
  int64_t communication_not_overlapped_excluding_receive_ns = -1;
  int64_t preparing_ns = -1;
  uint64_t line = 0;  // in its file, for messages
};

// One op of one rank in msprof-analyze's cluster_communication.json.
struct ClusterCommunicationRow {
  SourceId source;
  std::vector<int32_t> group_ranks;  // the "(0, 1, ...)" key; empty: p2p
  StringId step = StringPool::kEmpty;
  StringId op_name = StringPool::kEmpty;  // "Total Op Info" for totals
  StringId group = StringPool::kEmpty;    // hash after '@'
  int32_t rank = -1;
  int64_t start_ns = -1;  // epoch
  int64_t elapse_ns = -1;
  int64_t transit_ns = -1;
  int64_t wait_ns = -1;
  int64_t synchronization_ns = -1;
  int64_t idle_ns = -1;
};

struct CommunicationTables {
  std::vector<CollectiveRecord> collectives;
  std::vector<CommunicationBandwidthRow> bandwidth;
  std::vector<CommunicationLinkRow> links;
  std::vector<StepTraceRow> step_trace;
  std::vector<ClusterCommunicationRow> cluster_communication;
  bool empty() const {
    return collectives.empty() && bandwidth.empty() && links.empty() &&
           step_trace.empty() && cluster_communication.empty();
  }
};

}  // namespace mi
