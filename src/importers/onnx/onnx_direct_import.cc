#include "importers/onnx/onnx_direct_import.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "importers/onnx/onnx_convert_util.h"
#include "importers/onnx/protobuf_wire_reader.h"

namespace mi::importers::onnx_import {
namespace {

// Every rule here mirrors what libprotobuf (proto2, onnx-ml.proto of
// libonnx 1.12) + OnnxModelConverter do with the same bytes. Where the two
// could differ (a singular message field given twice is merged by
// protobuf, a known field with an unexpected wire type becomes an unknown
// field, an enum value out of range, packed data of the wrong length, ...)
// the decoder declines and the reference path imports the file.

constexpr uint32_t kNone = ~uint32_t{0};
constexpr WireMessageSchema kAnySchema{"message", {}};

constexpr int32_t kDataTypeFloat = 1;
constexpr int32_t kDataTypeInt32 = 6;
constexpr int32_t kDataTypeInt64 = 7;
constexpr int32_t kAttributeTypeMax = 14;  // TYPE_PROTOS
constexpr int32_t kAttrFloat = 1, kAttrInt = 2, kAttrString = 3,
                  kAttrTensor = 4, kAttrGraph = 5, kAttrFloats = 6,
                  kAttrInts = 7, kAttrStrings = 8, kAttrTensors = 9,
                  kAttrGraphs = 10, kAttrSparseTensor = 11,
                  kAttrSparseTensors = 12, kAttrTypeProto = 13,
                  kAttrTypeProtos = 14;

bool IsLd(const WireField& f) { return f.type == WireType::kLengthDelimited; }
bool IsVarint(const WireField& f) { return f.type == WireType::kVarint; }

// Packed repeated varints; false when one is truncated or too long.
template <typename T>
bool AppendPackedVarints(std::string_view bytes, std::vector<T>* out) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t result = 0;
    bool done = false;
    for (int i = 0; i < 10 && pos < bytes.size(); ++i) {
      uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      if (i == 9 && byte > 1) return false;
      result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) {
        done = true;
        break;
      }
    }
    if (!done) return false;
    out->push_back(static_cast<T>(result));
  }
  return true;
}

template <typename T>
bool AppendPackedFixed(std::string_view bytes, std::vector<T>* out) {
  if (bytes.size() % sizeof(T) != 0) return false;
  size_t n = bytes.size() / sizeof(T);
  size_t old = out->size();
  out->resize(old + n);
  if (n > 0) std::memcpy(out->data() + old, bytes.data(), bytes.size());
  return true;
}

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

bool DecodeStringEntry(const WireField& field, std::string_view file,
                       std::string_view* key, std::string_view* value) {
  WireReader r(field.payload, field.payload_offset, kAnySchema, file);
  WireField f;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    if (f.number == 1 || f.number == 2) {
      if (!IsLd(f)) return false;
      (f.number == 1 ? *key : *value) = f.payload;
    }
  }
  return true;
}

bool DecodeTensor(std::string_view bytes, uint64_t offset,
                  std::string_view file, TensorFacts* t) {
  t->name = {};
  t->data_type = 0;
  t->dims.clear();
  t->external = false;
  t->location = {};
  t->length.reset();
  t->has_raw = false;
  t->raw = {};
  t->floats.clear();
  t->int32s.clear();
  t->int64s.clear();
  uint64_t raw_bytes = 0;
  uint64_t typed_bytes = 0;
  int64_t skeleton_data_type = 0;
  WireReader r(bytes, offset, kAnySchema, file);
  WireField f;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    switch (f.number) {
      case 1:  // dims
        if (IsVarint(f)) {
          t->dims.push_back(static_cast<int64_t>(f.value));
        } else if (!IsLd(f) || !AppendPackedVarints(f.payload, &t->dims)) {
          return false;
        }
        break;
      case 2:  // data_type
        if (!IsVarint(f)) return false;
        t->data_type = static_cast<int32_t>(f.value);
        skeleton_data_type = static_cast<int64_t>(f.value);
        break;
      case 3:  // segment
        return false;
      case 8:  // name
        if (!IsLd(f)) return false;
        t->name = f.payload;
        break;
      case 12:  // doc_string
        if (!IsLd(f)) return false;
        break;
      case 13: {  // external_data
        if (!IsLd(f)) return false;
        std::string_view key, value;
        if (!DecodeStringEntry(f, file, &key, &value)) return false;
        if (key == "location") {
          t->location = value;
        } else if (key == "length") {
          uint64_t parsed = 0;
          const char* begin = value.data();
          const char* end = begin + value.size();
          auto [ptr, ec] = std::from_chars(begin, end, parsed);
          if (ec == std::errc() && ptr == end) t->length = parsed;
        }
        break;
      }
      case 14:  // data_location
        if (!IsVarint(f)) return false;
        if (static_cast<int32_t>(f.value) == 0) {
          t->external = false;
        } else if (static_cast<int32_t>(f.value) == 1) {
          t->external = true;
        } else {
          return false;
        }
        break;
      case 4:  // float_data
        if (f.type != WireType::kFixed32 && !IsLd(f)) return false;
        typed_bytes += IsLd(f) ? f.value : f.raw.size();
        break;
      case 5:   // int32_data
      case 7:   // int64_data
      case 11:  // uint64_data
        if (!IsVarint(f) && !IsLd(f)) return false;
        typed_bytes += IsLd(f) ? f.value : f.raw.size();
        break;
      case 6:  // string_data
        if (!IsLd(f)) return false;
        typed_bytes += f.value;
        break;
      case 9:  // raw_data
        if (!IsLd(f)) return false;
        raw_bytes += f.value;
        break;
      case 10:  // double_data
        if (f.type != WireType::kFixed64 && !IsLd(f)) return false;
        typed_bytes += IsLd(f) ? f.value : f.raw.size();
        break;
      default:
        // The skeleton's own fields: a file carrying them would fool the
        // reference path; not worth mirroring.
        if (f.number == kSkeletonRawDataBytesField ||
            f.number == kSkeletonTypedDataBytesField) {
          return false;
        }
        break;
    }
  }
  uint64_t payload = raw_bytes + typed_bytes;
  bool is_int = skeleton_data_type == kDataTypeInt32 ||
                skeleton_data_type == kDataTypeInt64;
  bool kept = payload <= kKeptAnyPayloadBytes ||
              (is_int && payload <= kKeptIntPayloadBytes);
  if (!kept) {
    if (raw_bytes > 0) {
      t->inline_bytes = raw_bytes;
    } else if (typed_bytes > 0) {
      t->inline_bytes =
          ElementBytes(t->data_type, t->dims).value_or(typed_bytes);
    } else {
      t->inline_bytes = 0;
    }
    return true;
  }
  // Kept (at most 1 KiB): decode the payload as protobuf would.
  uint64_t strings = 0;
  size_t doubles = 0;
  std::vector<uint64_t> uint64s;
  WireReader r2(bytes, offset, kAnySchema, file);
  while (!r2.done()) {
    if (!r2.Next(&f).ok()) return false;
    switch (f.number) {
      case 4:
        if (IsLd(f)) {
          if (!AppendPackedFixed(f.payload, &t->floats)) return false;
        } else {
          t->floats.push_back(
              std::bit_cast<float>(static_cast<uint32_t>(f.value)));
        }
        break;
      case 5:
        if (IsLd(f)) {
          if (!AppendPackedVarints(f.payload, &t->int32s)) return false;
        } else {
          t->int32s.push_back(static_cast<int32_t>(f.value));
        }
        break;
      case 7:
        if (IsLd(f)) {
          if (!AppendPackedVarints(f.payload, &t->int64s)) return false;
        } else {
          t->int64s.push_back(static_cast<int64_t>(f.value));
        }
        break;
      case 11:
        if (IsLd(f)) {
          if (!AppendPackedVarints(f.payload, &uint64s)) return false;
        } else {
          uint64s.push_back(f.value);
        }
        break;
      case 6:
        strings += f.value;
        break;
      case 9:
        t->has_raw = true;
        t->raw = f.payload;
        break;
      case 10:
        if (IsLd(f)) {
          if (f.payload.size() % 8 != 0) return false;
          doubles += f.payload.size() / 8;
        } else {
          ++doubles;
        }
        break;
      default:
        break;
    }
  }
  if (t->has_raw) {
    t->inline_bytes = t->raw.size();
  } else if (!t->floats.empty() || !t->int32s.empty() || !t->int64s.empty() ||
             doubles > 0 || !uint64s.empty()) {
    t->inline_bytes = ElementBytes(t->data_type, t->dims).value_or(0);
  } else {
    t->inline_bytes = strings;
  }
  return true;
}

std::string DescribeTensor(const TensorFacts& t) {
  TensorDisplayView view;
  view.data_type = t.data_type;
  view.dims = t.dims;
  view.external = t.external;
  view.floats = t.floats;
  view.int32s = t.int32s;
  view.int64s = t.int64s;
  view.has_raw = t.has_raw;
  view.raw = t.raw;
  return onnx_import::DescribeTensor(view);
}

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

bool Decoder::DecodeModel(std::string_view bytes) {
  if (bytes.empty()) return false;
  Prefetch(0, 1);
  WireReader r(bytes, 0, kAnySchema, file_);
  WireField f;
  bool has_graph = false;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    switch (f.number) {
      case 1:  // ir_version
      case 5:  // model_version
        if (!IsVarint(f)) return false;
        break;
      case 2:
        if (!IsLd(f)) return false;
        producer_name = f.payload;
        break;
      case 3:
        if (!IsLd(f)) return false;
        producer_version = f.payload;
        break;
      case 4:  // domain
      case 6:  // doc_string
        if (!IsLd(f)) return false;
        break;
      case 7: {
        if (!IsLd(f) || has_graph) return false;
        has_graph = true;
        uint32_t index = 0;
        if (!DecodeGraph(f, 0, &index)) return false;
        break;
      }
      case 8: {  // opset_import
        if (!IsLd(f)) return false;
        std::string_view domain;
        int64_t version = 0;
        WireReader o(f.payload, f.payload_offset, kAnySchema, file_);
        WireField of;
        while (!o.done()) {
          if (!o.Next(&of).ok()) return false;
          if (of.number == 1) {
            if (!IsLd(of)) return false;
            domain = of.payload;
          } else if (of.number == 2) {
            if (!IsVarint(of)) return false;
            version = static_cast<int64_t>(of.value);
          }
        }
        opsets.emplace_back(domain, version);
        break;
      }
      case 14: {  // metadata_props
        if (!IsLd(f)) return false;
        std::string_view key, value;
        if (!DecodeStringEntry(f, file_, &key, &value)) return false;
        break;
      }
      case 20:  // training_info
      case 25:  // functions
        return false;
      default:
        break;
    }
  }
  return has_graph;
}

bool Decoder::DecodeGraph(const WireField& field, int depth, uint32_t* index) {
  if (depth > kMaxSubgraphDepth) return false;
  *index = static_cast<uint32_t>(graphs.size());
  graphs.emplace_back();
  DGraph& g = graphs.back();  // deque: stays valid while bodies are added
  WireReader r(field.payload, field.payload_offset, kAnySchema, file_);
  WireField f;
  while (!r.done()) {
    // The same read-ahead requests as the skeleton walker.
    Prefetch(r.offset(), r.offset() + 16);
    if (!r.Next(&f).ok()) return false;
    if (f.number != 5 && f.number != 15) {
      Prefetch(f.tag_offset, f.tag_offset + f.raw.size());
    }
    switch (f.number) {
      case 1:
        if (!IsLd(f) || !DecodeNode(*index, f, depth)) return false;
        break;
      case 2:
        if (!IsLd(f)) return false;
        g.name = f.payload;
        break;
      case 5: {
        if (!IsLd(f) ||
            !DecodeTensor(f.payload, f.payload_offset, file_, &scratch_)) {
          return false;
        }
        DInit init;
        init.name = scratch_.name;
        init.data_type = scratch_.data_type;
        init.dims_begin = static_cast<uint32_t>(g.init_dims.size());
        g.init_dims.insert(g.init_dims.end(), scratch_.dims.begin(),
                           scratch_.dims.end());
        init.dims_end = static_cast<uint32_t>(g.init_dims.size());
        init.external = scratch_.external;
        init.location = scratch_.location;
        if (scratch_.external) {
          std::optional<uint64_t> length = scratch_.length;
          if (!length) length = ElementBytes(init.data_type, scratch_.dims);
          init.bytes = length.value_or(0);
        } else {
          init.bytes = scratch_.inline_bytes;
        }
        g.inits.push_back(init);
        break;
      }
      case 10:  // doc_string
        if (!IsLd(f)) return false;
        break;
      case 11:
      case 12:
      case 13: {
        if (!IsLd(f)) return false;
        ValueInfo info;
        if (!DecodeValueInfo(f, &info)) return false;
        (f.number == 11   ? g.inputs
         : f.number == 12 ? g.outputs
                          : g.value_info)
            .push_back(info);
        break;
      }
      case 14:  // quantization_annotation
      case 15:  // sparse_initializer
        return false;
      default:
        break;
    }
  }
  return true;
}

bool Decoder::DecodeNode(uint32_t graph, const WireField& field, int depth) {
  DNode node;
  node.offset = field.tag_offset;
  {
    DGraph& g = graphs[graph];
    node.in_begin = static_cast<uint32_t>(g.ins.size());
    node.out_begin = static_cast<uint32_t>(g.outs.size());
    node.attr_begin = static_cast<uint32_t>(g.attrs.size());
  }
  WireReader r(field.payload, field.payload_offset, kAnySchema, file_);
  WireField f;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    switch (f.number) {
      case 1:
        if (!IsLd(f)) return false;
        graphs[graph].ins.push_back(f.payload);
        break;
      case 2:
        if (!IsLd(f)) return false;
        graphs[graph].outs.push_back(f.payload);
        break;
      case 3:
        if (!IsLd(f)) return false;
        node.name = f.payload;
        break;
      case 4:
        if (!IsLd(f)) return false;
        node.op_type = f.payload;
        break;
      case 7:
        if (!IsLd(f)) return false;
        node.domain = f.payload;
        break;
      case 5:
        if (!IsLd(f) || !DecodeAttribute(graph, f, depth)) return false;
        break;
      case 6:
        if (!IsLd(f)) return false;
        break;
      default:
        break;
    }
  }
  DGraph& g = graphs[graph];
  node.in_end = static_cast<uint32_t>(g.ins.size());
  node.out_end = static_cast<uint32_t>(g.outs.size());
  node.attr_end = static_cast<uint32_t>(g.attrs.size());
  if (IsOrtContribDomain(node.domain)) uses_contrib_ops = true;
  g.nodes.push_back(node);
  return true;
}

bool Decoder::DecodeAttribute(uint32_t graph, const WireField& field,
                              int depth) {
  DAttr a;
  {
    DGraph& g = graphs[graph];
    a.floats_begin = static_cast<uint32_t>(g.floats.size());
    a.ints_begin = static_cast<uint32_t>(g.ints.size());
    a.strings_begin = static_cast<uint32_t>(g.strings.size());
    a.tensors_begin = static_cast<uint32_t>(g.tensors.size());
    a.graphs_begin = static_cast<uint32_t>(g.graph_refs.size());
  }
  WireReader r(field.payload, field.payload_offset, kAnySchema, file_);
  WireField f;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    switch (f.number) {
      case 1:
        if (!IsLd(f)) return false;
        a.name = f.payload;
        break;
      case 21:
        if (!IsLd(f)) return false;
        a.ref_attr_name = f.payload;
        break;
      case 13:
        if (!IsLd(f)) return false;
        break;
      case 20: {
        if (!IsVarint(f)) return false;
        int32_t type = static_cast<int32_t>(f.value);
        if (type < 0 || type > kAttributeTypeMax) return false;
        a.type = type;
        break;
      }
      case 2:
        if (f.type != WireType::kFixed32) return false;
        a.f = std::bit_cast<float>(static_cast<uint32_t>(f.value));
        a.has_f = true;
        break;
      case 3:
        if (!IsVarint(f)) return false;
        a.i = static_cast<int64_t>(f.value);
        a.has_i = true;
        break;
      case 4:
        if (!IsLd(f)) return false;
        a.s = f.payload;
        a.has_s = true;
        break;
      case 5:
        if (!IsLd(f) || a.has_t ||
            !DecodeTensor(f.payload, f.payload_offset, file_, &scratch_)) {
          return false;
        }
        a.has_t = true;
        a.t = {f.payload, f.payload_offset};
        break;
      case 6:
        if (!IsLd(f) || a.g != kNone || !DecodeGraph(f, depth + 1, &a.g)) {
          return false;
        }
        break;
      case 7:
        if (f.type == WireType::kFixed32) {
          graphs[graph].floats.push_back(
              std::bit_cast<float>(static_cast<uint32_t>(f.value)));
        } else if (!IsLd(f) ||
                   !AppendPackedFixed(f.payload, &graphs[graph].floats)) {
          return false;
        }
        break;
      case 8:
        if (IsVarint(f)) {
          graphs[graph].ints.push_back(static_cast<int64_t>(f.value));
        } else if (!IsLd(f) ||
                   !AppendPackedVarints(f.payload, &graphs[graph].ints)) {
          return false;
        }
        break;
      case 9:
        if (!IsLd(f)) return false;
        graphs[graph].strings.push_back(f.payload);
        break;
      case 10:
        if (!IsLd(f) ||
            !DecodeTensor(f.payload, f.payload_offset, file_, &scratch_)) {
          return false;
        }
        graphs[graph].tensors.push_back({f.payload, f.payload_offset});
        break;
      case 11: {
        uint32_t index = 0;
        if (!IsLd(f) || !DecodeGraph(f, depth + 1, &index)) return false;
        graphs[graph].graph_refs.push_back(index);
        break;
      }
      case 14:  // tp
      case 15:  // type_protos
      case 22:  // sparse_tensor
      case 23:  // sparse_tensors
        return false;
      default:
        break;
    }
  }
  DGraph& g = graphs[graph];
  a.floats_end = static_cast<uint32_t>(g.floats.size());
  a.ints_end = static_cast<uint32_t>(g.ints.size());
  a.strings_end = static_cast<uint32_t>(g.strings.size());
  a.tensors_end = static_cast<uint32_t>(g.tensors.size());
  a.graphs_end = static_cast<uint32_t>(g.graph_refs.size());
  g.attrs.push_back(a);
  return true;
}

bool Decoder::DecodeValueInfo(const WireField& field, ValueInfo* out) {
  WireReader r(field.payload, field.payload_offset, kAnySchema, file_);
  WireField f;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    switch (f.number) {
      case 1:
        if (!IsLd(f)) return false;
        out->name = f.payload;
        break;
      case 2:
        if (!IsLd(f) || out->type != kNone || !DecodeType(f, &out->type)) {
          return false;
        }
        break;
      case 3:
        if (!IsLd(f)) return false;
        break;
      default:
        break;
    }
  }
  return true;
}

bool Decoder::DecodeType(const WireField& field, uint32_t* index) {
  TypeInfo type;
  WireReader r(field.payload, field.payload_offset, kAnySchema, file_);
  WireField f;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    switch (f.number) {
      case 1:  // tensor_type
      case 8:  // sparse_tensor_type
        if (!IsLd(f) || type.kind != 0) return false;
        type.kind = f.number == 1 ? 1 : 2;
        if (!DecodeTensorType(f, &type)) return false;
        break;
      case 4:  // sequence_type
      case 5:  // map_type
      case 9:  // optional_type
        return false;
      case 6:  // denotation
        if (!IsLd(f)) return false;
        break;
      default:
        break;
    }
  }
  *index = static_cast<uint32_t>(types.size());
  types.push_back(type);
  return true;
}

bool Decoder::DecodeTensorType(const WireField& field, TypeInfo* type) {
  WireReader r(field.payload, field.payload_offset, kAnySchema, file_);
  WireField f;
  while (!r.done()) {
    if (!r.Next(&f).ok()) return false;
    if (f.number == 1) {
      if (!IsVarint(f)) return false;
      type->elem_type = static_cast<int32_t>(f.value);
    } else if (f.number == 2) {
      if (!IsLd(f) || type->has_shape) return false;
      type->has_shape = true;
      type->dim_begin = static_cast<uint32_t>(dims.size());
      WireReader s(f.payload, f.payload_offset, kAnySchema, file_);
      WireField sf;
      while (!s.done()) {
        if (!s.Next(&sf).ok()) return false;
        if (sf.number != 1) continue;
        if (!IsLd(sf)) return false;
        DimInfo dim;
        WireReader d(sf.payload, sf.payload_offset, kAnySchema, file_);
        WireField df;
        while (!d.done()) {
          if (!d.Next(&df).ok()) return false;
          if (df.number == 1) {
            if (!IsVarint(df)) return false;
            dim.value = static_cast<int64_t>(df.value);
            dim.param = {};
            dim.which = 1;
          } else if (df.number == 2) {
            if (!IsLd(df)) return false;
            dim.param = df.payload;
            dim.value = 0;
            dim.which = 2;
          } else if (df.number == 3) {
            if (!IsLd(df)) return false;
          }
        }
        dims.push_back(dim);
      }
      type->dim_end = static_cast<uint32_t>(dims.size());
    }
  }
  return true;
}

// ---- per-graph name table (string_view -> local value) ----

uint64_t HashName(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  if (n > 0) std::memcpy(&w, p, n);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return h;
}

struct LocalValue {
  ValueId id;  // valid once something in the graph produces the name
  uint32_t type = kNone;
  bool known_shape = false;
  bool initializer = false;
};

class NameTable {
 public:
  void Reserve(size_t n) {
    size_t capacity = 64;
    while (capacity < n * 2) capacity *= 2;
    if (capacity > slots_.size()) Rehash(capacity);
    keys_.reserve(n);
    values_.reserve(n);
  }
  LocalValue& Get(std::string_view name) {
    if ((keys_.size() + 1) * 2 > slots_.size()) {
      Rehash(std::max<size_t>(64, slots_.size() * 2));
    }
    uint64_t h = HashName(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      uint32_t slot = slots_[i];
      if (slot == kNone) {
        slots_[i] = static_cast<uint32_t>(keys_.size());
        keys_.push_back(name);
        hashes_.push_back(h);
        values_.emplace_back();
        return values_.back();
      }
      if (hashes_[slot] == h && keys_[slot] == name) return values_[slot];
    }
  }
  const LocalValue* Find(std::string_view name) const {
    if (keys_.empty()) return nullptr;
    uint64_t h = HashName(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      uint32_t slot = slots_[i];
      if (slot == kNone) return nullptr;
      if (hashes_[slot] == h && keys_[slot] == name) return &values_[slot];
    }
  }

 private:
  void Rehash(size_t capacity) {
    slots_.assign(capacity, kNone);
    mask_ = capacity - 1;
    for (uint32_t k = 0; k < keys_.size(); ++k) {
      for (size_t i = hashes_[k] & mask_;; i = (i + 1) & mask_) {
        if (slots_[i] == kNone) {
          slots_[i] = k;
          break;
        }
      }
    }
  }
  std::vector<uint32_t> slots_;
  size_t mask_ = 0;
  std::vector<std::string_view> keys_;
  std::vector<uint64_t> hashes_;
  std::vector<LocalValue> values_;
};

// ---- conversion (mirrors OnnxModelConverter) ----

class DirectConverter {
 public:
  DirectConverter(const Decoder& d, const OnnxConvertOptions& options,
                  ImportContext& ctx)
      : d_(d), options_(options), ctx_(ctx), model_(*ctx.model) {}

  // Builds the name tables; false when some node output needs inference.
  bool Prepare();
  void Convert();

 private:
  struct PendingBody {
    uint32_t graph_index;
    GraphId graph;
  };
  void ConvertGraph(uint32_t index, GraphId graph);
  Attribute ConvertAttribute(const DGraph& g, const DAttr& attr, GraphId graph,
                             NodeId node, std::string_view node_name,
                             std::vector<PendingBody>* bodies);
  ValueId ResolveInput(uint32_t index, GraphId graph, std::string_view name,
                       bool* found);
  void ApplyType(ValueId value, uint32_t type);
  void RecordInitializer(ValueId value, const DGraph& g, const DInit& init);
  SourceLocation NodeLocation(const DNode& node) const {
    SourceLocation location;
    location.file = ctx_.path;
    location.byte = node.offset;
    location.has_byte = true;
    return location;
  }
  void Report(DiagnosticCode code, SourceLocation location,
              std::string message) {
    if (ctx_.diagnostics != nullptr) {
      ctx_.diagnostics->Report(code, std::move(location), std::move(message));
    }
  }

  const Decoder& d_;
  const OnnxConvertOptions& options_;
  ImportContext& ctx_;
  Model& model_;
  LayerLevel level_ = LayerLevel::kFramework;
  std::vector<NameTable> tables_;
  std::vector<uint32_t> outer_;  // enclosing graph index per graph index
  DGraph empty_graph_;
  std::vector<int64_t> dims_scratch_;
  std::vector<StringId> names_scratch_;
  TensorFacts tensor_scratch_;
};

bool DirectConverter::Prepare() {
  tables_.resize(d_.graphs.size());
  outer_.assign(d_.graphs.size(), kNone);
  for (size_t gi = 0; gi < d_.graphs.size(); ++gi) {
    const DGraph& g = d_.graphs[gi];
    for (uint32_t ref : g.graph_refs) outer_[ref] = static_cast<uint32_t>(gi);
    for (const DAttr& a : g.attrs) {
      if (a.g != kNone) outer_[a.g] = static_cast<uint32_t>(gi);
    }
    NameTable& table = tables_[gi];
    table.Reserve(g.value_info.size() + g.inputs.size() + g.inits.size() +
                  g.nodes.size() * 2 + 16);
    for (const auto* list : {&g.value_info, &g.inputs, &g.outputs}) {
      for (const ValueInfo& info : *list) {
        if (info.type == kNone) continue;
        LocalValue& local = table.Get(info.name);
        local.type = info.type;
        if (d_.types[info.type].Known()) local.known_shape = true;
      }
    }
    for (std::string_view output : g.outs) {
      if (output.empty()) continue;
      const LocalValue* local = table.Find(output);
      if (local == nullptr || !local->known_shape) return false;
    }
  }
  return true;
}

void DirectConverter::Convert() {
  level_ = ChooseLevel(ctx_.level_hint, d_.uses_contrib_ops);
  const DGraph& graph = d_.graphs[0];
  model_.strings().Reserve(graph.nodes.size() * 3 + graph.value_info.size());
  GraphId root = model_.AddGraph(level_, graph.name, ctx_.path);
  GraphInfo& info = model_.mutable_graph(root);
  std::string producer(d_.producer_name);
  if (!d_.producer_version.empty()) {
    if (!producer.empty()) producer.push_back(' ');
    producer += d_.producer_version;
  }
  info.producer = model_.strings().Intern(producer);
  for (const auto& [domain, version] : d_.opsets) {
    if (domain.empty() || domain == "ai.onnx") info.opset = version;
    info.opset_imports.emplace_back(model_.strings().Intern(domain), version);
  }
  ConvertGraph(0, root);
  ctx_.graphs_added.push_back(root);
}

void DirectConverter::ApplyType(ValueId value, uint32_t type_index) {
  const TypeInfo& type = d_.types[type_index];
  if (type.kind == 0) return;
  if (type.kind == 1) {
    if (type.elem_type != 0) model_.SetValueType(value, type.elem_type);
  } else {
    model_.SetValueType(value, type.elem_type);
  }
  if (!type.has_shape) return;
  dims_scratch_.clear();
  names_scratch_.clear();
  for (uint32_t k = type.dim_begin; k < type.dim_end; ++k) {
    const DimInfo& dim = d_.dims[k];
    bool known = dim.which == 1 && dim.value >= 0;
    dims_scratch_.push_back(known ? dim.value : -1);
    names_scratch_.push_back(dim.which == 2 ? model_.strings().Intern(dim.param)
                                            : StringPool::kEmpty);
  }
  model_.SetValueShape(value, dims_scratch_, names_scratch_);
}

void DirectConverter::RecordInitializer(ValueId value, const DGraph& g,
                                        const DInit& init) {
  std::span<const int64_t> dims(g.init_dims.data() + init.dims_begin,
                                init.dims_end - init.dims_begin);
  model_.SetValueType(value, init.data_type);
  dims_scratch_.assign(dims.begin(), dims.end());
  for (int64_t& dim : dims_scratch_) {
    if (dim < 0) dim = -1;
  }
  names_scratch_.assign(dims_scratch_.size(), StringPool::kEmpty);
  model_.SetValueShape(value, dims_scratch_, names_scratch_);
  uint8_t flags = kValueInitializer;
  if (!init.external) {
    model_.AddValueFlags(value, flags);
    model_.SetValueData(value, init.bytes, StringPool::kEmpty);
    return;
  }
  flags |= kValueExternalData;
  std::string_view location = init.location;
  model_.AddValueFlags(value, flags);
  model_.SetValueData(value, init.bytes, model_.strings().Intern(location));

  // The data file is only stat()ed, never opened: the weights stay unread.
  if (options_.model_directory.empty()) return;
  SourceLocation where{ctx_.path};
  if (location.empty()) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}' is external but names no location",
                       ShortString(init.name)));
    return;
  }
  if (location.front() == '/' || location.find("..") != std::string::npos) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}': external data location '{}' is not "
                       "inside the model's directory; not looked up",
                       ShortString(init.name), ShortString(location)));
    return;
  }
  std::string path = options_.model_directory + "/" + std::string(location);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    Report(DiagnosticCode::kExternalDataMissing, where,
           fmt::format("initializer '{}': external data file '{}' is missing",
                       ShortString(init.name), ShortString(path)));
  }
}

ValueId DirectConverter::ResolveInput(uint32_t index, GraphId graph,
                                      std::string_view name, bool* found) {
  for (uint32_t s = index; s != kNone; s = outer_[s]) {
    const LocalValue* local = tables_[s].Find(name);
    if (local != nullptr && local->id.valid()) {
      *found = true;
      return local->id;
    }
  }
  *found = false;
  return model_.GetOrAddValue(graph, name);
}

Attribute DirectConverter::ConvertAttribute(const DGraph& g, const DAttr& attr,
                                            GraphId graph, NodeId node,
                                            std::string_view node_name,
                                            std::vector<PendingBody>* bodies) {
  Attribute out;
  out.name = model_.strings().Intern(attr.name);
  switch (attr.type) {
    case kAttrFloat:
      out.kind = AttributeKind::kFloat;
      break;
    case kAttrInt:
      out.kind = AttributeKind::kInt;
      break;
    case kAttrString:
      out.kind = AttributeKind::kString;
      break;
    case kAttrTensor:
      out.kind = AttributeKind::kTensor;
      break;
    case kAttrGraph:
      out.kind = AttributeKind::kGraph;
      break;
    case kAttrFloats:
      out.kind = AttributeKind::kFloats;
      break;
    case kAttrInts:
      out.kind = AttributeKind::kInts;
      break;
    case kAttrStrings:
      out.kind = AttributeKind::kStrings;
      break;
    case kAttrTensors:
      out.kind = AttributeKind::kTensors;
      break;
    case kAttrGraphs:
      out.kind = AttributeKind::kGraphs;
      break;
    case kAttrSparseTensor:
      out.kind = AttributeKind::kSparseTensor;
      break;
    case kAttrTypeProto:
      out.kind = AttributeKind::kTypeProto;
      break;
    case kAttrSparseTensors:
    case kAttrTypeProtos:
      out.kind = AttributeKind::kOther;
      break;
    default:
      // IR version 1 files carry no type: infer it from the field set.
      if (attr.has_f) {
        out.kind = AttributeKind::kFloat;
      } else if (attr.has_i) {
        out.kind = AttributeKind::kInt;
      } else if (attr.has_s) {
        out.kind = AttributeKind::kString;
      } else if (attr.has_t) {
        out.kind = AttributeKind::kTensor;
      } else if (attr.g != kNone) {
        out.kind = AttributeKind::kGraph;
      } else if (attr.floats_end > attr.floats_begin) {
        out.kind = AttributeKind::kFloats;
      } else if (attr.ints_end > attr.ints_begin) {
        out.kind = AttributeKind::kInts;
      } else if (attr.strings_end > attr.strings_begin) {
        out.kind = AttributeKind::kStrings;
      } else if (attr.tensors_end > attr.tensors_begin) {
        out.kind = AttributeKind::kTensors;
      } else if (attr.graphs_end > attr.graphs_begin) {
        out.kind = AttributeKind::kGraphs;
      } else {
        out.kind = AttributeKind::kUndefined;
      }
      break;
  }
  std::string text;
  auto number = [](auto v) { return fmt::format("{}", v); };
  auto quoted = [](std::string_view s) {
    return fmt::format("\"{}\"", ShortString(s));
  };
  auto describe = [&](const TensorRef& ref) {
    // Decoded once already in the first pass; cannot fail now.
    if (!DecodeTensor(ref.bytes, ref.offset, ctx_.path, &tensor_scratch_)) {
      return std::string();
    }
    return DescribeTensor(tensor_scratch_);
  };
  auto body_graph = [&](uint32_t index) -> const DGraph& {
    return index == kNone ? empty_graph_ : d_.graphs[index];
  };
  auto add_body = [&](uint32_t index) {
    std::string_view body_name = body_graph(index).name;
    std::string name = body_name.empty()
                           ? fmt::format("{}/{}", node_name, attr.name)
                           : std::string(body_name);
    GraphId id = model_.AddGraph(level_, name, ctx_.path, graph, node);
    bodies->push_back({index, id});
    return id;
  };
  auto span_of = [](const auto& items, uint32_t begin, uint32_t end) {
    return std::span(items.data() + begin, end - begin);
  };
  switch (out.kind) {
    case AttributeKind::kFloat:
      out.float_value = attr.f;
      break;
    case AttributeKind::kInt:
      out.int_value = attr.i;
      break;
    case AttributeKind::kString:
      text = ShortString(attr.s);
      break;
    case AttributeKind::kTensor:
      text = describe(attr.t);
      break;
    case AttributeKind::kGraph:
      out.subgraph = add_body(attr.g);
      text = fmt::format("graph {}", ShortString(body_graph(attr.g).name));
      break;
    case AttributeKind::kFloats:
      text = FormatList(span_of(g.floats, attr.floats_begin, attr.floats_end),
                        number);
      break;
    case AttributeKind::kInts:
      text =
          FormatList(span_of(g.ints, attr.ints_begin, attr.ints_end), number);
      break;
    case AttributeKind::kStrings:
      text = FormatList(
          span_of(g.strings, attr.strings_begin, attr.strings_end), quoted);
      break;
    case AttributeKind::kTensors:
      text = FormatList(
          span_of(g.tensors, attr.tensors_begin, attr.tensors_end), describe);
      break;
    case AttributeKind::kGraphs:
      for (uint32_t k = attr.graphs_begin; k < attr.graphs_end; ++k) {
        GraphId id = add_body(g.graph_refs[k]);
        if (!out.subgraph.valid()) out.subgraph = id;
      }
      text =
          fmt::format("graphs ({} items)", attr.graphs_end - attr.graphs_begin);
      break;
    case AttributeKind::kSparseTensor:
      // The decoder declines sparse_tensor fields: this is the default.
      text = fmt::format("sparse_tensor {}{}", DataTypeName(0),
                         FormatDims(std::span<const int64_t>()));
      break;
    case AttributeKind::kTypeProto:
      text = "type";
      break;
    case AttributeKind::kOther:
    case AttributeKind::kUndefined:
      if (!attr.ref_attr_name.empty()) {
        text = "@" + ShortString(attr.ref_attr_name);
      }
      break;
  }
  out.text = model_.strings().Intern(text);
  return out;
}

void DirectConverter::ConvertGraph(uint32_t index, GraphId graph) {
  const DGraph& g = index == kNone ? empty_graph_ : d_.graphs[index];
  NameTable empty_table;
  NameTable& table = index == kNone ? empty_table : tables_[index];
  auto produce = [&](std::string_view name) {
    LocalValue& local = table.Get(name);
    if (!local.id.valid()) {
      local.id = model_.GetOrAddValue(graph, name);
      if (local.type != kNone) ApplyType(local.id, local.type);
    }
    return local.id;
  };

  for (const DInit& init : g.inits) {
    ValueId value = produce(init.name);
    table.Get(init.name).initializer = true;
    RecordInitializer(value, g, init);
  }
  for (const ValueInfo& input : g.inputs) {
    ValueId value = produce(input.name);
    // IR < 4 lists every initializer as a graph input too; those are
    // weights, not inputs a user feeds.
    if (table.Get(input.name).initializer) continue;
    model_.AddValueFlags(value, kValueGraphInput);
    model_.mutable_graph(graph).inputs.push_back(value);
  }
  for (std::string_view output : g.outs) {
    if (!output.empty()) produce(output);
  }

  std::vector<PendingBody> bodies;
  std::string graph_name(model_.str(model_.graph(graph).name));
  std::string name;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const DNode& node_info = g.nodes[n];
    // ONNX Runtime's profiler names unnamed nodes "<OpType>_<index>".
    if (node_info.name.empty()) {
      name = fmt::format("{}_{}", node_info.op_type, n);
    } else {
      name.assign(node_info.name);
    }
    NodeId node =
        model_.AddNode(graph, node_info.op_type, node_info.domain, name);
    for (uint32_t k = node_info.in_begin; k < node_info.in_end; ++k) {
      std::string_view input = g.ins[k];
      if (input.empty()) {
        model_.AddNodeInput(node, ValueId::Invalid());
        continue;
      }
      bool found = false;
      ValueId value = ResolveInput(index, graph, input, &found);
      if (!found) {
        Report(DiagnosticCode::kDanglingInput, NodeLocation(node_info),
               fmt::format("node '{}' ({}) input {} '{}' is produced by no "
                           "node, graph input or initializer of graph '{}' "
                           "or an enclosing graph",
                           ShortString(name), ShortString(node_info.op_type),
                           k - node_info.in_begin, ShortString(input),
                           ShortString(graph_name)));
      }
      model_.AddNodeInput(node, value);
    }
    for (uint32_t k = node_info.out_begin; k < node_info.out_end; ++k) {
      std::string_view output = g.outs[k];
      model_.AddNodeOutput(
          node, output.empty() ? ValueId::Invalid() : table.Get(output).id);
    }
    for (uint32_t k = node_info.attr_begin; k < node_info.attr_end; ++k) {
      model_.AddNodeAttribute(
          node, ConvertAttribute(g, g.attrs[k], graph, node, name, &bodies));
    }
  }
  for (const ValueInfo& output : g.outputs) {
    bool found = false;
    ValueId value = ResolveInput(index, graph, output.name, &found);
    if (!found) {
      Report(DiagnosticCode::kDanglingInput, SourceLocation{ctx_.path},
             fmt::format("graph output '{}' of graph '{}' is produced by no "
                         "node, graph input or initializer",
                         ShortString(output.name),
                         ShortString(model_.str(model_.graph(graph).name))));
      if (output.type != kNone) ApplyType(value, output.type);
    }
    model_.AddValueFlags(value, kValueGraphOutput);
    model_.mutable_graph(graph).outputs.push_back(value);
  }

  model_.AssignScopesFromNames(graph);
  CheckGraphCycles(
      model_, graph, [&](size_t i) { return NodeLocation(g.nodes[i]); },
      [&](DiagnosticCode code, SourceLocation location, std::string message) {
        Report(code, std::move(location), std::move(message));
      });

  for (const PendingBody& body : bodies) {
    // kNone: an absent body (type GRAPH, no g) is an empty graph.
    ConvertGraph(body.graph_index, body.graph);
  }
}

}  // namespace

bool TryImportOnnxDirect(std::string_view file_bytes,
                         const OnnxConvertOptions& options, ImportContext& ctx,
                         const PrefetchHook& prefetch) {
  if (ctx.model == nullptr) return false;
  Decoder decoder(ctx.path, file_bytes.size(), prefetch);
  if (!decoder.DecodeModel(file_bytes)) return false;
  DirectConverter converter(decoder, options, ctx);
  if (!converter.Prepare()) return false;
  converter.Convert();
  return true;
}

}  // namespace mi::importers::onnx_import
