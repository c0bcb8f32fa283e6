#pragma once

// Adapter between the graph data model and the layout engine: turns one
// graph level of a Model into layout nodes and edges (sizes from labels),
// and renders a laid-out graph as a standalone SVG for documents and for
// looking at results in tests.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "layout/layered_layout.h"

namespace mi {
class Model;
}  // namespace mi

namespace mi::layout {

// kMissingInput: a tensor a node of the graph reads that nothing provides
// (no node, graph input or initializer: the graph's fault, which `check`
// reports as dangling_input); drawn as an input marked faulty, so a graph
// with the fault still shows what reads it.
enum class LayoutItemKind : uint8_t {
  kNode,
  kGraphInput,
  kGraphOutput,
  kMissingInput
};

struct LayoutInput {
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  // Per layout node: what it shows. kNode: `node` is the model node;
  // kGraphInput / kGraphOutput / kMissingInput: `value` is the graph input,
  // output or the tensor nothing provides.
  std::vector<LayoutItemKind> kinds;
  std::vector<NodeId> model_nodes;
  std::vector<ValueId> values;
  // Per layout edge: the tensor it carries (for shape labels).
  std::vector<ValueId> edge_values;
};

// Layout nodes are the graph's nodes in file order, then one small node per
// graph input (initializers excluded: weights are not drawn), then one per
// tensor read in `graph` that nothing provides (kMissingInput), then one per
// graph output. Edges run from each value's producer (or graph input) to
// each consumer within `graph`, and from producers to graph outputs; a node
// reading a value twice gets two edges. Does not need Model::BuildIndexes.
LayoutInput BuildLayoutInput(const Model& model, GraphId graph);

// The two label lines of a node: op type, then a short form of its name.
std::string NodeShortName(std::string_view name);

// A tensor's shape as drawn on edges: "1x64x56x56", symbolic dimensions by
// name, "?" when unknown, "scalar"; "" when the value has no shape.
std::string ShapeLabel(const Model& model, ValueId v);

// Appends `text` escaped for XML text and attribute values; control
// characters (not allowed in XML 1.0) become '?'.
void AppendXmlEscaped(std::string& out, std::string_view text);

// A standalone SVG (rounded rects coloured by op type, bold op type + name,
// polyline edges with arrowheads, back edges dashed, tensor shapes on
// edges).
std::string RenderSvg(const Model& model, GraphId graph,
                      const LayoutInput& input, const LayoutResult& result);

}  // namespace mi::layout
