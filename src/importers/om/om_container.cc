#include "importers/om/om_container.h"

#include <cstring>

#include <fmt/format.h>

namespace mi::importers::om {
namespace {

constexpr uint32_t kKernelItemMagic = 0x5D776EFD;

uint32_t U32(std::string_view d, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, d.data() + at, 4);  // the format is little-endian
  return v;
}

uint64_t U64(std::string_view d, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, d.data() + at, 8);
  return v;
}

std::string CString(std::string_view d, size_t at, size_t size) {
  std::string_view s = d.substr(at, size);
  size_t nul = s.find('\0');
  return std::string(s.substr(0, nul));
}

Status Malformed(std::string_view where, uint64_t byte, std::string what) {
  return MalformedInputError(
      fmt::format("{}: byte {}: {}", where, byte, std::move(what)));
}

std::string MagicText(std::string_view d) {
  std::string out;
  for (char c : d.substr(0, 4)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? std::string(1, c)
                                   : fmt::format("\\x{:02x}", u);
  }
  return out;
}

}  // namespace

std::string PartitionTypeName(uint32_t type) {
  static constexpr std::string_view kNames[] = {
      "MODEL_DEF",        "WEIGHTS_DATA",       "TASK_INFO",
      "TBE_KERNELS",      "CUST_AICPU_KERNELS", "SO_BINS",
      "FLOW_MODEL",       "FLOW_SUBMODEL",      "MODEL_INOUT_INFO",
      "STATIC_TASK_DESC", "DYNAMIC_TASK_DESC",  "TASK_PARAM",
      "TILING_DATA"};
  if (type < std::size(kNames)) return std::string(kNames[type]);
  switch (type) {
    case 20:
      return "PRE_MODEL_DESC";
    case 21:
      return "PRE_MODEL_SQE";
    case 22:
      return "PRE_KERNEL_ARGS";
    case 23:
      return "PRE_MODEL_DESC_EXTEND";
    case 24:
      return "BUNDLE_MODEL_INFO";
    case 25:
      return "BUNDLE_MODEL_VAR_INFO";
    case 26:
      return "CUSTOM_OPS";
    default:
      return fmt::format("partition type {}", type);
  }
}

const Partition* Group::Find(uint32_t type) const {
  for (const Partition& p : partitions) {
    if (p.type == type) return &p;
  }
  return nullptr;
}

StatusOr<Layout> ParseLayout(std::string_view d, std::string_view where,
                             uint64_t base) {
  const uint64_t size = d.size();
  if (size >= 4 && std::memcmp(d.data(), "IMOD", 4) != 0) {
    std::string what;
    if (std::memcmp(d.data(), "PICO", 4) == 0) {
      what = "a HiSilicon SVP model (PICO), a different format";
    } else if (std::memcmp(d.data(), "PK\x03\x04", 4) == 0) {
      what = "a zip archive (an OM2 model), not read by model-inspector";
    } else {
      what = "not an Ascend offline model";
    }
    return Malformed(where, base,
                     fmt::format("the magic is '{}': {}; expected 'IMOD'",
                                 MagicText(d), what));
  }
  if (size < kHeaderSize) {
    return Malformed(
        where, base + size,
        fmt::format("truncated: the file ends after {} bytes, inside the "
                    "{}-byte .om header",
                    size, kHeaderSize));
  }
  Layout layout;
  Header& h = layout.header;
  h.headsize = U32(d, 4);
  h.version = U32(d, 8);
  h.length = U32(d, 76);
  h.is_encrypt = static_cast<uint8_t>(d[80]);
  h.is_checksum = static_cast<uint8_t>(d[81]);
  h.model_type = static_cast<uint8_t>(d[82]);
  h.gen_mode = static_cast<uint8_t>(d[83]);
  h.name = CString(d, 84, 32);
  h.om_ir_version = U32(d, 152);
  const bool v2 = h.version >= kVersion2;
  if (v2) {
    h.model_num = U32(d, 156);
    h.platform_version = CString(d, 160, 20);
    h.platform_type = static_cast<uint8_t>(d[180]);
    h.model_length = U64(d, 184);
    h.is_unknow_model = static_cast<uint8_t>(d[193]);
  } else {
    h.platform_version = CString(d, 156, 20);
    h.platform_type = static_cast<uint8_t>(d[176]);
  }
  if (h.headsize != kHeaderSize) {
    return Malformed(
        where, base + 4,
        fmt::format("header size is {}; expected {}", h.headsize, kHeaderSize));
  }
  if (h.is_encrypt != 0) {
    return Malformed(where, base + 80,
                     "the model is encrypted (is_encrypt is set): only the "
                     "device runtime with its key can read it");
  }
  const uint64_t declared = h.model_length != 0 ? h.model_length : h.length;
  const uint64_t after_header = size - kHeaderSize;
  if (declared != after_header) {
    uint64_t field = h.model_length != 0 ? 184 : 76;
    return Malformed(
        where, base + field,
        fmt::format("the header says {} bytes follow it, the file has {} "
                    "after the header{}",
                    declared, after_header,
                    declared > after_header ? " (truncated)" : ""));
  }
  const bool wide = h.model_type == kFlowModelType || h.model_length != 0;
  uint64_t groups = 1;
  if (v2 && (h.model_num > 1 || h.is_unknow_model == 1)) {
    groups = h.model_num;
    if (groups == 0 || groups > after_header / 4) {
      return Malformed(
          where, base + 156,
          fmt::format("model_num is {}; a file of {} bytes holds 1 to {} "
                      "partition tables",
                      h.model_num, size, after_header / 4));
    }
  }
  const uint64_t entry_size = wide ? 24 : 12;
  const uint64_t table_head = wide ? 8 : 4;
  uint64_t pos = kHeaderSize;
  for (uint64_t g = 0; g < groups; ++g) {
    Group group;
    group.table_offset = pos;
    group.wide_entries = wide;
    if (size - pos < table_head) {
      return Malformed(
          where, base + pos,
          fmt::format("truncated: partition table {} of {} starts here but "
                      "the file ends {} bytes later",
                      g + 1, groups, size - pos));
    }
    const uint64_t count = U32(d, pos);
    if (count > (size - pos - table_head) / entry_size) {
      return Malformed(
          where, base + pos,
          fmt::format("partition table {} of {} lists {} partitions of {} "
                      "bytes each; only {} bytes remain in the file",
                      g + 1, groups, count, entry_size,
                      size - pos - table_head));
    }
    const uint64_t data_start = pos + table_head + count * entry_size;
    uint64_t running = 0;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t at = pos + table_head + i * entry_size;
      Partition p;
      uint64_t offset = 0;
      if (wide) {
        p.type = U32(d, at);
        offset = U64(d, at + 8);
        p.size = U64(d, at + 16);
      } else {
        p.type = U32(d, at);
        offset = U32(d, at + 4);
        p.size = U32(d, at + 8);
      }
      std::string name = PartitionTypeName(p.type);
      if (offset != running) {
        return Malformed(
            where, base + at,
            fmt::format("partition {} ({}) of table {} starts at offset {}; "
                        "expected {}, where the partition before it ends: "
                        "{}",
                        i + 1, name, g + 1, offset, running,
                        offset < running ? "it overlaps the partition before it"
                                         : "it leaves a gap"));
      }
      if (p.size > size - data_start || running > size - data_start - p.size) {
        return Malformed(
            where, base + at,
            fmt::format("partition {} ({}) of table {}: {} bytes at byte {} "
                        "run past the end of the file ({} bytes)",
                        i + 1, name, g + 1, p.size, base + data_start + running,
                        base + size));
      }
      p.offset = data_start + running;
      running += p.size;
      group.partitions.push_back(p);
    }
    pos = data_start + running;
    layout.groups.push_back(std::move(group));
  }
  if (pos != size) {
    return Malformed(
        where, base + pos,
        fmt::format("the {} partition table{} and their partitions end here, "
                    "but the file has {} bytes: {} bytes are not in any "
                    "partition (is model_num right?)",
                    groups, groups == 1 ? "" : "s", base + size, size - pos));
  }
  return layout;
}

StatusOr<std::vector<KernelItem>> ParseKernelStore(std::string_view d,
                                                   std::string_view where,
                                                   uint64_t offset) {
  std::vector<KernelItem> items;
  uint64_t pos = 0;
  while (pos < d.size()) {
    if (d.size() - pos < 12) {
      return Malformed(where, offset + pos,
                       fmt::format("kernel store item header needs 12 bytes, "
                                   "{} remain in the partition",
                                   d.size() - pos));
    }
    uint32_t magic = U32(d, pos);
    if (magic != kKernelItemMagic) {
      return Malformed(where, offset + pos,
                       fmt::format("kernel store item magic is 0x{:08X}; "
                                   "expected 0x{:08X}",
                                   magic, kKernelItemMagic));
    }
    uint64_t name_len = U32(d, pos + 4);
    uint64_t bin_len = U32(d, pos + 8);
    uint64_t left = d.size() - pos - 12;
    if (name_len > left || bin_len > left - name_len) {
      return Malformed(where, offset + pos,
                       fmt::format("kernel store item of {} name bytes and {} "
                                   "binary bytes runs past the partition's "
                                   "end ({} bytes remain)",
                                   name_len, bin_len, left));
    }
    KernelItem item;
    item.name = std::string(d.substr(pos + 12, name_len));
    while (!item.name.empty() && item.name.back() == '\0') {
      item.name.pop_back();
    }
    item.size = bin_len;
    items.push_back(std::move(item));
    pos += 12 + name_len + bin_len;
  }
  return items;
}

StatusOr<std::vector<InoutBlock>> ParseInoutInfo(std::string_view d,
                                                 std::string_view where,
                                                 uint64_t offset) {
  std::vector<InoutBlock> blocks;
  uint64_t pos = 0;
  while (pos < d.size()) {
    if (d.size() - pos < 8) {
      return Malformed(where, offset + pos,
                       fmt::format("MODEL_INOUT_INFO block header needs 8 "
                                   "bytes, {} remain",
                                   d.size() - pos));
    }
    InoutBlock b;
    b.type = U32(d, pos);
    b.size = U32(d, pos + 4);
    if (b.size > d.size() - pos - 8) {
      return Malformed(where, offset + pos,
                       fmt::format("MODEL_INOUT_INFO block of {} bytes runs "
                                   "past the partition's end ({} remain)",
                                   b.size, d.size() - pos - 8));
    }
    blocks.push_back(b);
    pos += 8 + b.size;
  }
  return blocks;
}

}  // namespace mi::importers::om
