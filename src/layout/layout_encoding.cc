#include "layout/layout_encoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "layout/op_palette.h"
#include "model/model.h"

namespace mi::layout {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// What the three encoders share, resolved once from the result and the
// labels: the string table and per item / edge / group string indices and
// flags.
struct Resolved {
  std::vector<std::string_view> strings;  // index 0 is ""
  std::map<std::string_view, uint32_t> string_index;
  uint32_t title = 0;
  std::vector<uint8_t> item_kind;
  std::vector<uint32_t> item_ref, item_model_id, item_title, item_subtitle;
  std::vector<uint8_t> edge_flags;
  std::vector<uint32_t> edge_label;
  std::vector<uint32_t> group_label;
  std::vector<uint8_t> group_flags;
  std::vector<uint32_t> op_names;
  std::vector<uint32_t> node_model_id;
  // Per layout node: status code, time (-1 = none), task count.
  std::vector<uint8_t> node_status;
  std::vector<float> node_time_us;
  std::vector<uint32_t> node_task_count;

  uint32_t Intern(std::string_view s) {
    auto [it, inserted] =
        string_index.try_emplace(s, static_cast<uint32_t>(strings.size()));
    if (inserted) strings.push_back(s);
    return it->second;
  }
};

template <typename T>
const T& At(const std::vector<T>& v, size_t i, const T& fallback) {
  return i < v.size() ? v[i] : fallback;
}

Resolved Resolve(const HierarchicalResult& r, const LayoutLabels& labels) {
  static const std::string kEmpty;
  Resolved out;
  out.Intern("");
  out.title = out.Intern(labels.title);
  for (const std::string& op : labels.op_names) {
    out.op_names.push_back(out.Intern(op));
  }
  for (size_t g = 0; g < r.groups.size(); ++g) {
    out.group_label.push_back(out.Intern(At(labels.group_label, g, kEmpty)));
    const GroupSummary& s = r.groups[g];
    out.group_flags.push_back(static_cast<uint8_t>(
        (s.expanded ? kGroupExpanded : 0) | (s.visible ? kGroupVisible : 0)));
  }
  for (const VisibleItem& item : r.items) {
    if (item.group >= 0) {
      out.item_kind.push_back(static_cast<uint8_t>(EncodedItemKind::kGroup));
      out.item_ref.push_back(static_cast<uint32_t>(item.group));
      out.item_model_id.push_back(kNone);
      out.item_title.push_back(out.group_label[item.group]);
      out.item_subtitle.push_back(0);
      continue;
    }
    auto v = static_cast<size_t>(item.node);
    LayoutItemKind kind = At(labels.node_kind, v, LayoutItemKind::kNode);
    out.item_kind.push_back(static_cast<uint8_t>(
        kind == LayoutItemKind::kNode         ? EncodedItemKind::kNode
        : kind == LayoutItemKind::kGraphInput ? EncodedItemKind::kGraphInput
        : kind == LayoutItemKind::kMissingInput
            ? EncodedItemKind::kMissingInput
            : EncodedItemKind::kGraphOutput));
    out.item_ref.push_back(static_cast<uint32_t>(item.node));
    out.item_model_id.push_back(At(labels.node_model_id, v, kNone));
    out.item_title.push_back(out.Intern(At(labels.node_title, v, kEmpty)));
    out.item_subtitle.push_back(
        out.Intern(At(labels.node_subtitle, v, kEmpty)));
  }
  for (size_t v = 0; v < r.item_of_node.size(); ++v) {
    out.node_model_id.push_back(At(labels.node_model_id, v, kNone));
    out.node_status.push_back(v < labels.node_status.size()
                                  ? EncodedNodeStatus(labels.node_status[v])
                                  : 0);
    float time = At(labels.node_time_us, v, -1.0f);
    out.node_time_us.push_back(std::isfinite(time) && time >= 0 ? time : -1);
    out.node_task_count.push_back(At(labels.node_task_count, v, 0u));
  }

  // Input edges -> the visible edge drawing them (visible edges are sorted
  // by (from, to) item).
  const size_t ecount = r.edges.size();
  std::vector<uint64_t> keys(ecount);
  for (size_t e = 0; e < ecount; ++e) {
    keys[e] = static_cast<uint64_t>(r.edges[e].from) << 32 | r.edges[e].to;
  }
  bool sorted = std::is_sorted(keys.begin(), keys.end());
  std::vector<uint32_t> first_input(ecount, kNone);
  std::vector<uint8_t> consistent(ecount, 1);
  for (size_t e = 0; e < labels.edges.size(); ++e) {
    const LayoutEdge& edge = labels.edges[e];
    if (edge.from >= r.item_of_node.size() || edge.to >= r.item_of_node.size())
      continue;
    uint32_t a = r.item_of_node[edge.from], b = r.item_of_node[edge.to];
    if (a == kNone || b == kNone) continue;
    uint64_t key = static_cast<uint64_t>(a) << 32 | b;
    size_t v = ecount;
    if (sorted) {
      auto it = std::lower_bound(keys.begin(), keys.end(), key);
      if (it != keys.end() && *it == key) v = it - keys.begin();
    } else {
      v = std::find(keys.begin(), keys.end(), key) - keys.begin();
    }
    if (v == ecount) continue;  // inside a collapsed group
    if (first_input[v] == kNone) {
      first_input[v] = static_cast<uint32_t>(e);
    } else if (At(labels.edge_label, e, kEmpty) !=
               At(labels.edge_label, first_input[v], kEmpty)) {
      consistent[v] = 0;
    }
  }
  std::vector<uint32_t> labelled_values;  // sorted
  for (size_t v = 0; v < ecount; ++v) {
    uint8_t flags = r.edges[v].reversed ? kEdgeReversed : 0;
    uint32_t label = 0;
    if (first_input[v] != kNone && consistent[v]) {
      label = out.Intern(At(labels.edge_label, first_input[v], kEmpty));
      uint32_t value = At(labels.edge_value, first_input[v], kNone);
      bool first_of_value = true;
      if (value != kNone) {
        auto it = std::lower_bound(labelled_values.begin(),
                                   labelled_values.end(), value);
        if (it != labelled_values.end() && *it == value) {
          first_of_value = false;
        } else {
          labelled_values.insert(it, value);
        }
      }
      if (label != 0 && first_of_value) flags |= kEdgeLabelShown;
    }
    out.edge_flags.push_back(flags);
    out.edge_label.push_back(label);
  }
  return out;
}

// ---------------------------------------------------------------- binary

class BinaryWriter {
 public:
  explicit BinaryWriter(size_t sections) {
    out_.resize(kLayoutHeaderBytes + 16 * sections);
  }
  std::string& out() { return out_; }
  void Put32(size_t offset, uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      out_[offset + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
  }
  void PutFloat(size_t offset, float f) {
    Put32(offset, std::bit_cast<uint32_t>(f));
  }
  // Appends one section (4-byte aligned, zero padded) and its directory
  // entry.
  template <typename T>
  void Section(LayoutSection id, LayoutElementType type,
               const std::vector<T>& data) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 4);
    size_t offset = out_.size();
    for (const T& v : data) {
      if constexpr (sizeof(T) == 1) {
        out_.push_back(static_cast<char>(v));
      } else {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        for (int i = 0; i < 4; ++i) {
          out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
        }
      }
    }
    while (out_.size() % 4 != 0) out_.push_back('\0');
    size_t entry = kLayoutHeaderBytes + 16 * sections_++;
    Put32(entry, static_cast<uint32_t>(id));
    Put32(entry + 4, static_cast<uint32_t>(type));
    Put32(entry + 8, static_cast<uint32_t>(offset));
    Put32(entry + 12, static_cast<uint32_t>(data.size()));
  }
  size_t sections() const { return sections_; }

 private:
  std::string out_;
  size_t sections_ = 0;
};

// ---------------------------------------------------------------- SVG

// Cuts `text` to at most `max_chars` code points, ending in "…" when cut
// (never inside a UTF-8 sequence).
std::string Fit(std::string_view text, float width, float char_width) {
  size_t max_chars =
      width <= char_width ? 1 : static_cast<size_t>(width / char_width);
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xc0) != 0x80) ++chars;
  }
  if (chars <= max_chars) return std::string(text);
  std::string out;
  size_t kept = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    bool lead = (static_cast<uint8_t>(text[i]) & 0xc0) != 0x80;
    if (lead && ++kept > max_chars - 1) break;
    out.push_back(text[i]);
  }
  return out + "\u2026";
}

struct KindStyle {
  const char* fill;    // frame body
  const char* band;    // frame header band and collapsed box fill
  const char* stroke;  // outline
  const char* dash;    // stroke-dasharray, or ""
};

KindStyle StyleOf(GroupKind kind) {
  switch (kind) {
    case GroupKind::kFusion:
      return {"#fdf3e7", "#f9dfc2", "#c3873f", ""};
    case GroupKind::kRepeat:
      return {"#eff7ec", "#d5ebcd", "#6f9f62", ""};
    case GroupKind::kChunk:
      return {"#f4f4f4", "#e3e3e3", "#8c8c8c", "4,3"};
    case GroupKind::kScope:
      break;
  }
  return {"#f1f4f9", "#dce4f1", "#8696b4", ""};
}

std::string TopOpsText(const GroupSummary& s, const LayoutLabels& labels) {
  std::string out;
  for (int k = 0; k < 3; ++k) {
    int32_t op = s.top_ops[k];
    if (op < 0 || static_cast<size_t>(op) >= labels.op_names.size()) continue;
    if (!out.empty()) out += " ";
    out += labels.op_names[op];
    if (s.top_op_counts[k] > 1) {
      out += fmt::format("\u00d7{}", s.top_op_counts[k]);
    }
  }
  return out;
}

std::string GroupPath(const HierarchicalResult& r, const LayoutLabels& labels,
                      int32_t g) {
  std::vector<int32_t> chain;
  for (int32_t x = g; x > 0 && chain.size() <= r.groups.size();
       x = r.groups[x].parent) {
    chain.push_back(x);
  }
  std::string out;
  for (size_t i = chain.size(); i-- > 0;) {
    if (!out.empty()) out.push_back('/');
    out += At(labels.group_label, static_cast<size_t>(chain[i]), std::string());
  }
  return out;
}

// "same as layer1.0" for a group repeating another, "" if none or if both
// have the same label (fusion groups named by op type say nothing then).
std::string SameAs(const HierarchicalResult& r, const LayoutLabels& labels,
                   int32_t g) {
  static const std::string kEmpty;
  int32_t of = r.groups[g].repeat_of;
  if (of < 0 || static_cast<size_t>(of) >= r.groups.size()) return "";
  const std::string& label =
      At(labels.group_label, static_cast<size_t>(of), kEmpty);
  if (label == At(labels.group_label, static_cast<size_t>(g), kEmpty)) {
    return "";
  }
  return "same as " + label;
}

void AppendCurve(std::string& out, const float* p, uint32_t n, bool lr) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "M{:.1f},{:.1f}", p[0], p[1]);
  for (uint32_t i = 0; i + 1 < n; ++i) {
    float x0 = p[2 * i], y0 = p[2 * i + 1];
    float x1 = p[2 * i + 2], y1 = p[2 * i + 3];
    float c1x = x0, c1y = y0, c2x = x1, c2y = y1;
    if (lr) {
      float half = (x1 - x0) / 2;
      c1x += half;
      c2x -= half;
    } else {
      float half = (y1 - y0) / 2;
      c1y += half;
      c2y -= half;
    }
    fmt::format_to(it, " C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}", c1x, c1y,
                   c2x, c2y, x1, y1);
  }
}

}  // namespace

uint8_t EncodedNodeStatus(NodeStatus status) {
  switch (status) {
    case NodeStatus::kUnknown:
      return 0;
    case NodeStatus::kExecuted:
      return 1;
    case NodeStatus::kFused:
      return 2;
    case NodeStatus::kNotExecuted:
      return 3;
    case NodeStatus::kInserted:
      return 4;
  }
  return 0;
}

std::string_view EncodedNodeStatusName(uint8_t code) {
  static constexpr std::string_view kNames[] = {"none", "executed", "fused",
                                                "not_executed", "inserted"};
  return code < std::size(kNames) ? kNames[code] : kNames[0];
}

std::string_view GroupKindName(GroupKind kind) {
  switch (kind) {
    case GroupKind::kScope:
      return "scope";
    case GroupKind::kFusion:
      return "fusion";
    case GroupKind::kRepeat:
      return "repeat";
    case GroupKind::kChunk:
      return "chunk";
  }
  return "scope";
}

LayoutLabels LabelsFromModel(const Model& model, GraphId graph,
                             const LayoutInput& input, const GroupTree& groups,
                             Direction direction) {
  LayoutLabels labels;
  labels.title = std::string(model.str(model.graph(graph).name));
  labels.direction = direction;
  const size_t n = input.nodes.size();
  labels.node_kind = input.kinds;
  labels.node_kind.resize(n, LayoutItemKind::kNode);
  labels.node_model_id.assign(n, kNone);
  labels.node_title.resize(n);
  labels.node_subtitle.resize(n);
  labels.node_tooltip.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (labels.node_kind[i] == LayoutItemKind::kNode) {
      NodeId node = i < input.model_nodes.size() ? input.model_nodes[i]
                                                 : NodeId::Invalid();
      if (!node.valid()) continue;
      labels.node_model_id[i] = node.value();
      labels.node_title[i] = std::string(model.str(model.node_op_type(node)));
      std::string_view name = model.str(model.node_name(node));
      labels.node_subtitle[i] = NodeShortName(name);
      labels.node_tooltip[i] = std::string(name);
    } else {
      ValueId v = i < input.values.size() ? input.values[i] : ValueId();
      if (!v.valid()) continue;
      labels.node_model_id[i] = v.value();
      labels.node_title[i] = std::string(model.str(model.value_name(v)));
      labels.node_tooltip[i] =
          labels.node_kind[i] == LayoutItemKind::kMissingInput
              ? labels.node_title[i] +
                    ": produced by no node, graph input or initializer"
              : labels.node_title[i];
    }
  }
  labels.edges = input.edges;
  labels.edge_label.resize(input.edges.size());
  labels.edge_value.assign(input.edges.size(), kNone);
  for (size_t e = 0; e < input.edges.size() && e < input.edge_values.size();
       ++e) {
    ValueId v = input.edge_values[e];
    if (!v.valid()) continue;
    labels.edge_value[e] = v.value();
    labels.edge_label[e] = ShapeLabel(model, v);
  }
  labels.group_label = groups.label;
  labels.op_names = groups.op_names;
  return labels;
}

std::string EncodeLayoutBinary(const HierarchicalResult& r,
                               const LayoutLabels& labels) {
  Resolved res = Resolve(r, labels);
  constexpr size_t kSections = static_cast<size_t>(LayoutSection::kCount);
  BinaryWriter w(kSections);
  using S = LayoutSection;
  using T = LayoutElementType;

  std::vector<float> boxes;
  boxes.reserve(4 * r.items.size());
  for (const VisibleItem& item : r.items) {
    boxes.insert(boxes.end(), {item.box.x, item.box.y, item.box.w, item.box.h});
  }
  w.Section(S::kItemBox, T::kFloat32, boxes);
  w.Section(S::kItemKind, T::kUint8, res.item_kind);
  w.Section(S::kItemRef, T::kUint32, res.item_ref);
  w.Section(S::kItemModelId, T::kUint32, res.item_model_id);
  w.Section(S::kItemTitle, T::kUint32, res.item_title);
  w.Section(S::kItemSubtitle, T::kUint32, res.item_subtitle);

  std::vector<uint32_t> from, to, count;
  for (const VisibleEdge& e : r.edges) {
    from.push_back(e.from);
    to.push_back(e.to);
    count.push_back(e.count);
  }
  w.Section(S::kEdgeFrom, T::kUint32, from);
  w.Section(S::kEdgeTo, T::kUint32, to);
  w.Section(S::kEdgeCount, T::kUint32, count);
  w.Section(S::kEdgeFlags, T::kUint8, res.edge_flags);
  w.Section(S::kEdgeLabel, T::kUint32, res.edge_label);
  std::vector<uint32_t> begin = r.edge_point_begin;
  if (begin.empty()) begin.push_back(0);
  w.Section(S::kEdgePointBegin, T::kUint32, begin);
  w.Section(S::kPoints, T::kFloat32, r.points);
  w.Section(S::kFrames, T::kInt32, r.frames);

  const size_t gcount = r.groups.size();
  std::vector<int32_t> parent(gcount), repeat_of(gcount), top_ops;
  std::vector<uint8_t> kind(gcount);
  std::vector<uint32_t> depth(gcount), node_count(gcount), top_counts;
  std::vector<float> bounds;
  for (size_t g = 0; g < gcount; ++g) {
    const GroupSummary& s = r.groups[g];
    parent[g] = s.parent;
    repeat_of[g] = s.repeat_of;
    kind[g] = static_cast<uint8_t>(s.kind);
    depth[g] = s.depth;
    node_count[g] = s.node_count;
    bounds.insert(bounds.end(),
                  {s.bounds.x, s.bounds.y, s.bounds.w, s.bounds.h});
    for (int k = 0; k < 3; ++k) {
      top_ops.push_back(s.top_ops[k]);
      top_counts.push_back(s.top_op_counts[k]);
    }
  }
  w.Section(S::kGroupParent, T::kInt32, parent);
  w.Section(S::kGroupRepeatOf, T::kInt32, repeat_of);
  w.Section(S::kGroupKind, T::kUint8, kind);
  w.Section(S::kGroupFlags, T::kUint8, res.group_flags);
  w.Section(S::kGroupDepth, T::kUint32, depth);
  w.Section(S::kGroupNodeCount, T::kUint32, node_count);
  w.Section(S::kGroupBounds, T::kFloat32, bounds);
  w.Section(S::kGroupLabel, T::kUint32, res.group_label);
  w.Section(S::kGroupTopOps, T::kInt32, top_ops);
  w.Section(S::kGroupTopOpCounts, T::kUint32, top_counts);
  w.Section(S::kOpNames, T::kUint32, res.op_names);
  w.Section(S::kNodeItem, T::kUint32, r.item_of_node);
  w.Section(S::kNodeModelId, T::kUint32, res.node_model_id);

  std::vector<uint32_t> offsets{0};
  std::vector<uint8_t> blob;
  for (std::string_view s : res.strings) {
    blob.insert(blob.end(), s.begin(), s.end());
    offsets.push_back(static_cast<uint32_t>(blob.size()));
  }
  w.Section(S::kStringOffsets, T::kUint32, offsets);
  w.Section(S::kStringData, T::kUint8, blob);
  w.Section(S::kFrameProfiles, T::kFloat32, r.frame_profiles);
  w.Section(S::kNodeStatus, T::kUint8, res.node_status);
  w.Section(S::kNodeTimeUs, T::kFloat32, res.node_time_us);
  w.Section(S::kNodeTaskCount, T::kUint32, res.node_task_count);

  std::memcpy(w.out().data(), kLayoutMagic, 4);
  w.Put32(4, kLayoutBinaryVersion);
  w.Put32(8, static_cast<uint32_t>(kLayoutHeaderBytes + 16 * w.sections()));
  w.Put32(12, labels.direction == Direction::kLeftToRight ? 1 : 0);
  w.PutFloat(16, r.width);
  w.PutFloat(20, r.height);
  w.Put32(24, static_cast<uint32_t>(r.item_of_node.size()));
  w.Put32(28, static_cast<uint32_t>(r.items.size()));
  w.Put32(32, static_cast<uint32_t>(r.edges.size()));
  w.Put32(36, static_cast<uint32_t>(r.points.size() / 2));
  w.Put32(40, static_cast<uint32_t>(r.frames.size()));
  w.Put32(44, static_cast<uint32_t>(gcount));
  w.Put32(48, static_cast<uint32_t>(res.op_names.size()));
  w.Put32(52, static_cast<uint32_t>(res.strings.size()));
  w.Put32(56, static_cast<uint32_t>(w.sections()));
  w.Put32(60, res.title);
  return std::move(w.out());
}

std::string EncodeLayoutJson(const HierarchicalResult& r,
                             const LayoutLabels& labels) {
  Resolved res = Resolve(r, labels);
  std::string out;
  JsonWriter j(&out);
  auto num = [&](float f) {
    if (!std::isfinite(f)) {
      j.Null();
    } else {
      j.Raw(fmt::format("{}", f));
    }
  };
  auto box = [&](const Box& b) {
    j.BeginArray();
    num(b.x);
    num(b.y);
    num(b.w);
    num(b.h);
    j.EndArray();
  };
  auto id = [&](uint32_t v) {
    if (v == kNone) {
      j.Null();
    } else {
      j.UInt(v);
    }
  };
  static constexpr const char* kItemKinds[] = {
      "node", "graph_input", "graph_output", "group", "missing_input"};
  j.BeginObject();
  j.Field("format", "model-inspector-layout");
  j.FieldInt("version", kLayoutBinaryVersion);
  j.Field("title", res.strings[res.title]);
  j.Field("direction",
          labels.direction == Direction::kLeftToRight ? "lr" : "tb");
  j.Key("width");
  num(r.width);
  j.Key("height");
  num(r.height);

  j.Key("items").BeginArray();
  for (size_t i = 0; i < r.items.size(); ++i) {
    j.BeginObject();
    j.Field("kind", kItemKinds[res.item_kind[i]]);
    j.Key("ref").UInt(res.item_ref[i]);
    j.Key("model_id");
    id(res.item_model_id[i]);
    j.Key("box");
    box(r.items[i].box);
    j.Field("title", res.strings[res.item_title[i]]);
    j.Field("subtitle", res.strings[res.item_subtitle[i]]);
    j.EndObject();
  }
  j.EndArray();

  j.Key("edges").BeginArray();
  for (size_t e = 0; e < r.edges.size(); ++e) {
    const VisibleEdge& edge = r.edges[e];
    j.BeginObject();
    j.Key("from").UInt(edge.from);
    j.Key("to").UInt(edge.to);
    j.Key("count").UInt(edge.count);
    j.FieldBool("reversed", (res.edge_flags[e] & kEdgeReversed) != 0);
    j.Field("label", res.strings[res.edge_label[e]]);
    j.FieldBool("label_shown", (res.edge_flags[e] & kEdgeLabelShown) != 0);
    j.Key("points").BeginArray();
    if (e + 1 < r.edge_point_begin.size()) {
      for (uint32_t p = r.edge_point_begin[e]; p < r.edge_point_begin[e + 1];
           ++p) {
        j.BeginArray();
        num(r.points[2 * p]);
        num(r.points[2 * p + 1]);
        j.EndArray();
      }
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();

  j.Key("frames").BeginArray();
  for (int32_t f : r.frames) j.Int(f);
  j.EndArray();
  // Per frame, its silhouette: kProfileBands [lo, hi] pairs, flattened.
  j.Key("frame_profiles").BeginArray();
  constexpr size_t kPerFrame = 2 * HierarchicalResult::kProfileBands;
  for (size_t f = 0; f < r.frames.size(); ++f) {
    j.BeginArray();
    for (size_t k = 0; k < kPerFrame; ++k) {
      size_t at = f * kPerFrame + k;
      num(at < r.frame_profiles.size() ? r.frame_profiles[at] : 0.0f);
    }
    j.EndArray();
  }
  j.EndArray();

  j.Key("groups").BeginArray();
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const GroupSummary& s = r.groups[g];
    j.BeginObject();
    j.Field("label", res.strings[res.group_label[g]]);
    j.FieldInt("parent", s.parent);
    j.Field("kind", GroupKindName(s.kind));
    j.FieldInt("repeat_of", s.repeat_of);
    j.FieldBool("expanded", s.expanded);
    j.FieldBool("visible", s.visible);
    j.Key("depth").UInt(s.depth);
    j.Key("node_count").UInt(s.node_count);
    j.Key("bounds");
    box(s.bounds);
    j.Key("top_ops").BeginArray();
    for (int k = 0; k < 3; ++k) {
      if (s.top_ops[k] < 0) continue;
      j.BeginObject();
      j.Key("op").Int(s.top_ops[k]);
      j.Key("count").UInt(s.top_op_counts[k]);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();

  j.Key("op_names").BeginArray();
  for (uint32_t s : res.op_names) j.String(res.strings[s]);
  j.EndArray();

  j.Key("nodes").BeginObject();
  j.Key("item").BeginArray();
  for (uint32_t item : r.item_of_node) id(item);
  j.EndArray();
  j.Key("model_id").BeginArray();
  for (uint32_t m : res.node_model_id) id(m);
  j.EndArray();
  j.Key("status").BeginArray();
  for (uint8_t code : res.node_status) j.String(EncodedNodeStatusName(code));
  j.EndArray();
  j.Key("time_us").BeginArray();
  for (float t : res.node_time_us) {
    if (t < 0) {
      j.Null();
    } else {
      num(t);
    }
  }
  j.EndArray();
  j.Key("task_count").BeginArray();
  for (uint32_t c : res.node_task_count) j.UInt(c);
  j.EndArray();
  j.EndObject();
  j.EndObject();
  out.push_back('\n');
  return out;
}

std::string RenderHierarchicalSvg(const HierarchicalResult& r,
                                  const LayoutLabels& labels) {
  static const std::string kEmpty;
  constexpr float kMargin = 20;
  constexpr float kHeader = 24;  // hierarchical_layout.cc's frame header band
  const bool lr = labels.direction == Direction::kLeftToRight;
  Resolved res = Resolve(r, labels);
  std::string out;
  auto it = std::back_inserter(out);
  const float full_w = r.width + 2 * kMargin, full_h = r.height + 2 * kMargin;
  fmt::format_to(it,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" "
                 "height=\"{:.0f}\" viewBox=\"{:.1f} {:.1f} {:.1f} {:.1f}\" "
                 "font-family=\"Helvetica, Arial, sans-serif\">\n",
                 full_w, full_h, -kMargin, -kMargin, full_w, full_h);
  out += "<title>";
  AppendXmlEscaped(out, labels.title);
  out += "</title>\n";
  out +=
      "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" "
      "refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"8.4\" "
      "markerHeight=\"8.4\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
      "fill=\"#666\"/></marker></defs>\n";
  fmt::format_to(it,
                 "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                 "height=\"{:.1f}\" fill=\"white\"/>\n",
                 -kMargin, -kMargin, full_w, full_h);

  // Frames of expanded groups, parents first (children are drawn over).
  out += "<g>\n";
  for (int32_t f : r.frames) {
    if (f < 0 || static_cast<size_t>(f) >= r.groups.size()) continue;
    const GroupSummary& s = r.groups[f];
    const Box& b = s.bounds;
    KindStyle style = StyleOf(s.kind);
    const float band = std::min(kHeader, b.h);
    const float rad = std::min(8.0f, band / 2);
    out += "<g><title>";
    AppendXmlEscaped(out, GroupPath(r, labels, f));
    out += "</title>";
    fmt::format_to(it,
                   "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                   "height=\"{:.1f}\" rx=\"8\" fill=\"{}\" stroke=\"{}\"{}/>",
                   b.x, b.y, b.w, b.h, style.fill, style.stroke,
                   *style.dash
                       ? fmt::format(" stroke-dasharray=\"{}\"", style.dash)
                       : std::string());
    // Header band: rounded top corners like the frame, square bottom.
    fmt::format_to(it,
                   "<path d=\"M{:.1f},{:.1f} V{:.1f} Q{:.1f},{:.1f} "
                   "{:.1f},{:.1f} H{:.1f} Q{:.1f},{:.1f} {:.1f},{:.1f} "
                   "V{:.1f} Z\" fill=\"{}\"/>",
                   b.x + 0.5f, b.y + band, b.y + rad, b.x + 0.5f, b.y + 0.5f,
                   b.x + rad, b.y + 0.5f, b.x + b.w - rad, b.x + b.w - 0.5f,
                   b.y + 0.5f, b.x + b.w - 0.5f, b.y + rad, b.y + band,
                   style.band);
    std::string label = At(labels.group_label, static_cast<size_t>(f), kEmpty);
    // Right of the label, what fits of "same as X · N nodes" (bold 11 px:
    // ~6.6 px per character; 9 px: ~5 px).
    float label_room = b.w - 16;
    float free = label_room - 6.6f * static_cast<float>(label.size()) - 12;
    std::string count = fmt::format("{} nodes", s.node_count);
    std::string same = SameAs(r, labels, f);
    std::string right;
    for (const std::string& candidate :
         {same.empty() ? count : same + " \u00b7 " + count, same, count}) {
      if (!candidate.empty() &&
          5.0f * static_cast<float>(candidate.size()) <= free) {
        right = candidate;
        break;
      }
    }
    bool show_right = !right.empty();
    fmt::format_to(it,
                   "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" "
                   "font-weight=\"bold\" fill=\"#333\">",
                   b.x + 8, b.y + 16);
    AppendXmlEscaped(out, Fit(label, label_room, 6.6f));
    out += "</text>";
    if (show_right) {
      fmt::format_to(it,
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" "
                     "fill=\"#666\" text-anchor=\"end\">",
                     b.x + b.w - 8, b.y + 16);
      AppendXmlEscaped(out, right);
      out += "</text>";
    }
    out += "</g>\n";
  }
  out += "</g>\n";

  // Edges, then their labels, then items over their ends.
  out += "<g fill=\"none\" stroke=\"#666\" stroke-width=\"1.2\">\n";
  for (size_t e = 0; e < r.edges.size(); ++e) {
    if (e + 1 >= r.edge_point_begin.size()) break;
    uint32_t b = r.edge_point_begin[e], end = r.edge_point_begin[e + 1];
    if (end - b < 2) continue;
    out += "<path d=\"";
    AppendCurve(out, &r.points[2 * b], end - b, lr);
    out += "\" marker-end=\"url(#arrow)\"";
    uint32_t count = r.edges[e].count;
    if (count > 1) {
      float width =
          std::min(4.0f, 1.2f + 0.7f * std::log2(static_cast<float>(count)));
      fmt::format_to(it, " stroke-width=\"{:.1f}\"", width);
    }
    if (res.edge_flags[e] & kEdgeReversed) {
      out += " stroke-dasharray=\"5,3\"";
    }
    out += "/>\n";
  }
  out += "</g>\n";
  // Left to right, the gaps between ranks are narrower than most labels:
  // they are drawn over the items, with a white halo.
  const size_t label_start = out.size();
  out += lr ? "<g font-size=\"9\" fill=\"#555\" stroke=\"white\" "
              "stroke-width=\"3\" paint-order=\"stroke\">\n"
            : "<g font-size=\"9\" fill=\"#555\">\n";
  for (size_t e = 0; e < r.edges.size(); ++e) {
    if (e + 1 >= r.edge_point_begin.size()) break;
    uint32_t b = r.edge_point_begin[e], end = r.edge_point_begin[e + 1];
    uint32_t count = r.edges[e].count;
    bool shape = (res.edge_flags[e] & kEdgeLabelShown) != 0;
    if (end - b < 2 || (!shape && count < 2)) continue;
    // Beside the middle of the longest segment: there is room there (the
    // curve passes through the segment's midpoint).
    uint32_t best = b;
    float best_len = -1;
    for (uint32_t p = b; p + 1 < end; ++p) {
      float len = std::hypot(r.points[2 * p + 2] - r.points[2 * p],
                             r.points[2 * p + 3] - r.points[2 * p + 1]);
      if (len > best_len) {
        best_len = len;
        best = p;
      }
    }
    float mx = (r.points[2 * best] + r.points[2 * best + 2]) / 2;
    float my = (r.points[2 * best + 1] + r.points[2 * best + 3]) / 2;
    // Top to bottom: right of the line; left to right: centred above it.
    if (lr) {
      fmt::format_to(it,
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">",
                     mx, my - 4);
    } else {
      fmt::format_to(it, "<text x=\"{:.1f}\" y=\"{:.1f}\">", mx + 4, my + 3);
    }
    if (count > 1) {
      fmt::format_to(it, "<tspan font-weight=\"bold\">\u00d7{}</tspan>", count);
      if (shape) out += " ";
    }
    if (shape) AppendXmlEscaped(out, res.strings[res.edge_label[e]]);
    out += "</text>\n";
  }
  out += "</g>\n";
  std::string labels_on_top;
  if (lr) {
    labels_on_top = out.substr(label_start);
    out.resize(label_start);
  }
  out += "<g font-size=\"12\" text-anchor=\"middle\">\n";
  for (size_t i = 0; i < r.items.size(); ++i) {
    const Box& b = r.items[i].box;
    const float cx = b.x + b.w / 2, cy = b.y + b.h / 2;
    const auto kind = static_cast<EncodedItemKind>(res.item_kind[i]);
    std::string_view title = res.strings[res.item_title[i]];
    if (kind == EncodedItemKind::kGroup) {
      int32_t g = r.items[i].group;
      const GroupSummary& s = r.groups[g];
      KindStyle style = StyleOf(s.kind);
      std::string dash =
          *style.dash ? fmt::format(" stroke-dasharray=\"{}\"", style.dash)
                      : std::string();
      out += "<g><title>";
      AppendXmlEscaped(out, GroupPath(r, labels, g));
      out += "</title>";
      // A second card behind the box: a folded group, not a node.
      fmt::format_to(it,
                     "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                     "height=\"{:.1f}\" rx=\"8\" fill=\"{}\" stroke=\"{}\"{}/>",
                     b.x + 3, b.y + 3, b.w, b.h, style.fill, style.stroke,
                     dash);
      fmt::format_to(it,
                     "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                     "height=\"{:.1f}\" rx=\"8\" fill=\"{}\" stroke=\"{}\" "
                     "stroke-width=\"1.4\"{}/>",
                     b.x, b.y, b.w, b.h, style.band, style.stroke, dash);
      fmt::format_to(it,
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\" "
                     "font-size=\"11\">",
                     cx, b.y + 14);
      AppendXmlEscaped(out, Fit(title, b.w - 8, 6.6f));
      std::string line2 = fmt::format("{} nodes", s.node_count);
      fmt::format_to(it,
                     "</text><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" "
                     "fill=\"#333\">",
                     cx, b.y + 27);
      AppendXmlEscaped(out, Fit(line2, b.w - 8, 5.0f));
      out += "</text>";
      // A repeat says which group it repeats (its op types are the same);
      // others list their most frequent op types.
      std::string ops = SameAs(r, labels, g);
      if (ops.empty()) ops = TopOpsText(s, labels);
      if (!ops.empty() && b.h >= 40) {
        fmt::format_to(it,
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"8\" "
                       "fill=\"#555\">",
                       cx, b.y + 38);
        AppendXmlEscaped(out, Fit(ops, b.w - 8, 4.5f));
        out += "</text>";
      }
      out += "</g>\n";
    } else if (kind == EncodedItemKind::kNode) {
      out += "<g><title>";
      AppendXmlEscaped(out, At(labels.node_tooltip,
                               static_cast<size_t>(r.items[i].node), kEmpty));
      out += "</title>";
      fmt::format_to(it,
                     "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                     "height=\"{:.1f}\" rx=\"6\" fill=\"{}\" stroke=\"{}\"/>",
                     b.x, b.y, b.w, b.h, CssHex(OpFill(title)),
                     CssHex(OpOutline(title)));
      fmt::format_to(it,
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\">",
                     cx, cy - 2);
      AppendXmlEscaped(out, title);
      fmt::format_to(it,
                     "</text><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" "
                     "fill=\"#333\">",
                     cx, cy + 12);
      AppendXmlEscaped(out, res.strings[res.item_subtitle[i]]);
      out += "</text></g>\n";
    } else if (kind == EncodedItemKind::kMissingInput) {
      // The graph's fault: red, dashed, with the reason on hover.
      out += "<g class=\"missing-input\"><title>";
      AppendXmlEscaped(out, At(labels.node_tooltip,
                               static_cast<size_t>(r.items[i].node), kEmpty));
      out += "</title>";
      fmt::format_to(it,
                     "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                     "height=\"{:.1f}\" rx=\"{:.1f}\" fill=\"#fde8e8\" "
                     "stroke=\"#c62828\" stroke-width=\"2\" "
                     "stroke-dasharray=\"4,2\"/><text x=\"{:.1f}\" "
                     "y=\"{:.1f}\" fill=\"#c62828\">",
                     b.x, b.y, b.w, b.h, b.h / 2, cx, cy + 4);
      AppendXmlEscaped(out, title);
      out += "</text></g>\n";
    } else {
      fmt::format_to(it,
                     "<g><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                     "height=\"{:.1f}\" rx=\"{:.1f}\" fill=\"#eeeeee\" "
                     "stroke=\"#888\"/><text x=\"{:.1f}\" y=\"{:.1f}\">",
                     b.x, b.y, b.w, b.h, b.h / 2, cx, cy + 4);
      AppendXmlEscaped(out, title);
      out += "</text></g>\n";
    }
  }
  out += "</g>\n";
  out += labels_on_top;
  out += "</svg>\n";
  return out;
}

}  // namespace mi::layout
