#pragma once

// Inline SVG for the HTML reports: a horizontal bar chart, and a graph laid
// out with the layered layout engine (src/layout). All text escaped.

#include <cstdint>
#include <string>
#include <vector>

namespace mi::report {

struct BarSeries {
  std::string name;    // legend: "base", "new", "time"
  std::string colour;  // CSS colour
};
struct BarRow {
  std::string label;
  std::vector<int64_t> values_ns;  // one per series
};
// One group of bars per row (one bar per series), scaled to the largest
// value, each bar labelled with its duration. `title` is the chart's
// accessible name.
std::string BarChartSvg(const std::string& title,
                        const std::vector<BarSeries>& series,
                        const std::vector<BarRow>& rows);

struct GraphNode {
  std::string label;     // first line (node name)
  std::string sublabel;  // second line (op type)
  std::string tooltip;   // <title>
  std::string fill;
  std::string stroke;
  bool dashed = false;
  std::string css_class;  // "added", "removed", ... for tests and styling
  float stroke_width = 1.5f;
};
struct GraphEdge {
  uint32_t from = 0, to = 0;
  // Highlighted edges (the training report's root-cause chain): their own
  // colour (the arrow head too) and width; the arrow head at the start
  // instead of the end when the highlight runs against the edge (a
  // gradient travelling backward); dashed when not a data edge of the graph.
  std::string stroke;  // "" = the default grey
  float width = 1.2f;
  bool arrow_at_start = false;
  bool dashed = false;
  std::string css_class;
};
// The graph laid out top to bottom by mi::layout::LayeredLayout and drawn:
// rounded boxes, polyline edges with arrow heads (back edges dashed).
// Highlighted edges are drawn above the others.
std::string GraphSvg(const std::string& title,
                     const std::vector<GraphNode>& nodes,
                     const std::vector<GraphEdge>& edges);

}  // namespace mi::report
