#pragma once

// Reads, on demand and long after the import, what the graph model does not
// keep from a binary ONNX file: the ModelProto's own fields (IR version,
// producer, model version, doc string, metadata props, opset imports) and
// the values of one initializer of the main graph. The file is
// memory-mapped and walked by its tags and lengths, so only the fields read
// are paged in: a peek at a 4 GB model's weight touches that weight's first
// bytes, not the file. External data is read from its file next to the
// model (offset and length as the tensor's external_data says), bounded to
// what the peek asks for.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_inspector/status.h"

namespace mi::importers::onnx_import {

// The ModelProto fields outside its graph.
struct OnnxModelHeader {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::vector<std::pair<std::string, int64_t>> opset_imports;
};

StatusOr<OnnxModelHeader> ReadOnnxModelHeader(const std::string& path);

// The first values of one initializer and statistics over a bounded read.
struct TensorPeek {
  std::string name;
  int32_t data_type = 0;  // TensorProto.DataType
  std::vector<int64_t> dims;
  uint64_t element_count = 0;
  // Where the values are: "raw_data", "float_data", "int32_data",
  // "int64_data", "double_data", "uint64_data" or "external".
  std::string storage;
  std::string external_location;  // external data: the file, as written
  uint64_t external_offset = 0;
  uint64_t external_length = 0;  // 0 = to the end of the file
  // The first `limit` values: integer types in `ints` (exact), the others
  // (floats, float16, bfloat16, double) in `floats`.
  std::vector<int64_t> ints;
  std::vector<uint64_t> uints;  // uint64 only
  std::vector<double> floats;
  // Statistics over the first `stats_count` elements (all of them when
  // stats_count == element_count); NaNs are counted apart and left out.
  uint64_t stats_count = 0;
  uint64_t nan_count = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
};

// Element types the peek decodes (every numeric one; not strings or
// complex numbers).
bool PeekSupportsType(int32_t data_type);

// The initializer `name` of the main graph of the ONNX file at `path`: its
// first `limit` values and min / max / mean over at most `stats_limit`
// elements. NotFound when the main graph has no such initializer;
// InvalidArgument for a type the peek does not decode; the importer's
// byte-offset errors for a malformed file; external data outside the
// model's folder is refused.
StatusOr<TensorPeek> PeekOnnxInitializer(const std::string& path,
                                         std::string_view name, size_t limit,
                                         uint64_t stats_limit);

}  // namespace mi::importers::onnx_import
