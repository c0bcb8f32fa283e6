// Ascend offline models (.om): the container (om_container.h) is walked,
// MODEL_DEF (binary ge.proto.ModelDef) has its compressed attribute names
// expanded and goes through the GE converter, TASK_INFO (binary
// domi.ModelTaskDef) gives each op the tasks that will be launched for it,
// and the kernel stores say which ops carry a kernel binary.

#include "importers/om/om_importer.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/mapped_file.h"
#include "importers/common/ge_model/ge_ir_subset.pb.h"
#include "importers/common/ge_model/ge_model_converter.h"
#include "importers/common/protobuf_wire_reader.h"
#include "importers/om/om_container.h"
#include "importers/om/om_subset.pb.h"
#include "io/chunk_reader.h"

namespace mi::importers {
namespace {

using ge::GeModelExtras;

// Flow models nest .om files; deeper than this is hostile input.
constexpr int kMaxNesting = 8;
// Attribute values nest (tensor descs in lists, graphs in attributes).
constexpr int kMaxAttrDepth = 32;

// The runtime's task types (rtModelTaskType_t), as the task list numbers
// them.
std::string TaskTypeName(uint32_t type) {
  static constexpr std::string_view kNames[] = {"KERNEL",
                                                "EVENT_RECORD",
                                                "EVENT_WAIT",
                                                "FUSION_START",
                                                "FUSION_END",
                                                "KERNEL_EX",
                                                "HCCL",
                                                "STREAM_SWITCH",
                                                "STREAM_ACTIVE",
                                                "LABEL_SET",
                                                "LABEL_SWITCH",
                                                "LABEL_GOTO",
                                                "PROFILER_TRACE",
                                                "MEMCPY_ASYNC",
                                                "NOTIFY_RECORD",
                                                "NOTIFY_WAIT",
                                                "REDUCE_ASYNC",
                                                "RDMA_SEND",
                                                "EVENT_RESET",
                                                "MODEL_END_GRAPH",
                                                "STREAM_SWITCH_N",
                                                "RDMA_DB_SEND",
                                                "MEMCPY_ADDR_ASYNC",
                                                "STREAM_LABEL_SWITCH_BY_INDEX",
                                                "STREAM_LABEL_GOTO",
                                                "MODEL_EXIT",
                                                "ALL_KERNEL",
                                                "PROFILER_TRACE_EX",
                                                "FFTS_TASK",
                                                "FFTS_PLUS_TASK",
                                                "DSA_TASK",
                                                "CMO",
                                                "BARRIER"};
  if (type < std::size(kNames)) return std::string(kNames[type]);
  return fmt::format("task type {}", type);
}

std::string ModelTypeName(uint8_t type) {
  static constexpr std::string_view kNames[] = {"IR",   "standard", "OM tiny",
                                                "flow", "lite",     "bundle"};
  if (type < std::size(kNames)) return std::string(kNames[type]);
  return fmt::format("model type {}", type);
}

// ---------------------------------------------------------------- names

// CANN 8 models store most attribute names as an index into the model attr
// attr_name_enum: a key starting with byte 0 is followed by base-127
// digits, least significant first, each stored as digit + 1. When
// attrs_use_string_value[index] is set, the value (i or list.i) holds
// indexes into attr_value_enum. Expanded here so attributes read as ATC's
// JSON prints them. A submodel saved after its root may have dictionary
// entries that are themselves encoded names: they expand again through the
// root model's dictionary.
class AttrExpander {
 public:
  AttrExpander(const ge_ir::ModelDef& own, const ge_ir::ModelDef* root)
      : own_(DictOf(own)),
        root_(root != nullptr ? DictOf(*root) : Dict{}),
        has_root_(root != nullptr && root != &own) {}

  void Expand(ge_ir::ModelDef* def) {
    if (own_.names.empty()) return;
    for (ge_ir::GraphDef& g : *def->mutable_graph()) Graph(&g, 0);
  }
  uint64_t failures() const { return failures_; }
  uint64_t expanded() const { return expanded_; }

 private:
  struct Dict {
    std::vector<std::string> names, values;
    std::vector<bool> use_string;
  };

  static Dict DictOf(const ge_ir::ModelDef& def) {
    Dict d;
    auto list = [&](const char* key) -> const ge_ir::AttrDef::ListValue* {
      auto it = def.attr().find(key);
      if (it == def.attr().end() ||
          it->second.value_case() != ge_ir::AttrDef::kList) {
        return nullptr;
      }
      return &it->second.list();
    };
    if (auto* l = list("attr_name_enum")) {
      d.names.assign(l->s().begin(), l->s().end());
    }
    if (auto* l = list("attr_value_enum")) {
      d.values.assign(l->s().begin(), l->s().end());
    }
    if (auto* l = list("attrs_use_string_value")) {
      d.use_string.assign(l->b().begin(), l->b().end());
    }
    return d;
  }

  static bool Index(std::string_view key, uint64_t* index) {
    uint64_t value = 0, scale = 1;
    for (size_t i = 1; i < key.size(); ++i) {
      unsigned char digit = static_cast<unsigned char>(key[i]);
      if (digit == 0 || digit > 127 || i > 6) return false;
      value += static_cast<uint64_t>(digit - 1) * scale;
      scale *= 127;
    }
    *index = value;
    return key.size() > 1;
  }

  // The name a key stands for, and whether its value is an index into the
  // value dictionary.
  bool Decode(const std::string& key, std::string* name, bool* use_string) {
    uint64_t index = 0;
    if (!Index(key, &index) || index >= own_.names.size()) return false;
    *name = own_.names[index];
    *use_string = index < own_.use_string.size() && own_.use_string[index];
    if (!name->empty() && (*name)[0] == '\0' && has_root_) {
      uint64_t root_index = 0;
      if (!Index(*name, &root_index) || root_index >= root_.names.size()) {
        return false;
      }
      *name = root_.names[root_index];
    }
    return name->empty() || (*name)[0] != '\0';
  }

  bool Value(uint64_t index, std::string* out) const {
    if (index >= own_.values.size()) return false;
    *out = own_.values[index];
    return true;
  }

  void Map(google::protobuf::Map<std::string, ge_ir::AttrDef>* map, int depth) {
    if (depth > kMaxAttrDepth) return;
    std::vector<std::string> encoded;
    for (auto& [key, value] : *map) {
      if (!key.empty() && key[0] == '\0') {
        encoded.push_back(key);
      } else {
        Attr(&value, false, depth + 1);
      }
    }
    for (const std::string& key : encoded) {
      std::string name;
      bool use_string = false;
      if (!Decode(key, &name, &use_string)) {
        ++failures_;
        continue;
      }
      ge_ir::AttrDef value = std::move((*map)[key]);
      map->erase(key);
      Attr(&value, use_string, depth + 1);
      (*map)[name] = std::move(value);
      ++expanded_;
    }
  }

  void Attr(ge_ir::AttrDef* a, bool use_string, int depth) {
    if (depth > kMaxAttrDepth) return;
    switch (a->value_case()) {
      case ge_ir::AttrDef::kI:
        if (use_string) {
          std::string s;
          if (a->i() < 0 || !Value(static_cast<uint64_t>(a->i()), &s)) {
            ++failures_;
          } else {
            a->set_s(s);
          }
        }
        break;
      case ge_ir::AttrDef::kList: {
        ge_ir::AttrDef::ListValue* l = a->mutable_list();
        if (use_string && l->i_size() > 0) {
          std::vector<std::string> strings;
          for (int64_t i : l->i()) {
            std::string s;
            if (i < 0 || !Value(static_cast<uint64_t>(i), &s)) {
              ++failures_;
              return;
            }
            strings.push_back(std::move(s));
          }
          l->clear_i();
          for (std::string& s : strings) l->add_s(std::move(s));
          l->set_val_type(ge_ir::AttrDef::ListValue::VT_LIST_STRING);
        }
        for (ge_ir::TensorDescriptor& td : *l->mutable_td()) {
          Desc(&td, depth + 1);
        }
        for (ge_ir::TensorDef& t : *l->mutable_t()) {
          Desc(t.mutable_desc(), depth + 1);
        }
        for (ge_ir::GraphDef& g : *l->mutable_g()) Graph(&g, depth + 1);
        break;
      }
      case ge_ir::AttrDef::kTd:
        Desc(a->mutable_td(), depth + 1);
        break;
      case ge_ir::AttrDef::kT:
        Desc(a->mutable_t()->mutable_desc(), depth + 1);
        break;
      case ge_ir::AttrDef::kG:
        Graph(a->mutable_g(), depth + 1);
        break;
      case ge_ir::AttrDef::kFunc:
        Map(a->mutable_func()->mutable_attr(), depth + 1);
        break;
      default:
        break;
    }
  }

  void Desc(ge_ir::TensorDescriptor* d, int depth) {
    Map(d->mutable_attr(), depth + 1);
  }

  void Graph(ge_ir::GraphDef* g, int depth) {
    if (depth > kMaxAttrDepth) return;
    Map(g->mutable_attr(), depth + 1);
    for (ge_ir::OpDef& op : *g->mutable_op()) {
      Map(op.mutable_attr(), depth + 1);
      for (auto& d : *op.mutable_input_desc()) Desc(&d, depth + 1);
      for (auto& d : *op.mutable_output_desc()) Desc(&d, depth + 1);
    }
  }

  Dict own_, root_;
  bool has_root_;
  uint64_t failures_ = 0, expanded_ = 0;
};

// ---------------------------------------------------------------- flow

// A FLOW_SUBMODEL partition (flow_model.proto SubmodelDef): 1 model_name,
// 2 model_type, 3 om_data (a whole nested .om), 9 om_data_file_path.
struct FlowSubmodel {
  std::string name, type, file_path;
  std::string_view om_data;
  uint64_t om_offset = 0;  // in the outer file
};

constexpr WireFieldName kSubmodelFields[] = {{1, "model_name"},
                                             {2, "model_type"},
                                             {3, "om_data"},
                                             {9, "om_data_file_path"}};
constexpr WireMessageSchema kSubmodelSchema{"SubmodelDef", kSubmodelFields};

Status ParseSubmodel(std::string_view d, std::string_view where,
                     uint64_t offset, FlowSubmodel* out) {
  WireReader reader(d, offset, kSubmodelSchema, where);
  WireField field;
  while (!reader.done()) {
    MI_RETURN_IF_ERROR(reader.Next(&field));
    if (field.type != WireType::kLengthDelimited) continue;
    switch (field.number) {
      case 1:
        out->name = std::string(field.payload);
        break;
      case 2:
        out->type = std::string(field.payload);
        break;
      case 3:
        out->om_data = field.payload;
        out->om_offset = field.payload_offset;
        break;
      case 9:
        out->file_path = std::string(field.payload);
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- model

// One {table, data} group, read.
struct GroupData {
  bool has_def = false;
  ge_ir::ModelDef def;
  bool has_tasks = false;
  om_ir::ModelTaskDef tasks;
  std::vector<std::pair<uint32_t, om::KernelItem>> kernels;  // store type
  uint64_t weights = 0;
  size_t inout_blocks = 0;
};

std::string Bytes(uint64_t n) { return fmt::format("{} bytes", n); }

class OmReader {
 public:
  explicit OmReader(ImportContext& ctx) : ctx_(ctx) {}

  Status Read(std::string_view data, std::string where, uint64_t base,
              std::string label, int depth) {
    MI_ASSIGN_OR_RETURN(om::Layout layout, om::ParseLayout(data, where, base));
    std::vector<GroupData> groups(layout.groups.size());
    for (size_t g = 0; g < layout.groups.size(); ++g) {
      MI_RETURN_IF_ERROR(
          ReadGroup(data, where, base, layout.groups[g], &groups[g]));
    }
    if (groups.empty() || !groups[0].has_def) {
      return MalformedInputError(fmt::format(
          "{}: byte {}: the first partition table lists no MODEL_DEF "
          "partition; expected the model's graph there",
          where, base + om::kHeaderSize));
    }
    // Compressed attribute names, with the root model's dictionary for
    // submodels.
    uint64_t unexpanded = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (!groups[g].has_def) continue;
      AttrExpander expander(groups[g].def, g == 0 ? nullptr : &groups[0].def);
      expander.Expand(&groups[g].def);
      unexpanded += expander.failures();
    }
    if (unexpanded > 0 && ctx_.diagnostics != nullptr) {
      ctx_.diagnostics->Report(
          DiagnosticCode::kUnknownFieldSkipped, {where},
          fmt::format("{} compressed attribute names or values index past "
                      "the model's attr_name_enum / attr_value_enum; kept "
                      "as stored",
                      unexpanded));
    }

    // Group 0 is the model; a later group whose graph the root model holds
    // as a subgraph (a dynamic model's submodel) adds its tasks and
    // kernels to those ops; any other group is a model of its own.
    std::vector<std::string> root_graphs;
    for (const ge_ir::GraphDef& gd : groups[0].def.graph()) {
      root_graphs.push_back(gd.name());
    }
    std::vector<size_t> merged = {0}, separate;
    for (size_t g = 1; g < groups.size(); ++g) {
      if (!groups[g].has_def || groups[g].def.graph_size() == 0) {
        merged.push_back(g);
        continue;
      }
      const std::string& name = groups[g].def.graph(0).name();
      bool in_root = std::find(root_graphs.begin(), root_graphs.end(), name) !=
                     root_graphs.end();
      (in_root ? merged : separate).push_back(g);
    }

    GeModelExtras extras;
    extras.const_weight_sizes = true;
    extras.producer = "ATC offline model";
    const om::Header& h = layout.header;
    auto meta = [&](std::string key, std::string value) {
      extras.metadata.emplace_back(std::move(key), std::move(value));
    };
    if (!label.empty()) meta("om flow submodel", label);
    meta("om header",
         fmt::format("version {} (0x{:08X}), {} model, {} partition entries",
                     h.version >= om::kVersion2 ? 2 : 1, h.version,
                     ModelTypeName(h.model_type),
                     layout.groups[0].wide_entries ? "24-byte" : "12-byte"));
    if (!h.name.empty()) meta("om name", h.name);
    if (!h.platform_version.empty()) {
      meta("om platform version", h.platform_version);
    }
    if (layout.groups.size() > 1) {
      std::string names;
      for (size_t g = 1; g < groups.size(); ++g) {
        if (!names.empty()) names += ", ";
        names += groups[g].has_def ? groups[g].def.name() : "?";
      }
      meta("om models", fmt::format("{} (root model, then {})",
                                    layout.groups.size(), names));
    }
    uint64_t weights = 0, kernels = 0, inout = 0;
    for (size_t g = 0; g < layout.groups.size(); ++g) {
      std::string parts;
      for (const om::Partition& p : layout.groups[g].partitions) {
        if (!parts.empty()) parts += ", ";
        parts += fmt::format("{} {}", om::PartitionTypeName(p.type), p.size);
      }
      meta(layout.groups.size() == 1
               ? std::string("om partitions (bytes)")
               : fmt::format("om partitions of model {} (bytes)", g + 1),
           parts);
      weights += groups[g].weights;
      kernels += groups[g].kernels.size();
      inout += groups[g].inout_blocks;
    }
    meta("weights (WEIGHTS_DATA, not read)", Bytes(weights));
    meta("om kernel binaries", std::to_string(kernels));
    if (inout > 0) meta("om MODEL_INOUT_INFO blocks", std::to_string(inout));

    uint64_t task_total = 0, task_without_op = 0;
    for (size_t g : merged) {
      AddTasks(groups[g], &extras, &task_total, &task_without_op);
    }
    meta("om tasks", std::to_string(task_total));
    if (task_without_op > 0) {
      meta("om tasks of no op", std::to_string(task_without_op));
    }
    std::vector<FlowSubmodel> flow;
    for (const om::Partition& p : layout.groups[0].partitions) {
      if (p.type != om::kFlowSubmodel) continue;
      FlowSubmodel sub;
      MI_RETURN_IF_ERROR(ParseSubmodel(data.substr(p.offset, p.size), where,
                                       base + p.offset, &sub));
      flow.push_back(std::move(sub));
    }
    if (!flow.empty()) {
      std::string names;
      for (const FlowSubmodel& f : flow) {
        if (!names.empty()) names += ", ";
        names += fmt::format("{} ({})", f.name, f.type.empty() ? "?" : f.type);
      }
      meta("om flow submodels", names);
    }
    MI_RETURN_IF_ERROR(ge::ConvertGeModel(groups[0].def, "", ctx_, extras));

    for (size_t g : separate) {
      GeModelExtras sub;
      sub.const_weight_sizes = true;
      sub.producer = extras.producer;
      sub.metadata.emplace_back(
          "om model",
          fmt::format("{} of {} in {}", g + 1, layout.groups.size(), where));
      uint64_t total = 0, without = 0;
      AddTasks(groups[g], &sub, &total, &without);
      sub.metadata.emplace_back("om tasks", std::to_string(total));
      MI_RETURN_IF_ERROR(ge::ConvertGeModel(groups[g].def, "", ctx_, sub));
    }

    for (const FlowSubmodel& f : flow) {
      if (f.om_data.empty()) {
        if (ctx_.diagnostics != nullptr) {
          ctx_.diagnostics->Report(
              DiagnosticCode::kUnknownFieldSkipped, {where},
              fmt::format("flow submodel '{}' keeps its .om in a separate "
                          "file ('{}'), not read",
                          f.name, f.file_path));
        }
        continue;
      }
      if (depth + 1 > kMaxNesting) {
        return MalformedInputError(fmt::format(
            "{}: byte {}: flow submodels nested deeper than {} levels", where,
            f.om_offset, kMaxNesting));
      }
      MI_RETURN_IF_ERROR(
          Read(f.om_data, fmt::format("{} (flow submodel '{}')", where, f.name),
               f.om_offset, f.name, depth + 1));
    }
    return Status::Ok();
  }

 private:
  Status ReadGroup(std::string_view data, std::string_view where, uint64_t base,
                   const om::Group& group, GroupData* out) {
    for (const om::Partition& p : group.partitions) {
      std::string_view bytes = data.substr(p.offset, p.size);
      uint64_t at = base + p.offset;
      switch (p.type) {
        case om::kModelDef:
          if (out->has_def) break;
          if (bytes.size() > INT32_MAX ||
              !out->def.ParseFromArray(bytes.data(),
                                       static_cast<int>(bytes.size()))) {
            return MalformedInputError(fmt::format(
                "{}: byte {}: the MODEL_DEF partition ({} bytes) is not a "
                "valid ge.proto.ModelDef",
                where, at, bytes.size()));
          }
          out->has_def = true;
          break;
        case om::kTaskInfo:
          if (out->has_tasks) break;
          if (bytes.size() > INT32_MAX ||
              !out->tasks.ParseFromArray(bytes.data(),
                                         static_cast<int>(bytes.size()))) {
            return MalformedInputError(fmt::format(
                "{}: byte {}: the TASK_INFO partition ({} bytes) is not a "
                "valid domi.ModelTaskDef",
                where, at, bytes.size()));
          }
          out->has_tasks = true;
          break;
        case om::kWeightsData:
          out->weights += p.size;
          break;
        case om::kTbeKernels:
        case om::kCustAicpuKernels:
        case om::kSoBins: {
          MI_ASSIGN_OR_RETURN(std::vector<om::KernelItem> items,
                              om::ParseKernelStore(bytes, where, at));
          for (om::KernelItem& item : items) {
            out->kernels.emplace_back(p.type, std::move(item));
          }
          break;
        }
        case om::kModelInoutInfo: {
          MI_ASSIGN_OR_RETURN(std::vector<om::InoutBlock> blocks,
                              om::ParseInoutInfo(bytes, where, at));
          out->inout_blocks += blocks.size();
          break;
        }
        default:
          break;
      }
    }
    return Status::Ok();
  }

  // Each task's op: the model attr task_index_op_name (the op of every
  // task, in order) when the model has one, else the op whose OpDef.id the
  // task's op_index names.
  static void AddTasks(const GroupData& g, GeModelExtras* extras,
                       uint64_t* total, uint64_t* without_op) {
    for (const auto& [store, item] : g.kernels) {
      extras->op_kernels[item.name] =
          fmt::format("{}, {}", om::PartitionTypeName(store), Bytes(item.size));
    }
    if (!g.has_tasks) return;
    std::unordered_map<int64_t, std::string> by_id;
    std::vector<std::string> index_names;
    if (g.has_def) {
      for (const ge_ir::GraphDef& graph : g.def.graph()) {
        for (const ge_ir::OpDef& op : graph.op()) {
          by_id.emplace(op.id(), op.name());
        }
      }
      auto it = g.def.attr().find("task_index_op_name");
      if (it != g.def.attr().end() &&
          it->second.value_case() == ge_ir::AttrDef::kList) {
        index_names.assign(it->second.list().s().begin(),
                           it->second.list().s().end());
      }
    }
    for (int i = 0; i < g.tasks.task_size(); ++i) {
      const om_ir::TaskDef& t = g.tasks.task(i);
      ++*total;
      bool has_op_index = true;
      int64_t op_index = 0;
      std::string kernel;
      uint32_t block_dim = 0;
      if (t.has_kernel()) {
        op_index = t.kernel().context().op_index();
        kernel = !t.kernel().kernel_name().empty() ? t.kernel().kernel_name()
                                                   : t.kernel().stub_func();
        block_dim = t.kernel().block_dim();
      } else if (t.has_kernel_with_handle()) {
        op_index = t.kernel_with_handle().context().op_index();
        kernel = !t.kernel_with_handle().original_kernel_key().empty()
                     ? t.kernel_with_handle().original_kernel_key()
                     : t.kernel_with_handle().dev_func();
        block_dim = t.kernel_with_handle().block_dim();
      } else if (t.has_kernel_ex()) {
        op_index = t.kernel_ex().op_index();
      } else if (t.has_kernel_hccl()) {
        op_index = t.kernel_hccl().op_index();
        kernel = t.kernel_hccl().hccl_type();
      } else if (t.has_memcpy_async()) {
        op_index = t.memcpy_async().op_index();
      } else if (t.has_ffts_plus_task()) {
        op_index = t.ffts_plus_task().op_index();
      } else {
        has_op_index = false;
      }
      std::string op;
      if (i < static_cast<int>(index_names.size())) op = index_names[i];
      if (op.empty() && has_op_index) {
        auto it = by_id.find(op_index);
        if (it != by_id.end()) op = it->second;
      }
      if (op.empty()) {
        ++*without_op;
        continue;
      }
      std::string line = TaskTypeName(t.type());
      if (!kernel.empty()) line += " " + kernel;
      line += fmt::format(", stream {}", t.stream_id());
      if (block_dim != 0) line += fmt::format(", block_dim {}", block_dim);
      extras->op_tasks[op].push_back(std::move(line));
    }
  }

  ImportContext& ctx_;
};

class OmImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor = new ImporterDescriptor{
        "om", {".om"}, 5, ContentKind::kGraph, "an Ascend offline model (.om)"};
    return *kDescriptor;
  }

  int Sniff(std::string_view head, std::string_view path) const override {
    if (head.starts_with("IMOD")) return 100;
    // Named .om but not IMOD (a PICO or OM2 zip model, a truncated file):
    // claimed so that the error says what the file is.
    if (StripGzSuffix(path).ends_with(".om")) return 30;
    return 0;
  }

  Status Import(ImportContext& ctx) const override {
    if (ctx.path.ends_with(".gz")) {
      MemoryCharge data_charge(ctx.budget);
      MI_ASSIGN_OR_RETURN(std::string data,
                          io::ReadDecompressedFile(ctx.path, &data_charge));
      return ImportOmFromBuffer(data, ctx);
    }
    MI_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file,
                        MappedFile::Open(ctx.path));
    return ImportOmFromBuffer(file->view(), ctx);
  }
};

}  // namespace

Status ImportOmFromBuffer(std::string_view data, ImportContext& ctx) {
  if (ctx.model == nullptr) {
    return InternalError("ImportOmFromBuffer: ImportContext has no model");
  }
  // An offline model is compiled whatever its ops say.
  LevelHint hint = ctx.level_hint;
  if (hint == LevelHint::kAuto) ctx.level_hint = LevelHint::kCompiled;
  Status status = OmReader(ctx).Read(data, ctx.path, 0, "", 0);
  ctx.level_hint = hint;
  return status;
}

std::unique_ptr<Importer> CreateOmImporter() {
  return std::make_unique<OmImporter>();
}

}  // namespace mi::importers
