#pragma once

// Builds the "skeleton" of a binary ONNX ModelProto: the same message with
// the payloads of large tensors (initializers, Constant attributes) left
// out, so that libonnx's protobuf classes parse only the graph structure.
//
// Why: a 1 GB model is ~99% weights. protobuf would copy every weight byte
// into a std::string (and its 2 GB limit would reject bigger files); the
// walker here skips payloads by their declared length, so their pages are
// never touched. Facts the converter needs from the omitted or positional
// data travel in extra varint fields with numbers far outside ONNX's range;
// protobuf keeps them as unknown fields of the parsed message.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

namespace mi::importers::onnx_import {

// NodeProto: byte offset of the node's field in the file (for diagnostics).
inline constexpr uint32_t kSkeletonNodeOffsetField = 536870001;
// TensorProto: bytes of an omitted raw_data field.
inline constexpr uint32_t kSkeletonRawDataBytesField = 536870002;
// TensorProto: wire bytes of omitted typed data fields (float_data, ...).
inline constexpr uint32_t kSkeletonTypedDataBytesField = 536870003;

// Subgraph nesting (If/Loop/Scan bodies) deeper than this is rejected: it
// only occurs in hostile files and would exhaust the stack further on.
inline constexpr int kMaxSubgraphDepth = 64;

// Tensor payloads kept in the skeleton: tiny ones (scalars shown in
// attribute text) and small int32/int64 ones, because shape inference reads
// them (Reshape's shape, Slice's starts, ...).
inline constexpr uint64_t kKeptAnyPayloadBytes = 64;
inline constexpr uint64_t kKeptIntPayloadBytes = 1024;

struct OnnxSkeleton {
  std::string bytes;  // a serialized ModelProto
  uint64_t omitted_payload_bytes = 0;
  uint64_t omitted_tensor_count = 0;
};

// Called with [begin, end) byte ranges of graph structure the walker is
// about to read, so a memory-mapped caller can prefetch them (the mmap path
// turns the kernel's read-around off, which would otherwise read megabytes
// of weights around every tensor header it faults in).
using PrefetchHook = std::function<void(uint64_t begin, uint64_t end)>;
inline constexpr uint64_t kPrefetchWindowBytes = 256 << 10;

// Walks `file_bytes` (a whole .onnx file) and returns its skeleton. Errors
// are MalformedInputError "<file_name>@byte <N>: ...".
StatusOr<OnnxSkeleton> BuildOnnxSkeleton(std::string_view file_bytes,
                                         std::string_view file_name,
                                         PrefetchHook prefetch = {});

}  // namespace mi::importers::onnx_import
