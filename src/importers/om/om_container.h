#pragma once

// The Ascend offline-model container (.om, magic "IMOD"; format notes in
// docs/reference/om.md): a 256-byte header (v1 or v2), then one or more
// {partition table, partition data} groups (several when the file holds a
// root model and its submodels). Partition tables come in two widths, chosen
// as GE's loader chooses: 24-byte entries when the model type is a flow
// model or the header's 64-bit model_length is set, 12-byte entries
// otherwise. Every offset and size is checked against the file: partitions
// lie back to back in table order and the groups end exactly at the end of
// the file, or the file is refused with the byte offset that disagrees.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"

namespace mi::importers::om {

inline constexpr size_t kHeaderSize = 256;
inline constexpr uint32_t kVersion2 = 0x20000000;
inline constexpr uint8_t kFlowModelType = 3;

// ModelPartitionType (GE framework_types_internal.h).
enum PartitionType : uint32_t {
  kModelDef = 0,
  kWeightsData = 1,
  kTaskInfo = 2,
  kTbeKernels = 3,
  kCustAicpuKernels = 4,
  kSoBins = 5,
  kFlowModel = 6,
  kFlowSubmodel = 7,
  kModelInoutInfo = 8,
};
// "MODEL_DEF", "TBE_KERNELS", ...; "partition type N" when unknown.
std::string PartitionTypeName(uint32_t type);

struct Header {
  uint32_t headsize = 0;
  uint32_t version = 0;
  uint32_t length = 0;  // size after the header (32-bit, older files)
  uint8_t is_encrypt = 0;
  uint8_t is_checksum = 0;
  uint8_t model_type = 0;  // 0 IR, 1 standard, 2 OM tiny, 3 flow, ...
  uint8_t gen_mode = 0;
  std::string name;
  uint32_t om_ir_version = 0;
  uint32_t model_num = 1;  // v2 only
  std::string platform_version;
  uint8_t platform_type = 0;
  uint64_t model_length = 0;  // v2 only: size after the header (64-bit)
  uint8_t is_unknow_model = 0;
};

struct Partition {
  uint32_t type = 0;
  uint64_t offset = 0;  // from the start of the buffer
  uint64_t size = 0;
};

struct Group {
  uint64_t table_offset = 0;
  bool wide_entries = false;
  std::vector<Partition> partitions;
  // The first partition of a type, or nullptr.
  const Partition* Find(uint32_t type) const;
};

struct Layout {
  Header header;
  std::vector<Group> groups;
};

// Parses header and tables of an .om held in `data` (a whole file, or a
// flow model's nested om_data). `where` names it in errors ("x.om", "x.om
// submodel 'a'"); `base` is added to every byte offset an error reports
// (the nested model's place in the outer file).
StatusOr<Layout> ParseLayout(std::string_view data, std::string_view where,
                             uint64_t base = 0);

// One item of a kernel store (TBE_KERNELS, CUST_AICPU_KERNELS, SO_BINS):
// the name GE stored it by (the op's name) and the binary's size.
struct KernelItem {
  std::string name;
  uint64_t size = 0;
};
// Walks a kernel store partition; `offset` is its place in the file.
StatusOr<std::vector<KernelItem>> ParseKernelStore(std::string_view data,
                                                   std::string_view where,
                                                   uint64_t offset);

// One block of MODEL_INOUT_INFO: {u32 type, u32 len, value}.
struct InoutBlock {
  uint32_t type = 0;
  uint64_t size = 0;
};
StatusOr<std::vector<InoutBlock>> ParseInoutInfo(std::string_view data,
                                                 std::string_view where,
                                                 uint64_t offset);

}  // namespace mi::importers::om
