#pragma once

// Internal to the direct path of the binary ONNX importer
// (onnx_direct_import.h): what its two passes share. The first pass
// (`Decoder`, onnx_direct_decoder.cc) decodes the wire format of the whole
// ModelProto into the light views below, which point into the file bytes;
// the second (onnx_direct_import.cc) checks them and builds the Model.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "importers/common/protobuf_wire_reader.h"
#include "importers/onnx/onnx_skeleton.h"

namespace mi::importers::onnx_import::direct_detail {

inline constexpr uint32_t kNone = ~uint32_t{0};

// ---- decoded views (into the file bytes) ----

struct DimInfo {
  int64_t value = 0;
  std::string_view param;
  uint8_t which = 0;  // 0 none, 1 dim_value, 2 dim_param
};

struct TypeInfo {
  uint8_t kind = 0;  // 0 none set, 1 tensor_type, 2 sparse_tensor_type
  int32_t elem_type = 0;
  bool has_shape = false;
  uint32_t dim_begin = 0;
  uint32_t dim_end = 0;
  // ONNX's "type and shape known" (the converter's HasTypeAndShape).
  bool Known() const { return kind == 1 && elem_type != 0 && has_shape; }
};

struct ValueInfo {
  std::string_view name;
  uint32_t type = kNone;
};

// What the reference path sees of a TensorProto after the skeleton left out
// large payloads (onnx_skeleton.cc: kept iff payload <= 64 bytes, or
// int32/int64 and <= 1 KiB).
struct TensorFacts {
  std::string_view name;
  int32_t data_type = 0;
  std::vector<int64_t> dims;
  bool external = false;
  std::string_view location;
  std::optional<uint64_t> length;
  uint64_t inline_bytes = 0;
  // Kept payload only.
  bool has_raw = false;
  std::string_view raw;
  std::vector<float> floats;
  std::vector<int32_t> int32s;
  std::vector<int64_t> int64s;
};

// Decodes the TensorProto `bytes` (at byte `offset` of `file`) into `t`
// as the reference path sees it; false when the direct path declines.
bool DecodeTensor(std::string_view bytes, uint64_t offset,
                  std::string_view file, TensorFacts* t);

// The attribute text of a tensor (onnx_convert_util.h's DescribeTensor).
std::string DescribeTensor(const TensorFacts& t);

struct TensorRef {
  std::string_view bytes;
  uint64_t offset = 0;
};

struct DAttr {
  std::string_view name;
  std::string_view ref_attr_name;
  std::string_view s;
  int32_t type = 0;
  float f = 0;
  int64_t i = 0;
  bool has_f = false;
  bool has_i = false;
  bool has_s = false;
  bool has_t = false;
  TensorRef t;
  uint32_t g = kNone;  // graph index
  uint32_t floats_begin = 0, floats_end = 0;
  uint32_t ints_begin = 0, ints_end = 0;
  uint32_t strings_begin = 0, strings_end = 0;
  uint32_t tensors_begin = 0, tensors_end = 0;
  uint32_t graphs_begin = 0, graphs_end = 0;
};

struct DNode {
  std::string_view name;
  std::string_view op_type;
  std::string_view domain;
  uint64_t offset = 0;
  uint32_t in_begin = 0, in_end = 0;
  uint32_t out_begin = 0, out_end = 0;
  uint32_t attr_begin = 0, attr_end = 0;
};

struct DInit {
  std::string_view name;
  int32_t data_type = 0;
  uint32_t dims_begin = 0, dims_end = 0;
  bool external = false;
  uint64_t bytes = 0;
  std::string_view location;
};

struct DGraph {
  std::string_view name;
  std::vector<DNode> nodes;
  std::vector<std::string_view> ins;
  std::vector<std::string_view> outs;
  std::vector<DAttr> attrs;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string_view> strings;
  std::vector<TensorRef> tensors;
  std::vector<uint32_t> graph_refs;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
  std::vector<DInit> inits;
  std::vector<int64_t> init_dims;
};

// The first pass: DecodeModel walks the whole ModelProto and fills the
// views, or returns false (malformed input, or something the direct path
// does not mirror) so that the reference path imports the file.
class Decoder {
 public:
  Decoder(std::string_view file, uint64_t file_size,
          const PrefetchHook& prefetch)
      : file_(file), file_size_(file_size), prefetch_(prefetch) {}

  bool DecodeModel(std::string_view bytes);

  std::deque<DGraph> graphs;  // [0] is the root
  std::vector<TypeInfo> types;
  std::vector<DimInfo> dims;
  std::string_view producer_name;
  std::string_view producer_version;
  std::vector<std::pair<std::string_view, int64_t>> opsets;
  bool uses_contrib_ops = false;

 private:
  bool DecodeGraph(const WireField& field, int depth, uint32_t* index);
  bool DecodeNode(uint32_t graph, const WireField& field, int depth);
  bool DecodeAttribute(uint32_t graph, const WireField& field, int depth);
  bool DecodeValueInfo(const WireField& field, ValueInfo* out);
  bool DecodeType(const WireField& field, uint32_t* index);
  bool DecodeTensorType(const WireField& field, TypeInfo* type);

  void Prefetch(uint64_t offset, uint64_t end) {
    if (!prefetch_ || end <= prefetched_until_) return;
    uint64_t begin = std::max(offset, prefetched_until_);
    prefetched_until_ =
        std::min(file_size_, std::max(end, begin + kPrefetchWindowBytes));
    prefetch_(begin, prefetched_until_);
  }

  std::string_view file_;
  uint64_t file_size_;
  const PrefetchHook& prefetch_;
  uint64_t prefetched_until_ = 0;
  TensorFacts scratch_;
};

}  // namespace mi::importers::onnx_import::direct_detail
