#pragma once

// How HCCL and msprof-analyze name collectives and their groups
// (shared/formats/cluster.md 1.3, 2.1), for every reader of Ascend
// communication data (the torch_npu DB export, communication.json).

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/collectives.h"

namespace mi::importers {

// msprof-analyze's double_hash of an HCCL group name
// ("90.91.105.46%enp189s0f0_60000_0_1736410538306028"): two 32-bit rolling
// hashes over the bytes, h = h * 29 + c and h = h * 131 + c (mod 2^32),
// joined as the high and low words of a uint64 (17148521525495523210 for
// that name). communication.json keys and analysis.db group_name carry it
// in decimal.
uint64_t HcclGroupHash(std::string_view group_name);

// The group as collective records name it: a group name that is already a
// decimal hash (2024 DB exports write the hash itself) as written, else
// the decimal HcclGroupHash of the name.
std::string HcclGroupKey(std::string_view group_name);
// True when `group_name` is all decimal digits (already the hash).
bool IsHcclGroupHash(std::string_view group_name);

// The parts of an HCCL op name hcom_<collective>__<G>_<k>[_<m>]
// ("hcom_allReduce__210_0_1"): the collective ("allReduce"), <G> (the
// group hash's last three digits), <k> (the op's index within its group
// on this rank, from 0). Fields are empty / -1 when the name does not
// follow the pattern.
struct HcclOpName {
  std::string_view collective;
  std::string_view group_suffix;
  int64_t sequence = -1;
};
HcclOpName ParseHcclOpName(std::string_view op_name);

// The collective of an HCCL op type or name: "hcom_allReduce_",
// "hcom_allReduce__210_0_1", "allGather", "hcom_reduceScatter_",
// "hcom_alltoallv_", "hcom_send_", "hcom_receive_" ... (case-insensitive;
// kUnknown when none).
CollectiveType HcclCollectiveType(std::string_view op_type_or_name);

// Bytes per element of an HCCL data type name (ENUM_HCCL_DATA_TYPE: INT8,
// INT16, INT32, FP16, FP32, INT64, UINT64, UINT8, UINT16, UINT32, FP64,
// BFP16, INT128); 0 when unknown.
int64_t HcclDataTypeBytes(std::string_view data_type);

}  // namespace mi::importers
