#pragma once

// One rank of a cluster reduced to its summary (model_inspector/cluster.h
// ClusterRankSummary): per step the device time split, host-bound and data
// loading time, compute by op type and the longest nodes; every collective
// of the rank with its step, times, size, group and the node that issued
// it; the profiler's communication tables. No events are kept, so a
// cluster of thousands of ranks is the size of its summaries.
//
// Steps are the source's runs (ProfilerStep#N; the "before ..." prologue
// is left out; the whole source as one step when none is marked), with
// step_breakdown's window: a step covers [its start, the next step's
// start), the last one up to its marker's end or its last device work.
// In a step, on the rank's device streams (unions, so concurrent streams
// count once):
//   compute        some compute task that is not a collective runs;
//   communication  some collective runs (IsCommunicationTask);
//   overlapped     both run; exposed = communication - overlapped;
//   idle           wall - (compute U communication U copies);
//   host_bound     idle gaps of the devices that end with a task whose
//                  launch call began after the gap began: the host had
//                  not asked for the work yet (idle_overlap's "host"
//                  reason, on the devices' union);
//   data_loading   host ops named like torch's DataLoader iterator.
// Times are epoch ns (raw + the source's base_ns), each rank its host's
// clock.

#include <cstddef>
#include <vector>

#include "base/ids.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/cluster.h"
#include "trace/trace.h"

namespace mi::analysis {

struct RankReduceOptions {
  size_t top_nodes = 20;  // per step
};

// Sources of the trace that are ranks of their own: those with tracks (or,
// without any track, the default source 0).
std::vector<SourceId> RankSources(const Trace& trace);

ClusterRankSummary ReduceRank(const Model& model, const Trace& trace,
                              const Links& links, SourceId source,
                              const RankReduceOptions& options = {});

// The collective type of an NCCL kernel, an hcom_* op or a torch.distributed
// collective name, lower case ("allreduce", "allgather", "reducescatter",
// "broadcast", "reduce", "alltoall", "send", "receive", "barrier",
// "gather", "scatter"), "unknown" when none.
std::string CollectiveTypeOfName(std::string_view name);
std::string_view CollectiveTypeName(CollectiveType type);

}  // namespace mi::analysis
