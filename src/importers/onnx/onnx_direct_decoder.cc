#include "importers/onnx/onnx_direct_internal.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "importers/common/protobuf_wire_reader.h"
#include "importers/onnx/onnx_convert_util.h"
#include "importers/onnx/onnx_skeleton.h"

namespace mi::importers::onnx_import::direct_detail {
namespace {

// Every rule here mirrors what libprotobuf (proto2, onnx-ml.proto of
// libonnx 1.12) + OnnxModelConverter do with the same bytes. Where the two
// could differ (a singular message field given twice is merged by
// protobuf, a known field with an unexpected wire type becomes an unknown
// field, an enum value out of range, packed data of the wrong length, ...)
// the decoder declines and the reference path imports the file.

constexpr WireMessageSchema kAnySchema{"message", {}};

constexpr int32_t kDataTypeInt32 = 6;
constexpr int32_t kDataTypeInt64 = 7;
constexpr int32_t kAttributeTypeMax = 14;  // TYPE_PROTOS

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

}  // namespace

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
          std::optional<uint64_t> parsed = ParseInteger<uint64_t>(value);
          if (parsed) t->length = *parsed;
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

}  // namespace mi::importers::onnx_import::direct_detail
