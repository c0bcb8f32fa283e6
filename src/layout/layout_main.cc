// mi_bench_layout: lays out a graph given as JSON and prints one JSON line
// of figures; called by bench/layout to compare with dagre, ELK and dot.
//
//   mi_bench_layout GRAPH.json [--out LAYOUT.json] [--lr] [--budget N]
//
// --budget sets LayoutOptions::work_budget (0 = automatic).
//
// GRAPH.json: {"nodes":[{"w":..,"h":..},...],"edges":[[a,b],...]}
// stdout:     {"ms":..,"nodes":..,"crossings":..,"edge_length":..,
//              "peak_rss_kb":..}
// LAYOUT.json: {"x":[],"y":[],"w":[],"h":[],"edges":[[x0,y0,x1,y1,...],...]}

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layout/layered_layout.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "mi_bench_layout: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input, output;
  mi::layout::LayoutOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      output = argv[++i];
    } else if (std::strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
      options.work_budget = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--lr") == 0) {
      options.direction = mi::layout::Direction::kLeftToRight;
    } else if (input.empty()) {
      input = argv[i];
    } else {
      return Fail(std::string("unexpected argument '") + argv[i] + "'");
    }
  }
  if (input.empty()) {
    return Fail(
        "usage: mi_bench_layout GRAPH.json [--out LAYOUT.json] [--lr] "
        "[--budget N]");
  }
  std::ifstream in(input, std::ios::binary);
  if (!in) return Fail(input + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // No-throw parse: a malformed file is reported, never thrown.
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Fail(input + ": not a JSON object");
  }
  const nlohmann::json& jnodes = doc["nodes"];
  const nlohmann::json& jedges = doc["edges"];
  if (!jnodes.is_array() || !jedges.is_array()) {
    return Fail(input + ": expected arrays \"nodes\" and \"edges\"");
  }
  std::vector<mi::layout::LayoutNode> nodes;
  nodes.reserve(jnodes.size());
  for (const auto& jn : jnodes) {
    mi::layout::LayoutNode node;
    if (jn.is_object()) {
      auto w = jn.find("w"), h = jn.find("h");
      if (w != jn.end() && w->is_number()) node.width = w->get<float>();
      if (h != jn.end() && h->is_number()) node.height = h->get<float>();
    }
    nodes.push_back(node);
  }
  std::vector<mi::layout::LayoutEdge> edges;
  edges.reserve(jedges.size());
  for (size_t i = 0; i < jedges.size(); ++i) {
    const auto& je = jedges[i];
    if (!je.is_array() || je.size() < 2 || !je[0].is_number_unsigned() ||
        !je[1].is_number_unsigned() || je[0].get<uint64_t>() >= nodes.size() ||
        je[1].get<uint64_t>() >= nodes.size()) {
      return Fail(input + ": edge " + std::to_string(i) +
                  ": expected [from, to] node indices below " +
                  std::to_string(nodes.size()));
    }
    edges.push_back({je[0].get<uint32_t>(), je[1].get<uint32_t>()});
  }
  doc = nlohmann::json();  // free the DOM before measuring

  auto start = std::chrono::steady_clock::now();
  mi::layout::LayoutResult r = mi::layout::LayeredLayout(nodes, edges, options);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  double edge_length = 0;
  for (size_t e = 0; e < edges.size(); ++e) {
    for (uint32_t p = r.edge_point_begin[e] + 1; p < r.edge_point_begin[e + 1];
         ++p) {
      double dx = r.points[2 * p] - r.points[2 * p - 2];
      double dy = r.points[2 * p + 1] - r.points[2 * p - 1];
      edge_length += std::sqrt(dx * dx + dy * dy);
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  nlohmann::json line = {{"ms", ms},
                         {"nodes", nodes.size()},
                         {"edges", edges.size()},
                         {"crossings", r.crossings},
                         {"edge_length", edge_length},
                         {"width", r.width},
                         {"height", r.height},
                         {"ranks", r.rank_count},
                         {"dummies", r.dummy_count},
                         {"peak_rss_kb", usage.ru_maxrss}};
  std::printf("%s\n", line.dump().c_str());

  if (!output.empty()) {
    nlohmann::json out;
    out["x"] = r.x;
    out["y"] = r.y;
    std::vector<float> w, h;
    for (const auto& node : nodes) {
      w.push_back(node.width);
      h.push_back(node.height);
    }
    out["w"] = w;
    out["h"] = h;
    nlohmann::json jroutes = nlohmann::json::array();
    for (size_t e = 0; e < edges.size(); ++e) {
      jroutes.push_back(
          std::vector<float>(r.points.begin() + 2 * r.edge_point_begin[e],
                             r.points.begin() + 2 * r.edge_point_begin[e + 1]));
    }
    out["edges"] = std::move(jroutes);
    std::ofstream file(output, std::ios::binary | std::ios::trunc);
    file << out.dump() << "\n";
    if (!file) return Fail(output + ": cannot write");
  }
  return 0;
}
