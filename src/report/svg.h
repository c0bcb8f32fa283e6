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
};
struct GraphEdge {
  uint32_t from = 0, to = 0;
};
// The graph laid out top to bottom by mi::layout::LayeredLayout and drawn:
// rounded boxes, polyline edges with arrow heads (back edges dashed).
std::string GraphSvg(const std::string& title,
                     const std::vector<GraphNode>& nodes,
                     const std::vector<GraphEdge>& edges);

}  // namespace mi::report
