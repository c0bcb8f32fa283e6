#pragma once

// What the collective names of NCCL, HCCL and torch.distributed say, for the
// importers that fill trace/collectives.h (format facts:
// docs/reference/cluster-formats.md): the collective of a name, HCCL's op
// name encoding, msprof-analyze's group hash, NCCL's kernel names, data type
// sizes and the message size S as nccl-tests define it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trace/trace.h"

namespace mi::importers {

// The collective a name says, in any of the spellings: NCCL kernels
// ("ncclDevKernel_AllGather_RING_LL", "ncclKernel_AllReduce_..."), Kineto's
// "Collective name" ("_allgather_base", "allreduce", "reduce_scatter_tensor"),
// HCCL ops ("hcom_allReduce__538_0_1", "hcom_receive__...") and op types
// ("hcom_reduceScatter_"). Case and underscores are ignored; kUnknown when
// none matches.
CollectiveType CollectiveTypeOfName(std::string_view name);
std::string_view CollectiveTypeName(CollectiveType type);

// hcom_<collective>__<G>_<k>[_<m>] (cluster-formats.md "Op names"):
// "hcom_allReduce__538_0_1" -> allReduce, "538", 0, 1.
struct HcclOpName {
  std::string_view collective;  // "allReduce"
  std::string_view group_tag;   // "538": last three digits of the group hash
  int64_t sequence = -1;        // <k>: the op's index within its group
  int64_t trailer = -1;         // <m> (always 1 in the samples), -1 absent
};
std::optional<HcclOpName> ParseHcclOpName(std::string_view name);

// msprof-analyze's double_hash of an HCCL group name: two 32-bit rolling
// hashes of its bytes, multipliers 29 (high word) and 131 (low word).
// "90.91.105.46%enp189s0f0_60000_0_1736410538306028" -> 17148521525495523210.
uint64_t HcclGroupHash(std::string_view group_name);

// NCCL kernel names: ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type>(...)
// and ncclDevKernel_<Coll>_<ALGO>_<PROTO>(...). Parsed loosely: absent
// parts are empty.
struct NcclKernelName {
  std::string_view collective;  // "AllGather"
  std::string_view algorithm;   // "RING", "TREE", "NVLS", ...
  std::string_view protocol;    // "LL", "LL128", "SIMPLE"
};
// True for names with the `nccl` prefix (what HTA matches), never for
// "nccl:..." annotations (the caller checks the event is a kernel).
bool IsNcclKernelName(std::string_view name);
NcclKernelName ParseNcclKernelName(std::string_view name);

// Bytes per element of a data type as Kineto ("BFloat16", "Float", "Half",
// "Long") or HCCL ("FP16", "BFP16", "INT8") name it; -1 when unknown.
int32_t DtypeSize(std::string_view dtype);

// The message size S nccl-tests use for algbw = S / t: the larger of the
// in and out element counts times the element size (all-gather: the
// gathered array, the out count; reduce-scatter: the in count), -1 when a
// part is unknown.
int64_t CollectiveBytes(int64_t in_elements, int64_t out_elements,
                        int32_t dtype_size);

// "[0, 1, 2]" / "(0,1,2)" / "0,1" -> the ranks; nullopt when an item is not
// a non-negative int32 or the list is longer than `max_items`.
std::optional<std::vector<int32_t>> ParseRankList(std::string_view text,
                                                  size_t max_items = 1 << 20);

// Adds a CollectiveRecord for every hcom_* op among the tasks
// [first_task, end) of `source` that are HCCL collectives (class
// communication, kind compute): name, type, the group tag and sequence of
// its name, times. The record's group is the group tag until a file gives
// the full hash (a process group of the source whose hash ends in it, or
// communication.json). Returns how many were added.
size_t AddHcclCollectiveRecords(Trace& trace, SourceId source,
                                size_t first_task);

// Gives every collective record of `source` from `first_record` on whose
// task is known the run its task started in (after the importer assigned
// runs).
void SetCollectiveRuns(Trace& trace, SourceId source, size_t first_record);

}  // namespace mi::importers
