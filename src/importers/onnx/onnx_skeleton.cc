#include "importers/onnx/onnx_skeleton.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "importers/common/protobuf_wire_reader.h"

namespace mi::importers::onnx_import {
namespace {

constexpr WireFieldName kModelFields[] = {
    {1, "ir_version"},     {2, "producer_name"}, {3, "producer_version"},
    {4, "domain"},         {5, "model_version"}, {6, "doc_string"},
    {7, "graph"},          {8, "opset_import"},  {14, "metadata_props"},
    {20, "training_info"}, {25, "functions"}};
constexpr WireFieldName kGraphFields[] = {{1, "node"},
                                          {2, "name"},
                                          {5, "initializer"},
                                          {15, "sparse_initializer"},
                                          {10, "doc_string"},
                                          {11, "input"},
                                          {12, "output"},
                                          {13, "value_info"},
                                          {14, "quantization_annotation"}};
constexpr WireFieldName kNodeFields[] = {
    {1, "input"},  {2, "output"},    {3, "name"},      {4, "op_type"},
    {7, "domain"}, {5, "attribute"}, {6, "doc_string"}};
constexpr WireFieldName kAttributeFields[] = {{1, "name"},
                                              {21, "ref_attr_name"},
                                              {13, "doc_string"},
                                              {20, "type"},
                                              {2, "f"},
                                              {3, "i"},
                                              {4, "s"},
                                              {5, "t"},
                                              {6, "g"},
                                              {22, "sparse_tensor"},
                                              {14, "tp"},
                                              {7, "floats"},
                                              {8, "ints"},
                                              {9, "strings"},
                                              {10, "tensors"},
                                              {11, "graphs"},
                                              {23, "sparse_tensors"},
                                              {15, "type_protos"}};
constexpr WireFieldName kTensorFields[] = {
    {1, "dims"},         {2, "data_type"},      {3, "segment"},
    {4, "float_data"},   {5, "int32_data"},     {6, "string_data"},
    {7, "int64_data"},   {8, "name"},           {12, "doc_string"},
    {9, "raw_data"},     {13, "external_data"}, {14, "data_location"},
    {10, "double_data"}, {11, "uint64_data"}};
constexpr WireFieldName kSparseTensorFields[] = {
    {1, "values"}, {2, "indices"}, {3, "dims"}};
constexpr WireFieldName kTrainingInfoFields[] = {{1, "initialization"},
                                                 {2, "algorithm"},
                                                 {3, "initialization_binding"},
                                                 {4, "update_binding"}};
constexpr WireFieldName kFunctionFields[] = {
    {1, "name"}, {4, "input"},      {5, "output"},       {6, "attribute"},
    {7, "node"}, {8, "doc_string"}, {9, "opset_import"}, {10, "domain"}};

constexpr WireMessageSchema kModelSchema{"ModelProto", kModelFields};
constexpr WireMessageSchema kGraphSchema{"GraphProto", kGraphFields};
constexpr WireMessageSchema kNodeSchema{"NodeProto", kNodeFields};
constexpr WireMessageSchema kAttributeSchema{"AttributeProto",
                                             kAttributeFields};
constexpr WireMessageSchema kTensorSchema{"TensorProto", kTensorFields};
constexpr WireMessageSchema kSparseTensorSchema{"SparseTensorProto",
                                                kSparseTensorFields};
constexpr WireMessageSchema kTrainingInfoSchema{"TrainingInfoProto",
                                                kTrainingInfoFields};
constexpr WireMessageSchema kFunctionSchema{"FunctionProto", kFunctionFields};

constexpr int32_t kDataTypeInt32 = 6;
constexpr int32_t kDataTypeInt64 = 7;

bool IsTensorPayloadField(uint32_t number) {
  switch (number) {
    case 4:   // float_data
    case 5:   // int32_data
    case 6:   // string_data
    case 7:   // int64_data
    case 9:   // raw_data
    case 10:  // double_data
    case 11:  // uint64_data
      return true;
    default:
      return false;
  }
}

class SkeletonBuilder {
 public:
  SkeletonBuilder(std::string_view file, uint64_t file_size,
                  PrefetchHook prefetch)
      : file_(file), file_size_(file_size), prefetch_(std::move(prefetch)) {}

  Status WalkModel(std::string_view bytes, std::string* out);
  const OnnxSkeleton& stats() const { return stats_; }

 private:
  // Every walker appends the skeleton of the message in `field.payload`
  // (whose reader is `parent`) to `out` as field `field.number`.
  using Walker = Status (SkeletonBuilder::*)(const WireField& field, int depth,
                                             std::string* out);

  Status Descend(const WireReader& parent, const WireField& field,
                 Walker walker, int depth, std::string* out);
  Status WalkGraph(const WireField& field, int depth, std::string* out);
  Status WalkNode(const WireField& field, int depth, std::string* out);
  Status WalkAttribute(const WireField& field, int depth, std::string* out);
  Status WalkTensor(const WireField& field, int depth, std::string* out);
  Status WalkSparseTensor(const WireField& field, int depth, std::string* out);
  Status WalkTrainingInfo(const WireField& field, int depth, std::string* out);
  Status WalkFunction(const WireField& field, int depth, std::string* out);

  // Asks for the structure from `offset` on to be read ahead, one window
  // at a time.
  void Prefetch(uint64_t offset, uint64_t end) {
    if (!prefetch_ || end <= prefetched_until_) return;
    uint64_t begin = std::max(offset, prefetched_until_);
    prefetched_until_ =
        std::min(file_size_, std::max(end, begin + kPrefetchWindowBytes));
    prefetch_(begin, prefetched_until_);
  }

  std::string_view file_;
  uint64_t file_size_;
  PrefetchHook prefetch_;
  uint64_t prefetched_until_ = 0;
  OnnxSkeleton stats_;
};

Status SkeletonBuilder::Descend(const WireReader& parent,
                                const WireField& field, Walker walker,
                                int depth, std::string* out) {
  if (field.type != WireType::kLengthDelimited) {
    return parent.FieldError(field, "has the wrong wire type",
                             "2 (length-delimited, a nested message)",
                             std::to_string(static_cast<int>(field.type)));
  }
  std::string nested;
  MI_RETURN_IF_ERROR((this->*walker)(field, depth, &nested));
  AppendLengthDelimited(out, field.number, nested);
  return Status::Ok();
}

Status SkeletonBuilder::WalkModel(std::string_view bytes, std::string* out) {
  if (bytes.empty()) {
    return MalformedInputError(
        fmt::format("{}@byte 0: empty file; expected an ONNX ModelProto, "
                    "found 0 bytes",
                    file_));
  }
  Prefetch(0, 1);
  WireReader reader(bytes, 0, kModelSchema, file_);
  bool has_graph = false;
  while (!reader.done()) {
    WireField field;
    MI_RETURN_IF_ERROR(reader.Next(&field));
    switch (field.number) {
      case 7:
        has_graph = true;
        MI_RETURN_IF_ERROR(Descend(reader, field, &SkeletonBuilder::WalkGraph,
                                   /*depth=*/0, out));
        break;
      case 20:
        MI_RETURN_IF_ERROR(
            Descend(reader, field, &SkeletonBuilder::WalkTrainingInfo, 0, out));
        break;
      case 25:
        MI_RETURN_IF_ERROR(
            Descend(reader, field, &SkeletonBuilder::WalkFunction, 0, out));
        break;
      default:
        out->append(field.raw);
    }
  }
  if (!has_graph) {
    return MalformedInputError(fmt::format(
        "{}@byte {}: no graph (ModelProto.graph, field 7); not an ONNX "
        "model?; expected a graph field, found only other fields",
        file_, bytes.size()));
  }
  return Status::Ok();
}

Status SkeletonBuilder::WalkGraph(const WireField& field, int depth,
                                  std::string* out) {
  if (depth > kMaxSubgraphDepth) {
    return WireError(file_, field.tag_offset, "subgraphs nested too deeply",
                     fmt::format("at most {} levels", kMaxSubgraphDepth),
                     "more");
  }
  WireReader reader(field.payload, field.payload_offset, kGraphSchema, file_);
  while (!reader.done()) {
    // Tags of the next field: a small read, even before a big tensor.
    Prefetch(reader.offset(), reader.offset() + 16);
    WireField f;
    MI_RETURN_IF_ERROR(reader.Next(&f));
    // Structure (nodes, value_info) is read whole; tensors only up to the
    // start of their payload, which the walker finds in the first bytes.
    if (f.number != 5 && f.number != 15) {
      Prefetch(f.tag_offset, f.tag_offset + f.raw.size());
    }
    switch (f.number) {
      case 1:
        MI_RETURN_IF_ERROR(
            Descend(reader, f, &SkeletonBuilder::WalkNode, depth, out));
        break;
      case 5:
        MI_RETURN_IF_ERROR(
            Descend(reader, f, &SkeletonBuilder::WalkTensor, depth, out));
        break;
      case 15:
        MI_RETURN_IF_ERROR(
            Descend(reader, f, &SkeletonBuilder::WalkSparseTensor, depth, out));
        break;
      default:
        out->append(f.raw);
    }
  }
  return Status::Ok();
}

Status SkeletonBuilder::WalkNode(const WireField& field, int depth,
                                 std::string* out) {
  WireReader reader(field.payload, field.payload_offset, kNodeSchema, file_);
  while (!reader.done()) {
    WireField f;
    MI_RETURN_IF_ERROR(reader.Next(&f));
    if (f.number == 5) {
      MI_RETURN_IF_ERROR(
          Descend(reader, f, &SkeletonBuilder::WalkAttribute, depth, out));
    } else {
      out->append(f.raw);
    }
  }
  AppendTag(out, kSkeletonNodeOffsetField, WireType::kVarint);
  AppendVarint(out, field.tag_offset);
  return Status::Ok();
}

Status SkeletonBuilder::WalkAttribute(const WireField& field, int depth,
                                      std::string* out) {
  WireReader reader(field.payload, field.payload_offset, kAttributeSchema,
                    file_);
  while (!reader.done()) {
    WireField f;
    MI_RETURN_IF_ERROR(reader.Next(&f));
    switch (f.number) {
      case 5:   // t
      case 10:  // tensors
        MI_RETURN_IF_ERROR(
            Descend(reader, f, &SkeletonBuilder::WalkTensor, depth, out));
        break;
      case 6:   // g
      case 11:  // graphs
        MI_RETURN_IF_ERROR(
            Descend(reader, f, &SkeletonBuilder::WalkGraph, depth + 1, out));
        break;
      case 22:  // sparse_tensor
      case 23:  // sparse_tensors
        MI_RETURN_IF_ERROR(
            Descend(reader, f, &SkeletonBuilder::WalkSparseTensor, depth, out));
        break;
      default:
        out->append(f.raw);
    }
  }
  return Status::Ok();
}

Status SkeletonBuilder::WalkTensor(const WireField& field, int /*depth*/,
                                   std::string* out) {
  // Pass 1 reads only tags and lengths: the data type may follow the
  // payload, and whether to keep the payload depends on both.
  int64_t data_type = 0;
  uint64_t raw_bytes = 0;
  uint64_t typed_bytes = 0;
  {
    WireReader reader(field.payload, field.payload_offset, kTensorSchema,
                      file_);
    while (!reader.done()) {
      WireField f;
      MI_RETURN_IF_ERROR(reader.Next(&f));
      if (f.number == 2 && f.type == WireType::kVarint) {
        data_type = static_cast<int64_t>(f.value);
      } else if (IsTensorPayloadField(f.number)) {
        // Sums stay below the file size, so they cannot overflow.
        uint64_t size =
            f.type == WireType::kLengthDelimited ? f.value : f.raw.size();
        (f.number == 9 ? raw_bytes : typed_bytes) += size;
      }
    }
  }
  uint64_t payload = raw_bytes + typed_bytes;
  bool is_int = data_type == kDataTypeInt32 || data_type == kDataTypeInt64;
  if (payload <= kKeptAnyPayloadBytes ||
      (is_int && payload <= kKeptIntPayloadBytes)) {
    out->append(field.payload);
    return Status::Ok();
  }
  WireReader reader(field.payload, field.payload_offset, kTensorSchema, file_);
  while (!reader.done()) {
    WireField f;
    MI_RETURN_IF_ERROR(reader.Next(&f));
    if (!IsTensorPayloadField(f.number)) out->append(f.raw);
  }
  if (raw_bytes > 0) {
    AppendTag(out, kSkeletonRawDataBytesField, WireType::kVarint);
    AppendVarint(out, raw_bytes);
  }
  if (typed_bytes > 0) {
    AppendTag(out, kSkeletonTypedDataBytesField, WireType::kVarint);
    AppendVarint(out, typed_bytes);
  }
  stats_.omitted_payload_bytes += payload;
  ++stats_.omitted_tensor_count;
  return Status::Ok();
}

Status SkeletonBuilder::WalkSparseTensor(const WireField& field, int depth,
                                         std::string* out) {
  WireReader reader(field.payload, field.payload_offset, kSparseTensorSchema,
                    file_);
  while (!reader.done()) {
    WireField f;
    MI_RETURN_IF_ERROR(reader.Next(&f));
    if (f.number == 1 || f.number == 2) {
      MI_RETURN_IF_ERROR(
          Descend(reader, f, &SkeletonBuilder::WalkTensor, depth, out));
    } else {
      out->append(f.raw);
    }
  }
  return Status::Ok();
}

Status SkeletonBuilder::WalkTrainingInfo(const WireField& field, int depth,
                                         std::string* out) {
  WireReader reader(field.payload, field.payload_offset, kTrainingInfoSchema,
                    file_);
  while (!reader.done()) {
    WireField f;
    MI_RETURN_IF_ERROR(reader.Next(&f));
    if (f.number == 1 || f.number == 2) {
      MI_RETURN_IF_ERROR(
          Descend(reader, f, &SkeletonBuilder::WalkGraph, depth + 1, out));
    } else {
      out->append(f.raw);
    }
  }
  return Status::Ok();
}

Status SkeletonBuilder::WalkFunction(const WireField& field, int depth,
                                     std::string* out) {
  WireReader reader(field.payload, field.payload_offset, kFunctionSchema,
                    file_);
  while (!reader.done()) {
    WireField f;
    MI_RETURN_IF_ERROR(reader.Next(&f));
    if (f.number == 7) {
      MI_RETURN_IF_ERROR(
          Descend(reader, f, &SkeletonBuilder::WalkNode, depth, out));
    } else {
      out->append(f.raw);
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<OnnxSkeleton> BuildOnnxSkeleton(std::string_view file_bytes,
                                         std::string_view file_name,
                                         PrefetchHook prefetch) {
  SkeletonBuilder builder(file_name, file_bytes.size(), std::move(prefetch));
  std::string bytes;
  MI_RETURN_IF_ERROR(builder.WalkModel(file_bytes, &bytes));
  OnnxSkeleton skeleton = builder.stats();
  skeleton.bytes = std::move(bytes);
  return skeleton;
}

}  // namespace mi::importers::onnx_import
