#include "importers/onnx/onnx_file_peek.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include "base/checked_math.h"
#include "base/mapped_file.h"
#include "importers/common/protobuf_wire_reader.h"

namespace mi::importers::onnx_import {
namespace {

constexpr WireFieldName kModelFields[] = {
    {1, "ir_version"}, {2, "producer_name"}, {3, "producer_version"},
    {4, "domain"},     {5, "model_version"}, {6, "doc_string"},
    {7, "graph"},      {8, "opset_import"},  {14, "metadata_props"}};
constexpr WireFieldName kGraphFields[] = {{5, "initializer"}};
constexpr WireFieldName kTensorFields[] = {
    {1, "dims"},           {2, "data_type"},     {4, "float_data"},
    {5, "int32_data"},     {7, "int64_data"},    {8, "name"},
    {9, "raw_data"},       {10, "double_data"},  {11, "uint64_data"},
    {13, "external_data"}, {14, "data_location"}};
constexpr WireFieldName kEntryFields[] = {{1, "key"}, {2, "value"}};
constexpr WireFieldName kOpsetFields[] = {{1, "domain"}, {2, "version"}};
const WireMessageSchema kModel{"ModelProto", kModelFields};
const WireMessageSchema kGraph{"GraphProto", kGraphFields};
const WireMessageSchema kTensor{"TensorProto", kTensorFields};
const WireMessageSchema kEntry{"StringStringEntryProto", kEntryFields};
const WireMessageSchema kOpset{"OperatorSetIdProto", kOpsetFields};

// TensorProto.DataType numbers.
enum : int32_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

uint32_t ElementBytes(int32_t t) {
  switch (t) {
    case kUint8:
    case kInt8:
    case kBool:
      return 1;
    case kUint16:
    case kInt16:
    case kFloat16:
    case kBfloat16:
      return 2;
    case kFloat:
    case kInt32:
    case kUint32:
      return 4;
    case kInt64:
    case kDouble:
    case kUint64:
      return 8;
    default:
      return 0;
  }
}

bool IsFloatType(int32_t t) {
  return t == kFloat || t == kFloat16 || t == kBfloat16 || t == kDouble;
}

double HalfToDouble(uint16_t h) {
  int sign = (h >> 15) & 1;
  int exp = (h >> 10) & 0x1f;
  int frac = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(frac, -24);
  } else if (exp == 31) {
    v = frac ? std::numeric_limits<double>::quiet_NaN()
             : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(frac + 1024, exp - 25);
  }
  return sign ? -v : v;
}

template <typename T>
T LoadLe(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// One element of little-endian raw bytes: (as double, as int64, as uint64).
void DecodeRaw(int32_t t, const char* p, double* d, int64_t* i, uint64_t* u) {
  switch (t) {
    case kFloat:
      *d = LoadLe<float>(p);
      return;
    case kDouble:
      *d = LoadLe<double>(p);
      return;
    case kFloat16:
      *d = HalfToDouble(LoadLe<uint16_t>(p));
      return;
    case kBfloat16:
      *d = std::bit_cast<float>(uint32_t{LoadLe<uint16_t>(p)} << 16);
      return;
    case kUint8:
    case kBool:
      *i = LoadLe<uint8_t>(p);
      break;
    case kInt8:
      *i = LoadLe<int8_t>(p);
      break;
    case kUint16:
      *i = LoadLe<uint16_t>(p);
      break;
    case kInt16:
      *i = LoadLe<int16_t>(p);
      break;
    case kInt32:
      *i = LoadLe<int32_t>(p);
      break;
    case kUint32:
      *i = LoadLe<uint32_t>(p);
      break;
    case kInt64:
      *i = LoadLe<int64_t>(p);
      break;
    case kUint64:
      *u = LoadLe<uint64_t>(p);
      *d = static_cast<double>(*u);
      return;
    default:
      return;
  }
  *d = static_cast<double>(*i);
}

// Collects the first values and the statistics, element by element.
class Sink {
 public:
  Sink(TensorPeek* out, size_t limit, uint64_t stats_limit)
      : out_(out), limit_(limit), stats_limit_(stats_limit) {}

  bool full() const { return seen_ >= stats_limit_ && seen_ >= limit_; }

  void Add(double d, int64_t i, uint64_t u) {
    int32_t t = out_->data_type;
    if (seen_ < limit_) {
      if (IsFloatType(t)) {
        out_->floats.push_back(d);
      } else if (t == kUint64) {
        out_->uints.push_back(u);
      } else {
        out_->ints.push_back(i);
      }
    }
    if (seen_ < stats_limit_) {
      if (std::isnan(d)) {
        ++out_->nan_count;
      } else {
        if (counted_ == 0 || d < out_->min) out_->min = d;
        if (counted_ == 0 || d > out_->max) out_->max = d;
        sum_ += d;
        ++counted_;
      }
      out_->stats_count = seen_ + 1;
    }
    ++seen_;
  }

  void Finish() { out_->mean = counted_ ? sum_ / counted_ : 0; }

 private:
  TensorPeek* out_;
  size_t limit_;
  uint64_t stats_limit_;
  uint64_t seen_ = 0;
  uint64_t counted_ = 0;
  double sum_ = 0;
};

// A varint at `*p` (< end); false when malformed.
bool ReadVarint(const char** p, const char* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = static_cast<uint8_t>(*(*p)++);
    *v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// One element of a typed repeated field (int32_data, int64_data, ...).
void AddTyped(int32_t t, uint32_t field, uint64_t raw, Sink* sink) {
  double d = 0;
  int64_t i = 0;
  uint64_t u = 0;
  switch (field) {
    case 4:  // float_data (fixed32)
      d = std::bit_cast<float>(static_cast<uint32_t>(raw));
      break;
    case 10:  // double_data (fixed64)
      d = std::bit_cast<double>(raw);
      break;
    case 5:  // int32_data: int32 and the narrow types, float16 bits
      if (t == kFloat16) {
        d = HalfToDouble(static_cast<uint16_t>(raw));
      } else if (t == kBfloat16) {
        d = std::bit_cast<float>(static_cast<uint32_t>(raw & 0xffff) << 16);
      } else {
        i = static_cast<int32_t>(static_cast<uint32_t>(raw));
        d = static_cast<double>(i);
      }
      break;
    case 7:  // int64_data
      i = static_cast<int64_t>(raw);
      d = static_cast<double>(i);
      break;
    case 11:  // uint64_data: uint32, uint64
      u = raw;
      i = static_cast<int64_t>(raw);
      d = static_cast<double>(raw);
      break;
  }
  sink->Add(d, i, u);
}

// A typed repeated field, packed (length-delimited) or one element.
Status ReadTypedField(const WireField& f, int32_t t, Sink* sink,
                      const std::string& path) {
  bool fixed32 = f.number == 4;
  bool fixed64 = f.number == 10;
  if (f.type != WireType::kLengthDelimited) {
    AddTyped(t, f.number, f.value, sink);
    return Status::Ok();
  }
  const char* p = f.payload.data();
  const char* end = p + f.payload.size();
  while (p < end && !sink->full()) {
    uint64_t raw = 0;
    if (fixed32 || fixed64) {
      size_t n = fixed32 ? 4 : 8;
      if (static_cast<size_t>(end - p) < n) break;
      raw = fixed32 ? LoadLe<uint32_t>(p) : LoadLe<uint64_t>(p);
      p += n;
    } else if (!ReadVarint(&p, end, &raw)) {
      return WireError(path, f.payload_offset + (p - f.payload.data()),
                       "packed varint", "a terminated varint",
                       "the end of the field");
    }
    AddTyped(t, f.number, raw, sink);
  }
  return Status::Ok();
}

// Decodes `bytes` (little-endian elements) into the sink.
void ReadRaw(std::string_view bytes, int32_t t, Sink* sink) {
  uint32_t size = ElementBytes(t);
  for (size_t at = 0; at + size <= bytes.size() && !sink->full(); at += size) {
    double d = 0;
    int64_t i = 0;
    uint64_t u = 0;
    DecodeRaw(t, bytes.data() + at, &d, &i, &u);
    sink->Add(d, i, u);
  }
}

StatusOr<std::string> ReadString(const WireField& f, const WireReader& r,
                                 std::string_view what) {
  if (f.type != WireType::kLengthDelimited) {
    return r.FieldError(f, what, "a length-delimited field",
                        "another wire type");
  }
  return std::string(f.payload);
}

// A relative path inside the model's folder (no root, no "..").
bool InsideFolder(const std::filesystem::path& p) {
  if (p.empty() || p.is_absolute() || p.has_root_name()) return false;
  for (const auto& part : p) {
    if (part == "..") return false;
  }
  return true;
}

}  // namespace

bool PeekSupportsType(int32_t data_type) {
  return ElementBytes(data_type) != 0;
}

StatusOr<OnnxModelHeader> ReadOnnxModelHeader(const std::string& path) {
  std::unique_ptr<MappedFile> file;
  MI_ASSIGN_OR_RETURN(file, MappedFile::Open(path));
  OnnxModelHeader h;
  WireReader r(file->view(), 0, kModel, path);
  WireField f;
  while (!r.done()) {
    MI_RETURN_IF_ERROR(r.Next(&f));
    bool ld = f.type == WireType::kLengthDelimited;
    switch (f.number) {
      case 1:
        h.ir_version = static_cast<int64_t>(f.value);
        break;
      case 5:
        h.model_version = static_cast<int64_t>(f.value);
        break;
      case 2:
        if (ld) h.producer_name = f.payload;
        break;
      case 3:
        if (ld) h.producer_version = f.payload;
        break;
      case 4:
        if (ld) h.domain = f.payload;
        break;
      case 6:
        if (ld) h.doc_string = f.payload;
        break;
      case 8:
      case 14: {
        if (!ld) break;
        WireReader e(f.payload, f.payload_offset,
                     f.number == 8 ? kOpset : kEntry, path);
        std::string key, value;
        int64_t version = 0;
        WireField g;
        while (!e.done()) {
          MI_RETURN_IF_ERROR(e.Next(&g));
          if (g.number == 1 && g.type == WireType::kLengthDelimited) {
            key = g.payload;
          } else if (g.number == 2 && g.type == WireType::kLengthDelimited) {
            value = g.payload;
          } else if (g.number == 2) {
            version = static_cast<int64_t>(g.value);
          }
        }
        if (f.number == 8) {
          h.opset_imports.emplace_back(std::move(key), version);
        } else {
          h.metadata_props.emplace_back(std::move(key), std::move(value));
        }
        break;
      }
      default:
        break;  // the graph and the rest: skipped by length
    }
  }
  return h;
}

StatusOr<TensorPeek> PeekOnnxInitializer(const std::string& path,
                                         std::string_view name, size_t limit,
                                         uint64_t stats_limit) {
  std::unique_ptr<MappedFile> file;
  MI_ASSIGN_OR_RETURN(file, MappedFile::Open(path));
  // ModelProto.graph → GraphProto.initializer with that name.
  WireReader model(file->view(), 0, kModel, path);
  WireField f;
  std::string_view tensor;
  uint64_t tensor_offset = 0;
  while (!model.done() && tensor.empty()) {
    MI_RETURN_IF_ERROR(model.Next(&f));
    if (f.number != 7 || f.type != WireType::kLengthDelimited) continue;
    WireReader graph(f.payload, f.payload_offset, kGraph, path);
    WireField g;
    while (!graph.done()) {
      MI_RETURN_IF_ERROR(graph.Next(&g));
      if (g.number != 5 || g.type != WireType::kLengthDelimited) continue;
      // The name is a short field among the tensor's; payloads are skipped.
      WireReader t(g.payload, g.payload_offset, kTensor, path);
      WireField h;
      while (!t.done()) {
        MI_RETURN_IF_ERROR(t.Next(&h));
        if (h.number == 8 && h.type == WireType::kLengthDelimited) break;
      }
      if (h.number == 8 && h.payload == name) {
        tensor = g.payload;
        tensor_offset = g.payload_offset;
        break;
      }
    }
  }
  if (tensor.empty()) {
    return NotFoundError(
        fmt::format("{}: the main graph has no initializer '{}'", path, name));
  }

  TensorPeek out;
  out.name = std::string(name);
  // First pass: type, dims, where the data is.
  std::vector<WireField> data_fields;
  bool external = false;
  WireReader t(tensor, tensor_offset, kTensor, path);
  while (!t.done()) {
    MI_RETURN_IF_ERROR(t.Next(&f));
    switch (f.number) {
      case 1:
        if (f.type == WireType::kLengthDelimited) {
          const char* p = f.payload.data();
          const char* end = p + f.payload.size();
          uint64_t d = 0;
          while (p < end && ReadVarint(&p, end, &d)) {
            out.dims.push_back(static_cast<int64_t>(d));
          }
        } else {
          out.dims.push_back(static_cast<int64_t>(f.value));
        }
        break;
      case 2:
        out.data_type = static_cast<int32_t>(f.value);
        break;
      case 14:
        external = f.value == 1;
        break;
      case 13: {
        if (f.type != WireType::kLengthDelimited) break;
        WireReader e(f.payload, f.payload_offset, kEntry, path);
        std::string key, value;
        WireField g;
        while (!e.done()) {
          MI_RETURN_IF_ERROR(e.Next(&g));
          if (g.number == 1) {
            MI_ASSIGN_OR_RETURN(key, ReadString(g, e, "key"));
          }
          if (g.number == 2) {
            MI_ASSIGN_OR_RETURN(value, ReadString(g, e, "value"));
          }
        }
        uint64_t n = 0;
        if (key == "location") {
          out.external_location = value;
        } else if (key == "offset" || key == "length") {
          auto [end, ec] =
              std::from_chars(value.data(), value.data() + value.size(), n);
          if (ec != std::errc() || end != value.data() + value.size()) {
            return MalformedInputError(fmt::format(
                "{}@byte {}: initializer '{}': external_data {}: expected a "
                "byte count, found '{}'",
                path, f.tag_offset, name, key, value));
          }
          (key == "offset" ? out.external_offset : out.external_length) = n;
        }
        break;
      }
      case 4:
      case 5:
      case 7:
      case 9:
      case 10:
      case 11:
        data_fields.push_back(f);
        break;
      default:
        break;
    }
  }
  if (!PeekSupportsType(out.data_type)) {
    return InvalidArgumentError(fmt::format(
        "{}: initializer '{}' has element type {}; values are shown for "
        "numeric types only",
        path, name, out.data_type));
  }
  out.element_count = 1;
  for (int64_t d : out.dims) {
    auto count = CheckedMul(out.element_count,
                            static_cast<uint64_t>(std::max<int64_t>(d, 0)));
    if (!count) {
      return MalformedInputError(fmt::format(
          "{}: initializer '{}': dims overflow 64 bits; expected an element "
          "count that fits",
          path, name));
    }
    out.element_count = *count;
  }

  Sink sink(&out, limit, stats_limit);
  if (external) {
    out.storage = "external";
    std::filesystem::path loc(out.external_location);
    if (!InsideFolder(loc)) {
      return InvalidArgumentError(fmt::format(
          "{}: initializer '{}' names external data '{}'; expected a path "
          "relative to the model's folder, without '..'",
          path, name, out.external_location));
    }
    std::filesystem::path data_path =
        std::filesystem::path(path).parent_path() / loc;
    std::ifstream in(data_path, std::ios::binary);
    if (!in) {
      return NotFoundError(fmt::format(
          "{}: initializer '{}': cannot open its external data file {}", path,
          name, data_path.string()));
    }
    uint64_t want = std::max<uint64_t>(limit, stats_limit);
    want = std::min(want, out.element_count) * ElementBytes(out.data_type);
    if (out.external_length) want = std::min(want, out.external_length);
    std::string bytes(want, '\0');
    in.seekg(static_cast<std::streamoff>(out.external_offset));
    in.read(bytes.data(), static_cast<std::streamsize>(want));
    bytes.resize(
        static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    if (bytes.size() < want) {
      return MalformedInputError(fmt::format(
          "{}: external data of '{}' ends early: expected {} bytes at offset "
          "{}, found {}",
          data_path.string(), name, want, out.external_offset, bytes.size()));
    }
    ReadRaw(bytes, out.data_type, &sink);
  } else {
    for (const WireField& d : data_fields) {
      if (sink.full()) break;
      if (d.number == 9) {
        out.storage = "raw_data";
        if (d.type == WireType::kLengthDelimited) {
          ReadRaw(d.payload, out.data_type, &sink);
        }
        continue;
      }
      static constexpr std::string_view kNames[] = {
          "", "",           "", "", "float_data",  "int32_data",
          "", "int64_data", "", "", "double_data", "uint64_data"};
      out.storage = std::string(kNames[d.number]);
      MI_RETURN_IF_ERROR(ReadTypedField(d, out.data_type, &sink, path));
    }
  }
  sink.Finish();
  return out;
}

}  // namespace mi::importers::onnx_import
