#pragma once

// Encoders of a hierarchical layout for the UI and for documents: compact
// binary (typed arrays the browser wraps without copying; the format is
// docs/reference/layout-binary.md), JSON with the same content
// (docs/reference/schemas/layout.schema.json) and a standalone SVG. All
// three read one LayoutLabels (what the geometry does not know: names,
// shapes, ids), so they cannot disagree; all are deterministic byte for
// byte.
//
// Edge curves: a route is a polyline whose points alternate rank bands and
// inter-rank gaps. Between consecutive points p and q it is drawn as a
// cubic Bézier with control points p + (0, dy/2) and q - (0, dy/2), where
// dy = q.y - p.y (left-to-right: the same on the x axis). Each piece stays
// inside its segment's bounding box, so the curve avoids nodes exactly as
// the polyline does.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "layout/hierarchical_layout.h"
#include "layout/layered_layout.h"
#include "layout/model_layout.h"

namespace mi {
class Model;
enum class NodeStatus : uint8_t;  // model/model.h
}  // namespace mi

namespace mi::layout {

// Per layout node, edge and group: the text and ids the encoders attach to
// the geometry of a HierarchicalResult. Indexed like the LayoutInput and
// GroupTree the layout was built from.
struct LayoutLabels {
  std::string title;  // the graph's name
  Direction direction = Direction::kTopToBottom;
  // Per layout node.
  std::vector<LayoutItemKind> node_kind;
  // Model node id (kNode) or value id (graph input / output); UINT32_MAX =
  // none.
  std::vector<uint32_t> node_model_id;
  std::vector<std::string> node_title;     // op type, or the value's name
  std::vector<std::string> node_subtitle;  // short node name, or ""
  std::vector<std::string> node_tooltip;   // full node name (SVG <title>)
  // Per layout node, from the session's links (empty = no information):
  // what happened to the node at run time, the total duration of its linked
  // tasks in microseconds (-1 = none) and their number. The session fills
  // them; the layout module knows nothing of the linker.
  std::vector<NodeStatus> node_status;
  std::vector<float> node_time_us;
  std::vector<uint32_t> node_task_count;
  // Per input edge (as given to the layout).
  std::vector<LayoutEdge> edges;
  std::vector<std::string> edge_label;  // tensor shape, e.g. "1x64x56x56"
  // The tensor an edge carries (UINT32_MAX = none): its shape is shown on
  // the first visible edge carrying it only (fan-out would repeat it).
  std::vector<uint32_t> edge_value;
  // Per group, and the op type names GroupSummary::top_ops index.
  std::vector<std::string> group_label;
  std::vector<std::string> op_names;
};

// Labels from the model: op types, short names (NodeShortName), value names
// and tensor shapes. `groups` supplies group labels and op names.
LayoutLabels LabelsFromModel(const Model& model, GraphId graph,
                             const LayoutInput& input, const GroupTree& groups,
                             Direction direction);

// Item kinds in the encodings (wider than LayoutItemKind: collapsed groups
// are items too).
enum class EncodedItemKind : uint8_t {
  kNode = 0,
  kGraphInput = 1,
  kGraphOutput = 2,
  kGroup = 3,
  kMissingInput = 4,  // a tensor nothing provides (LayoutItemKind)
};

// Node status codes in the encodings (section `node_status`, JSON
// `nodes.status`): 0 none (no trace, or a graph input / output), 1 executed,
// 2 fused, 3 not executed, 4 inserted.
uint8_t EncodedNodeStatus(NodeStatus status);
// "none" | "executed" | "fused" | "not_executed" | "inserted".
std::string_view EncodedNodeStatusName(uint8_t code);

// Edge flag bits.
inline constexpr uint8_t kEdgeReversed = 1;    // back edge: drawn dashed
inline constexpr uint8_t kEdgeLabelShown = 2;  // first edge of its tensor
inline constexpr uint8_t kGroupExpanded = 1;   // group flag bits
inline constexpr uint8_t kGroupVisible = 2;

// Binary format identification (docs/reference/layout-binary.md).
inline constexpr char kLayoutMagic[4] = {'M', 'I', 'L', 'Y'};
inline constexpr uint32_t kLayoutBinaryVersion = 1;
inline constexpr uint32_t kLayoutHeaderBytes = 64;

// Section ids and element types of the binary format, in file order.
enum class LayoutSection : uint32_t {
  kItemBox = 1,
  kItemKind,
  kItemRef,
  kItemModelId,
  kItemTitle,
  kItemSubtitle,
  kEdgeFrom,
  kEdgeTo,
  kEdgeCount,
  kEdgeFlags,
  kEdgeLabel,
  kEdgePointBegin,
  kPoints,
  kFrames,
  kGroupParent,
  kGroupRepeatOf,
  kGroupKind,
  kGroupFlags,
  kGroupDepth,
  kGroupNodeCount,
  kGroupBounds,
  kGroupLabel,
  kGroupTopOps,
  kGroupTopOpCounts,
  kOpNames,
  kNodeItem,
  kNodeModelId,
  kStringOffsets,
  kStringData,
  kFrameProfiles,
  kNodeStatus,
  kNodeTimeUs,
  kNodeTaskCount,
  kCount = kNodeTaskCount,
};
enum class LayoutElementType : uint32_t {
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kFloat32 = 4,
};

std::string EncodeLayoutBinary(const HierarchicalResult& result,
                               const LayoutLabels& labels);
// One JSON object, compact, fixed key order, floats in shortest round-trip
// form.
std::string EncodeLayoutJson(const HierarchicalResult& result,
                             const LayoutLabels& labels);
// A standalone SVG: frames for expanded groups (header band with the label,
// fill by group kind), collapsed groups as boxes with their summary, nodes
// coloured by op type, edges as curves (rule above) with arrowheads, back
// edges dashed, aggregated edges thicker and labelled "×N".
std::string RenderHierarchicalSvg(const HierarchicalResult& result,
                                  const LayoutLabels& labels);

// "scope" | "fusion" | "repeat" | "chunk".
std::string_view GroupKindName(GroupKind kind);

}  // namespace mi::layout
