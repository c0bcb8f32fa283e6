#include "importers/onnx/onnx_importer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <exception>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>

#include "base/mapped_file.h"
#include "importers/onnx/onnx_direct_import.h"
#include "importers/onnx/onnx_model_converter.h"
#include "importers/onnx/onnx_skeleton.h"
#include "onnx/onnx_pb.h"

namespace mi::importers {
namespace {

// protobuf's default (100) counts every message level, and each subgraph
// level costs three (GraphProto > NodeProto > AttributeProto); this admits
// kMaxSubgraphDepth bodies with room for nested types.
constexpr int kProtobufRecursionLimit =
    onnx_import::kMaxSubgraphDepth * 3 + 100;

// Expected wire type of each ModelProto field (for sniffing).
int ModelFieldWireType(uint64_t number) {
  switch (number) {
    case 1:  // ir_version
    case 5:  // model_version
      return 0;
    case 2:   // producer_name
    case 3:   // producer_version
    case 4:   // domain
    case 6:   // doc_string
    case 7:   // graph
    case 8:   // opset_import
    case 14:  // metadata_props
    case 20:  // training_info
    case 25:  // functions
      return 2;
    default:
      return -1;
  }
}

bool ReadSniffVarint(std::string_view s, size_t* pos, uint64_t* value) {
  uint64_t result = 0;
  for (int i = 0; i < 10 && *pos < s.size(); ++i) {
    uint8_t byte = static_cast<uint8_t>(s[(*pos)++]);
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

std::string ModelDirectory(const std::string& path) {
  if (path.empty()) return {};
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

Status ImportFromBytes(std::string_view bytes, ImportContext& ctx,
                       onnx_import::PrefetchHook prefetch,
                       const OnnxImportOptions& options);

class OnnxImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor =
        new ImporterDescriptor{"onnx",
                               {".onnx", ".ort.onnx"},
                               10,
                               ContentKind::kGraph,
                               "an ONNX model"};
    return *kDescriptor;
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    return SniffOnnxBinary(head, path);
  }

  Status Import(ImportContext& ctx) const override {
    MI_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file,
                        MappedFile::Open(ctx.path));
    onnx_import::PrefetchHook prefetch;
    if (file->size() > 0) {
      // The kernel's read-around (read_ahead_kb, often MBs) would read the
      // weights around every tensor header the walker touches; turn it off
      // and prefetch the structure the walker asks for instead.
      auto* base = const_cast<uint8_t*>(file->data());
      ::madvise(base, file->size(), MADV_RANDOM);
      const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
      prefetch = [base, page](uint64_t begin, uint64_t end) {
        uint64_t aligned = begin / page * page;
        ::madvise(base + aligned, end - aligned, MADV_WILLNEED);
      };
    }
    Status status = ImportFromBytes(file->view(), ctx, std::move(prefetch),
                                    OnnxImportOptions{});
    if (ctx.progress) ctx.progress(file->size(), file->size());
    return status;
  }
};

}  // namespace

int SniffOnnxBinary(std::string_view head, std::string_view path) {
  head = head.substr(0, kSniffLookahead);
  size_t pos = 0;
  int fields = 0;
  bool starts_with_ir_version = false;
  while (pos < head.size()) {
    uint64_t tag = 0;
    if (!ReadSniffVarint(head, &pos, &tag)) break;  // cut by the lookahead
    uint64_t number = tag >> 3;
    int wire_type = static_cast<int>(tag & 7);
    if (ModelFieldWireType(number) != wire_type) return 0;
    uint64_t value = 0;
    if (!ReadSniffVarint(head, &pos, &value)) break;
    if (wire_type == 0) {
      if (number == 1) {
        if (value < 1 || value > 20) return 0;
        if (fields == 0) starts_with_ir_version = true;
      }
    } else {
      ++fields;
      if (value > head.size() - pos) break;  // e.g. the graph: runs on
      pos += static_cast<size_t>(value);
      continue;
    }
    ++fields;
  }
  if (fields == 0) return 0;
  int score = starts_with_ir_version ? 70 : (fields >= 2 ? 40 : 10);
  if (path.ends_with(".onnx")) score += 25;
  return score;
}

Status ImportOnnxFromBuffer(std::string_view bytes, ImportContext& ctx) {
  return ImportFromBytes(bytes, ctx, {}, OnnxImportOptions{});
}

Status ImportOnnxFromBuffer(std::string_view bytes, ImportContext& ctx,
                            const OnnxImportOptions& options) {
  return ImportFromBytes(bytes, ctx, {}, options);
}

namespace {

Status ImportFromBytes(std::string_view bytes, ImportContext& ctx,
                       onnx_import::PrefetchHook prefetch,
                       const OnnxImportOptions& import_options) {
  if (ctx.model == nullptr) {
    return InternalError("ImportOnnxFromBuffer: ImportContext has no model");
  }
  // The direct path first: it declines (writing nothing) whatever it does
  // not cover, incl. every malformed file, so that errors and models
  // needing shape inference go through the reference path below.
  if (import_options.force_path != OnnxImportPath::kProtobuf) {
    onnx_import::OnnxConvertOptions direct_options;
    direct_options.model_directory = ModelDirectory(ctx.path);
    if (onnx_import::TryImportOnnxDirect(bytes, direct_options, ctx,
                                         prefetch)) {
      return Status::Ok();
    }
    if (import_options.force_path == OnnxImportPath::kDirect) {
      return UnsupportedError(fmt::format(
          "{}: the direct ONNX path declined this model (it needs shape "
          "inference, uses a feature only the libonnx path covers, or is "
          "malformed)",
          ctx.path));
    }
  }
  MI_ASSIGN_OR_RETURN(
      onnx_import::OnnxSkeleton skeleton,
      onnx_import::BuildOnnxSkeleton(bytes, ctx.path, std::move(prefetch)));
  if (skeleton.bytes.size() > static_cast<size_t>(INT_MAX)) {
    return UnsupportedError(fmt::format(
        "{}: the graph structure alone (without weights) is {} bytes; "
        "expected under 2 GiB (protobuf's limit), found more",
        ctx.path, skeleton.bytes.size()));
  }
  // An arena makes parsing 100k-node graphs cheaper (bump allocation) and
  // frees all nested messages at once instead of one by one.
  google::protobuf::ArenaOptions arena_options;
  arena_options.start_block_size = 64 << 10;
  arena_options.max_block_size = 4 << 20;
  google::protobuf::Arena arena(arena_options);
  ::onnx::ModelProto& model =
      *google::protobuf::Arena::CreateMessage<::onnx::ModelProto>(&arena);
  bool parsed = false;
  try {
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t*>(skeleton.bytes.data()),
        static_cast<int>(skeleton.bytes.size()));
    stream.SetRecursionLimit(kProtobufRecursionLimit);
    parsed =
        model.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
  } catch (const std::exception&) {
    parsed = false;
  }
  if (!parsed) {
    return MalformedInputError(fmt::format(
        "{}@byte 0: invalid ModelProto; expected nested messages libonnx can "
        "parse, found a field with the wrong wire type, a truncated nested "
        "message or nesting deeper than {} levels",
        ctx.path, kProtobufRecursionLimit));
  }
  std::string().swap(skeleton.bytes);  // the parsed proto replaces it
  // Each node brings about a name, an output tensor and a scope path.
  ctx.model->strings().Reserve(
      static_cast<size_t>(model.graph().node_size()) * 3 +
      static_cast<size_t>(model.graph().value_info_size()));
  onnx_import::OnnxConvertOptions options;
  options.model_directory = ModelDirectory(ctx.path);
  return onnx_import::ConvertOnnxModel(model, options, ctx);
}

}  // namespace

std::unique_ptr<Importer> CreateOnnxImporter() {
  return std::make_unique<OnnxImporter>();
}

}  // namespace mi::importers
