#include "layout/model_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "layout/op_palette.h"
#include "model/model.h"

namespace mi::layout {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
// Text metrics of the SVG labels: ~7 px per character at 12 px.
constexpr float kCharWidth = 7;
constexpr float kPadding = 16;
constexpr float kMinWidth = 60;
constexpr float kNodeHeight = 36;
constexpr float kTerminalHeight = 24;
constexpr size_t kMaxNameChars = 28;

float TextWidth(std::string_view a, std::string_view b = {}) {
  size_t chars = std::max(a.size(), b.size());
  return std::max(kMinWidth, kCharWidth * static_cast<float>(chars) + kPadding);
}

}  // namespace

void AppendXmlEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<uint8_t>(c) < 0x20 && c != '\t') {
          out.push_back('?');
        } else {
          out.push_back(c);
        }
    }
  }
}

std::string ShapeLabel(const Model& model, ValueId v) {
  std::string out;
  if (!v.valid() || !model.value_has_shape(v)) return out;
  auto dims = model.value_dims(v);
  auto names = model.value_dim_names(v);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out.push_back('x');
    if (dims[i] >= 0) {
      out += std::to_string(dims[i]);
    } else if (i < names.size() && names[i] != StringPool::kEmpty) {
      out += model.str(names[i]);
    } else {
      out.push_back('?');
    }
  }
  if (dims.empty()) out = "scalar";
  return out;
}

std::string NodeShortName(std::string_view name) {
  // "/layer1/layer1.0/conv1/Conv" -> "conv1/Conv": the innermost scope is
  // what tells neighbouring nodes apart.
  size_t last = name.rfind('/');
  if (last != std::string_view::npos && last > 0) {
    size_t before = name.rfind('/', last - 1);
    name = before == std::string_view::npos ? name : name.substr(before + 1);
  }
  if (!name.empty() && name.front() == '/') name.remove_prefix(1);
  std::string out(name);
  if (out.size() > kMaxNameChars) {
    // Cut in the middle: the front says which block, the back which op.
    // The ellipsis is 3 bytes of UTF-8; cuts stay off continuation bytes.
    size_t head = (kMaxNameChars - 3) / 2;
    size_t tail = kMaxNameChars - 3 - head;
    while (head > 0 && (static_cast<unsigned char>(out[head]) & 0xC0) == 0x80) {
      --head;
    }
    size_t from = out.size() - tail;
    while (from < out.size() &&
           (static_cast<unsigned char>(out[from]) & 0xC0) == 0x80) {
      ++from;
    }
    out = out.substr(0, head) + "\u2026" + out.substr(from);
  }
  return out;
}

LayoutInput BuildLayoutInput(const Model& model, GraphId graph) {
  LayoutInput in;
  std::vector<uint32_t> index_of_node(model.node_count(), kNone);
  for (NodeId node : model.graph_nodes(graph)) {
    index_of_node[node.value()] = static_cast<uint32_t>(in.nodes.size());
    std::string short_name = NodeShortName(model.str(model.node_name(node)));
    in.nodes.push_back(
        {TextWidth(model.str(model.node_op_type(node)), short_name),
         kNodeHeight});
    in.kinds.push_back(LayoutItemKind::kNode);
    in.model_nodes.push_back(node);
    in.values.push_back(ValueId::Invalid());
  }
  // Lookup only, never iterated: order stays that of the graph's lists.
  std::unordered_map<uint32_t, uint32_t> index_of_input;
  const GraphInfo& info = model.graph(graph);
  for (ValueId v : info.inputs) {
    if (model.value_flags(v) & kValueInitializer) continue;
    if (index_of_input.count(v.value())) continue;
    index_of_input[v.value()] = static_cast<uint32_t>(in.nodes.size());
    in.nodes.push_back(
        {TextWidth(model.str(model.value_name(v))), kTerminalHeight});
    in.kinds.push_back(LayoutItemKind::kGraphInput);
    in.model_nodes.push_back(NodeId::Invalid());
    in.values.push_back(v);
  }
  auto source_of = [&](ValueId v) -> uint32_t {
    NodeId producer = model.value_producer(v);
    if (producer.valid() && producer.value() < index_of_node.size() &&
        index_of_node[producer.value()] != kNone) {
      return index_of_node[producer.value()];
    }
    auto it = index_of_input.find(v.value());
    return it == index_of_input.end() ? kNone : it->second;
  };
  // A tensor of this graph with no producer that is neither a graph input
  // nor an initializer (an outer-scope value belongs to its own graph): the
  // fault is drawn as one input item per tensor, added on first read.
  auto missing_source = [&](ValueId v) -> uint32_t {
    if (model.value_graph(v) != graph || model.value_producer(v).valid() ||
        (model.value_flags(v) & (kValueGraphInput | kValueInitializer))) {
      return kNone;
    }
    auto [it, added] = index_of_input.try_emplace(
        v.value(), static_cast<uint32_t>(in.nodes.size()));
    if (added) {
      in.nodes.push_back(
          {TextWidth(model.str(model.value_name(v))), kTerminalHeight});
      in.kinds.push_back(LayoutItemKind::kMissingInput);
      in.model_nodes.push_back(NodeId::Invalid());
      in.values.push_back(v);
    }
    return it->second;
  };
  for (NodeId node : model.graph_nodes(graph)) {
    uint32_t to = index_of_node[node.value()];
    for (ValueId v : model.node_inputs(node)) {
      if (!v.valid()) continue;  // omitted optional input
      uint32_t from = source_of(v);
      if (from == kNone) from = missing_source(v);
      if (from == kNone) continue;  // weight or outer-scope value
      in.edges.push_back({from, to});
      in.edge_values.push_back(v);
    }
  }
  for (ValueId v : info.outputs) {
    uint32_t index = static_cast<uint32_t>(in.nodes.size());
    in.nodes.push_back(
        {TextWidth(model.str(model.value_name(v))), kTerminalHeight});
    in.kinds.push_back(LayoutItemKind::kGraphOutput);
    in.model_nodes.push_back(NodeId::Invalid());
    in.values.push_back(v);
    uint32_t from = source_of(v);
    if (from != kNone) {
      in.edges.push_back({from, index});
      in.edge_values.push_back(v);
    }
  }
  return in;
}

std::string RenderSvg(const Model& model, GraphId graph,
                      const LayoutInput& input, const LayoutResult& result) {
  constexpr float kMargin = 20;
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" "
                 "height=\"{:.0f}\" viewBox=\"{:.1f} {:.1f} {:.1f} {:.1f}\" "
                 "font-family=\"Helvetica, Arial, sans-serif\">\n",
                 result.width + 2 * kMargin, result.height + 2 * kMargin,
                 -kMargin, -kMargin, result.width + 2 * kMargin,
                 result.height + 2 * kMargin);
  out += "<title>";
  AppendXmlEscaped(out, model.str(model.graph(graph).name));
  out += "</title>\n";
  out +=
      "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" "
      "refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
      "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
      "fill=\"#666\"/></marker></defs>\n";
  fmt::format_to(it,
                 "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                 "height=\"{:.1f}\" fill=\"white\"/>\n",
                 -kMargin, -kMargin, result.width + 2 * kMargin,
                 result.height + 2 * kMargin);
  // Edges first, so nodes are drawn over their ends.
  out += "<g fill=\"none\" stroke=\"#666\" stroke-width=\"1.2\">\n";
  for (size_t e = 0; e < input.edges.size(); ++e) {
    uint32_t b = result.edge_point_begin[e],
             end = result.edge_point_begin[e + 1];
    out += "<polyline points=\"";
    for (uint32_t p = b; p < end; ++p) {
      fmt::format_to(it, "{}{:.1f},{:.1f}", p == b ? "" : " ",
                     result.points[2 * p], result.points[2 * p + 1]);
    }
    out += "\" marker-end=\"url(#arrow)\"";
    if (result.edge_reversed[e]) out += " stroke-dasharray=\"5,3\"";
    out += "/>\n";
  }
  out += "</g>\n<g font-size=\"9\" fill=\"#555\">\n";
  // One label per tensor: its fan-out edges carry the same shape, and
  // repeating it clutters the space around the producer.
  std::vector<uint8_t> labelled(model.value_count(), 0);
  for (size_t e = 0; e < input.edges.size(); ++e) {
    ValueId value = input.edge_values[e];
    if (!value.valid() || labelled[value.value()]) continue;
    labelled[value.value()] = 1;
    std::string label = ShapeLabel(model, value);
    uint32_t b = result.edge_point_begin[e],
             end = result.edge_point_begin[e + 1];
    if (label.empty() || end - b < 2) continue;
    // Beside the middle of the longest segment: there is room there.
    uint32_t best = b;
    float best_len = -1;
    for (uint32_t p = b; p + 1 < end; ++p) {
      float dx = result.points[2 * p + 2] - result.points[2 * p];
      float dy = result.points[2 * p + 3] - result.points[2 * p + 1];
      float len = std::hypot(dx, dy);
      if (len > best_len) {
        best_len = len;
        best = p;
      }
    }
    float mx = (result.points[2 * best] + result.points[2 * best + 2]) / 2;
    float my = (result.points[2 * best + 1] + result.points[2 * best + 3]) / 2;
    fmt::format_to(it, "<text x=\"{:.1f}\" y=\"{:.1f}\">", mx + 4, my + 3);
    AppendXmlEscaped(out, label);
    out += "</text>\n";
  }
  out += "</g>\n<g font-size=\"12\" text-anchor=\"middle\">\n";
  for (size_t i = 0; i < input.nodes.size(); ++i) {
    float w = input.nodes[i].width, h = input.nodes[i].height;
    float x = result.x[i] - w / 2, y = result.y[i] - h / 2;
    if (input.kinds[i] == LayoutItemKind::kNode) {
      NodeId node = input.model_nodes[i];
      std::string_view op = model.str(model.node_op_type(node));
      fmt::format_to(it,
                     "<g><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                     "height=\"{:.1f}\" rx=\"6\" fill=\"{}\" stroke=\"{}\"/>",
                     x, y, w, h, CssHex(OpFill(op)), CssHex(OpOutline(op)));
      fmt::format_to(it,
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\">",
                     result.x[i], result.y[i] - 2);
      AppendXmlEscaped(out, op);
      fmt::format_to(it,
                     "</text><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" "
                     "fill=\"#333\">",
                     result.x[i], result.y[i] + 12);
      AppendXmlEscaped(out, NodeShortName(model.str(model.node_name(node))));
      out += "</text></g>\n";
    } else if (input.kinds[i] == LayoutItemKind::kMissingInput) {
      // The graph's fault: red, dashed, titled for a hover.
      fmt::format_to(it,
                     "<g class=\"missing-input\"><title>produced by no node, "
                     "graph input or initializer</title><rect x=\"{:.1f}\" "
                     "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                     "rx=\"{:.1f}\" fill=\"#fde8e8\" stroke=\"#c62828\" "
                     "stroke-width=\"2\" stroke-dasharray=\"4,2\"/><text "
                     "x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#c62828\">",
                     x, y, w, h, h / 2, result.x[i], result.y[i] + 4);
      AppendXmlEscaped(out, model.str(model.value_name(input.values[i])));
      out += "</text></g>\n";
    } else {
      fmt::format_to(it,
                     "<g><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                     "height=\"{:.1f}\" rx=\"{:.1f}\" fill=\"#eeeeee\" "
                     "stroke=\"#888\"/><text x=\"{:.1f}\" y=\"{:.1f}\">",
                     x, y, w, h, h / 2, result.x[i], result.y[i] + 4);
      AppendXmlEscaped(out, model.str(model.value_name(input.values[i])));
      out += "</text></g>\n";
    }
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace mi::layout
