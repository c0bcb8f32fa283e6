#include "report/svg.h"

#include <algorithm>

#include <fmt/format.h>

#include "layout/layered_layout.h"
#include "report/escape.h"
#include "report/format.h"

namespace mi::report {
namespace {

// Cuts a label to `max_chars` code points, marking the cut with "...".
std::string Fit(const std::string& s, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (++chars > max_chars) return s.substr(0, i) + "...";
    }
  }
  return s;
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

constexpr float kCharWidth = 6.6f;  // 11 px sans-serif, average
constexpr size_t kMaxLabelChars = 32;

}  // namespace

std::string BarChartSvg(const std::string& title,
                        const std::vector<BarSeries>& series,
                        const std::vector<BarRow>& rows) {
  const float label_w = 190, bar_h = 14, gap = 10, value_w = 80;
  const float chart_w = 460;
  const float group_h = bar_h * series.size() + gap;
  const float legend_h = 22;
  float height = legend_h + group_h * rows.size() + 4;
  int64_t max_v = 1;
  for (const BarRow& r : rows) {
    for (int64_t v : r.values_ns) max_v = std::max(max_v, v);
  }
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bar-chart\" "
      "role=\"img\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} "
      "{:.0f}\" font-family=\"sans-serif\" font-size=\"11\">\n<title>{}"
      "</title>\n",
      label_w + chart_w + value_w, height, label_w + chart_w + value_w, height,
      XmlEscape(title));
  float lx = label_w;
  for (const BarSeries& s : series) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"4\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"14\">{}</text>\n",
        lx, XmlEscape(s.colour), lx + 16, XmlEscape(s.name));
    lx += 24 + kCharWidth * CodePoints(s.name);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const BarRow& r = rows[i];
    float y0 = legend_h + group_h * i;
    out += fmt::format(
        "<g class=\"bar-row\"><title>{}</title><text x=\"{:.1f}\" "
        "y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        XmlEscape(r.label), label_w - 6, y0 + bar_h * series.size() / 2 + 4,
        XmlEscape(Fit(r.label, 28)));
    for (size_t s = 0; s < series.size() && s < r.values_ns.size(); ++s) {
      int64_t v = std::max<int64_t>(0, r.values_ns[s]);
      float w = chart_w * static_cast<float>(v) / static_cast<float>(max_v);
      float y = y0 + bar_h * s;
      out += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
          "height=\"{:.1f}\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
          "fill=\"#444\">{}</text>\n",
          label_w, y, std::max(w, 0.5f), bar_h - 2, XmlEscape(series[s].colour),
          label_w + w + 4, y + bar_h - 4, XmlEscape(Duration(v)));
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string GraphSvg(const std::string& title,
                     const std::vector<GraphNode>& nodes,
                     const std::vector<GraphEdge>& edges) {
  std::vector<layout::LayoutNode> lnodes(nodes.size());
  std::vector<std::string> line1(nodes.size()), line2(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    line1[i] = Fit(nodes[i].label, kMaxLabelChars);
    line2[i] = Fit(nodes[i].sublabel, kMaxLabelChars);
    size_t chars = std::max(CodePoints(line1[i]), CodePoints(line2[i]));
    lnodes[i].width = std::clamp(16 + kCharWidth * chars, 60.0f, 240.0f);
    lnodes[i].height = 34;
  }
  std::vector<layout::LayoutEdge> ledges;
  ledges.reserve(edges.size());
  for (const GraphEdge& e : edges) ledges.push_back({e.from, e.to});
  layout::LayoutOptions options;
  layout::LayoutResult lr = layout::LayeredLayout(lnodes, ledges, options);
  const float margin = 12;
  float w = lr.width + 2 * margin;
  float h = lr.height + 2 * margin;
  // One arrow-head marker per edge colour (a marker's fill is its own).
  std::vector<std::string> colours = {"#6e7781"};
  for (const GraphEdge& e : edges) {
    if (!e.stroke.empty() &&
        std::find(colours.begin(), colours.end(), e.stroke) == colours.end()) {
      colours.push_back(e.stroke);
    }
  }
  auto marker_id = [&](const std::string& stroke) {
    size_t k = stroke.empty()
                   ? 0
                   : std::find(colours.begin(), colours.end(), stroke) -
                         colours.begin();
    return k == 0 ? std::string("arrow") : fmt::format("arrow-hl{}", k);
  };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graph\" role=\"img\" "
      "width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<title>{}</title>\n<defs>",
      w, h, w, h, XmlEscape(title));
  for (const std::string& c : colours) {
    // Highlighted edges are wider: their heads sized in pixels, not in
    // stroke widths.
    bool plain = c == colours[0];
    out += fmt::format(
        "<marker id=\"{}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
        "{}markerWidth=\"{}\" markerHeight=\"{}\" "
        "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
        "fill=\"{}\"/></marker>",
        marker_id(plain ? "" : c),
        plain ? "" : "markerUnits=\"userSpaceOnUse\" ", plain ? 7 : 13,
        plain ? 7 : 13, XmlAttributeEscape(c));
  }
  out += fmt::format("</defs>\n<g transform=\"translate({:.0f},{:.0f})\">\n",
                     margin, margin);
  // Plain edges first, highlighted ones above them.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t e = 0; e < edges.size(); ++e) {
      const GraphEdge& edge = edges[e];
      if ((pass == 1) != !edge.stroke.empty()) continue;
      uint32_t b = lr.edge_point_begin[e], end = lr.edge_point_begin[e + 1];
      if (end <= b) continue;
      std::string points;
      for (uint32_t p = b; p < end; ++p) {
        points += fmt::format("{}{:.1f},{:.1f}", p == b ? "" : " ",
                              lr.points[2 * p], lr.points[2 * p + 1]);
      }
      bool dashed = lr.edge_reversed[e] || edge.dashed;
      out += fmt::format(
          "<polyline class=\"edge{}{}\" points=\"{}\" fill=\"none\" "
          "stroke=\"{}\" stroke-width=\"{:.1f}\"{} {}=\"url(#{})\"/>\n",
          edge.css_class.empty() ? "" : " ", XmlAttributeEscape(edge.css_class),
          points,
          edge.stroke.empty() ? std::string("#8c959f")
                              : XmlAttributeEscape(edge.stroke),
          edge.width, dashed ? " stroke-dasharray=\"4 3\"" : "",
          edge.arrow_at_start ? "marker-start" : "marker-end",
          marker_id(edge.stroke));
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    float x = lr.x[i] - lnodes[i].width / 2;
    float y = lr.y[i] - lnodes[i].height / 2;
    out += fmt::format(
        "<g class=\"node{}{}\"><title>{}</title><rect x=\"{:.1f}\" "
        "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"5\" "
        "fill=\"{}\" stroke=\"{}\" stroke-width=\"{:.1f}\"{}/>\n",
        n.css_class.empty() ? "" : " ", XmlEscape(n.css_class),
        XmlEscape(n.tooltip.empty() ? n.label : n.tooltip), x, y,
        lnodes[i].width, lnodes[i].height, XmlEscape(n.fill),
        XmlEscape(n.stroke), n.stroke_width,
        n.dashed ? " stroke-dasharray=\"5 3\"" : "");
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
        "fill=\"#57606a\" font-size=\"10\">{}</text></g>\n",
        lr.x[i], lr.y[i] - 2, XmlEscape(line1[i]), lr.x[i], lr.y[i] + 11,
        XmlEscape(line2[i]));
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace mi::report
