#include "layout/layout_encoding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "layout/hierarchical_layout.h"
#include "model/model.h"

namespace mi::layout {
namespace {

// in -> A -> B -> C -> D -> out, plus A -> C and A -> D (a skip around the
// group holding B and C). Group 1 ("blk") holds B and C.
struct Fixture {
  std::vector<LayoutNode> nodes{{60, 24}, {80, 36}, {80, 36},
                                {80, 36}, {80, 36}, {60, 24}};
  std::vector<LayoutEdge> edges{{0, 1}, {1, 2}, {2, 3}, {3, 4},
                                {1, 3}, {1, 4}, {4, 5}};
  GroupTree groups;
  LayoutLabels labels;

  Fixture() {
    groups.parent = {-1, 0};
    groups.label = {"", "blk<\"x\">&"};
    groups.node_group = {0, 0, 1, 1, 0, 0};
    groups.node_op = {-1, 0, 1, 1, 0, -1};
    groups.op_names = {"Conv<1>", "Relu"};
    labels.title = "g&<>";
    labels.node_kind = {
        LayoutItemKind::kGraphInput, LayoutItemKind::kNode,
        LayoutItemKind::kNode,       LayoutItemKind::kNode,
        LayoutItemKind::kNode,       LayoutItemKind::kGraphOutput};
    labels.node_model_id = {7, 0, 1, 2, 3, 8};
    labels.node_title = {"x", "Conv<1>", "Relu", "Relu", "Conv<1>", "y"};
    labels.node_subtitle = {"", "a\"&'", "b", "c", "d", ""};
    labels.node_tooltip = {"x", "/a", "/blk/b", "/blk/c", "/d", "y"};
    labels.edges = edges;
    // A's output feeds B, C and D: one tensor, one label.
    labels.edge_label = {"1x3", "1x8", "1x9", "1x7", "1x8", "1x8", "1x4"};
    labels.edge_value = {0, 1, 2, 3, 1, 1, 4};
    labels.group_label = groups.label;
    labels.op_names = groups.op_names;
    labels.node_status = {NodeStatus::kUnknown,  NodeStatus::kExecuted,
                          NodeStatus::kFused,    NodeStatus::kNotExecuted,
                          NodeStatus::kInserted, NodeStatus::kUnknown};
    labels.node_time_us = {-1, 12.5f, 12.5f, -1, 3.25f, -1};
    labels.node_task_count = {0, 2, 2, 0, 1, 0};
  }

  HierarchicalLayout Make() const {
    return HierarchicalLayout(nodes, edges, groups, {});
  }
};

// Little-endian readers over the encoded bytes.
uint32_t U32(const std::string& b, size_t off) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = v << 8 | static_cast<uint8_t>(b[off + i]);
  }
  return v;
}
float F32(const std::string& b, size_t off) {
  uint32_t bits = U32(b, off);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct Section {
  uint32_t type = 0, offset = 0, count = 0;
};

std::map<uint32_t, Section> Directory(const std::string& b) {
  std::map<uint32_t, Section> out;
  uint32_t n = U32(b, 56);
  for (uint32_t i = 0; i < n; ++i) {
    size_t e = kLayoutHeaderBytes + 16 * i;
    out[U32(b, e)] = {U32(b, e + 4), U32(b, e + 8), U32(b, e + 12)};
  }
  return out;
}

std::vector<uint32_t> U32s(const std::string& b, const Section& s) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < s.count; ++i)
    out.push_back(U32(b, s.offset + 4 * i));
  return out;
}
std::vector<float> F32s(const std::string& b, const Section& s) {
  std::vector<float> out;
  for (uint32_t i = 0; i < s.count; ++i)
    out.push_back(F32(b, s.offset + 4 * i));
  return out;
}
std::vector<uint8_t> U8s(const std::string& b, const Section& s) {
  return std::vector<uint8_t>(b.begin() + s.offset,
                              b.begin() + s.offset + s.count);
}

void CheckRoundTrip(const HierarchicalResult& r, const LayoutLabels& labels) {
  std::string b = EncodeLayoutBinary(r, labels);
  ASSERT_GE(b.size(), kLayoutHeaderBytes);
  EXPECT_EQ(b.substr(0, 4), "MILY");
  EXPECT_EQ(U32(b, 4), kLayoutBinaryVersion);
  EXPECT_EQ(U32(b, 12), 0u);  // top to bottom
  EXPECT_EQ(F32(b, 16), r.width);
  EXPECT_EQ(F32(b, 20), r.height);
  EXPECT_EQ(U32(b, 24), r.item_of_node.size());
  EXPECT_EQ(U32(b, 28), r.items.size());
  EXPECT_EQ(U32(b, 32), r.edges.size());
  EXPECT_EQ(U32(b, 36), r.points.size() / 2);
  EXPECT_EQ(U32(b, 40), r.frames.size());
  EXPECT_EQ(U32(b, 44), r.groups.size());
  EXPECT_EQ(U32(b, 48), labels.op_names.size());
  EXPECT_EQ(U32(b, 56), static_cast<uint32_t>(LayoutSection::kCount));
  EXPECT_EQ(U32(b, 8), kLayoutHeaderBytes + 16 * U32(b, 56));
  EXPECT_EQ(b.size() % 4, 0u);

  auto dir = Directory(b);
  ASSERT_EQ(dir.size(), static_cast<size_t>(LayoutSection::kCount));
  uint32_t previous_end = U32(b, 8);
  for (const auto& [id, s] : dir) {
    EXPECT_EQ(s.offset % 4, 0u) << "section " << id;
    EXPECT_GE(s.offset, previous_end) << "section " << id;  // in id order
    uint32_t size =
        s.type == static_cast<uint32_t>(LayoutElementType::kUint8) ? 1 : 4;
    previous_end = s.offset + s.count * size;
    EXPECT_LE(previous_end, b.size());
  }
  auto sec = [&](LayoutSection id) {
    return dir.at(static_cast<uint32_t>(id));
  };

  // Strings.
  std::vector<uint32_t> offsets = U32s(b, sec(LayoutSection::kStringOffsets));
  ASSERT_EQ(offsets.size(), U32(b, 52) + 1);
  const Section data = sec(LayoutSection::kStringData);
  ASSERT_EQ(data.count, offsets.back());
  auto str = [&](uint32_t i) {
    return b.substr(data.offset + offsets[i], offsets[i + 1] - offsets[i]);
  };
  EXPECT_EQ(str(0), "");
  EXPECT_EQ(str(U32(b, 60)), labels.title);

  // Items.
  std::vector<float> boxes = F32s(b, sec(LayoutSection::kItemBox));
  std::vector<uint8_t> kinds = U8s(b, sec(LayoutSection::kItemKind));
  std::vector<uint32_t> refs = U32s(b, sec(LayoutSection::kItemRef));
  std::vector<uint32_t> ids = U32s(b, sec(LayoutSection::kItemModelId));
  std::vector<uint32_t> titles = U32s(b, sec(LayoutSection::kItemTitle));
  std::vector<uint32_t> subtitles = U32s(b, sec(LayoutSection::kItemSubtitle));
  ASSERT_EQ(boxes.size(), 4 * r.items.size());
  for (size_t i = 0; i < r.items.size(); ++i) {
    const VisibleItem& item = r.items[i];
    EXPECT_EQ(boxes[4 * i], item.box.x);
    EXPECT_EQ(boxes[4 * i + 1], item.box.y);
    EXPECT_EQ(boxes[4 * i + 2], item.box.w);
    EXPECT_EQ(boxes[4 * i + 3], item.box.h);
    if (item.group >= 0) {
      EXPECT_EQ(kinds[i], static_cast<uint8_t>(EncodedItemKind::kGroup));
      EXPECT_EQ(refs[i], static_cast<uint32_t>(item.group));
      EXPECT_EQ(ids[i], UINT32_MAX);
      EXPECT_EQ(str(titles[i]), labels.group_label[item.group]);
    } else {
      EXPECT_EQ(refs[i], static_cast<uint32_t>(item.node));
      EXPECT_EQ(ids[i], labels.node_model_id[item.node]);
      EXPECT_EQ(str(titles[i]), labels.node_title[item.node]);
      EXPECT_EQ(str(subtitles[i]), labels.node_subtitle[item.node]);
      EXPECT_EQ(kinds[i], static_cast<uint8_t>(labels.node_kind[item.node]));
    }
  }

  // Edges and routes.
  std::vector<uint32_t> from = U32s(b, sec(LayoutSection::kEdgeFrom));
  std::vector<uint32_t> to = U32s(b, sec(LayoutSection::kEdgeTo));
  std::vector<uint32_t> count = U32s(b, sec(LayoutSection::kEdgeCount));
  std::vector<uint8_t> flags = U8s(b, sec(LayoutSection::kEdgeFlags));
  ASSERT_EQ(from.size(), r.edges.size());
  for (size_t e = 0; e < r.edges.size(); ++e) {
    EXPECT_EQ(from[e], r.edges[e].from);
    EXPECT_EQ(to[e], r.edges[e].to);
    EXPECT_EQ(count[e], r.edges[e].count);
    EXPECT_EQ((flags[e] & kEdgeReversed) != 0, r.edges[e].reversed != 0);
  }
  EXPECT_EQ(U32s(b, sec(LayoutSection::kEdgePointBegin)), r.edge_point_begin);
  EXPECT_EQ(F32s(b, sec(LayoutSection::kPoints)), r.points);
  EXPECT_EQ(F32s(b, sec(LayoutSection::kFrameProfiles)), r.frame_profiles);
  EXPECT_EQ(r.frame_profiles.size(),
            r.frames.size() * 2 * HierarchicalResult::kProfileBands);
  std::vector<uint32_t> frames = U32s(b, sec(LayoutSection::kFrames));
  ASSERT_EQ(frames.size(), r.frames.size());
  for (size_t f = 0; f < frames.size(); ++f) {
    EXPECT_EQ(static_cast<int32_t>(frames[f]), r.frames[f]);
  }

  // Groups.
  std::vector<uint32_t> parent = U32s(b, sec(LayoutSection::kGroupParent));
  std::vector<uint32_t> repeat = U32s(b, sec(LayoutSection::kGroupRepeatOf));
  std::vector<uint8_t> gkind = U8s(b, sec(LayoutSection::kGroupKind));
  std::vector<uint8_t> gflags = U8s(b, sec(LayoutSection::kGroupFlags));
  std::vector<uint32_t> depth = U32s(b, sec(LayoutSection::kGroupDepth));
  std::vector<uint32_t> nodes = U32s(b, sec(LayoutSection::kGroupNodeCount));
  std::vector<float> bounds = F32s(b, sec(LayoutSection::kGroupBounds));
  std::vector<uint32_t> glabel = U32s(b, sec(LayoutSection::kGroupLabel));
  std::vector<uint32_t> tops = U32s(b, sec(LayoutSection::kGroupTopOps));
  std::vector<uint32_t> top_counts =
      U32s(b, sec(LayoutSection::kGroupTopOpCounts));
  std::vector<uint32_t> op_names = U32s(b, sec(LayoutSection::kOpNames));
  ASSERT_EQ(parent.size(), r.groups.size());
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const GroupSummary& s = r.groups[g];
    EXPECT_EQ(static_cast<int32_t>(parent[g]), s.parent);
    EXPECT_EQ(static_cast<int32_t>(repeat[g]), s.repeat_of);
    EXPECT_EQ(gkind[g], static_cast<uint8_t>(s.kind));
    EXPECT_EQ((gflags[g] & kGroupExpanded) != 0, s.expanded);
    EXPECT_EQ((gflags[g] & kGroupVisible) != 0, s.visible);
    EXPECT_EQ(depth[g], s.depth);
    EXPECT_EQ(nodes[g], s.node_count);
    EXPECT_EQ(bounds[4 * g], s.bounds.x);
    EXPECT_EQ(bounds[4 * g + 3], s.bounds.h);
    EXPECT_EQ(str(glabel[g]), labels.group_label[g]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(static_cast<int32_t>(tops[3 * g + k]), s.top_ops[k]);
      EXPECT_EQ(top_counts[3 * g + k], s.top_op_counts[k]);
    }
  }
  ASSERT_EQ(op_names.size(), labels.op_names.size());
  for (size_t o = 0; o < op_names.size(); ++o) {
    EXPECT_EQ(str(op_names[o]), labels.op_names[o]);
  }
  EXPECT_EQ(U32s(b, sec(LayoutSection::kNodeItem)), r.item_of_node);
  EXPECT_EQ(U32s(b, sec(LayoutSection::kNodeModelId)), labels.node_model_id);

  // Run-time information per layout node (sections 31-33).
  const size_t n = r.item_of_node.size();
  EXPECT_EQ(sec(LayoutSection::kNodeStatus).type,
            static_cast<uint32_t>(LayoutElementType::kUint8));
  EXPECT_EQ(sec(LayoutSection::kNodeTimeUs).type,
            static_cast<uint32_t>(LayoutElementType::kFloat32));
  EXPECT_EQ(sec(LayoutSection::kNodeTaskCount).type,
            static_cast<uint32_t>(LayoutElementType::kUint32));
  std::vector<uint8_t> status = U8s(b, sec(LayoutSection::kNodeStatus));
  std::vector<float> time = F32s(b, sec(LayoutSection::kNodeTimeUs));
  std::vector<uint32_t> tasks = U32s(b, sec(LayoutSection::kNodeTaskCount));
  ASSERT_EQ(status.size(), n);
  ASSERT_EQ(time.size(), n);
  ASSERT_EQ(tasks.size(), n);
  for (size_t v = 0; v < n; ++v) {
    EXPECT_EQ(status[v], v < labels.node_status.size()
                             ? EncodedNodeStatus(labels.node_status[v])
                             : 0)
        << v;
    EXPECT_EQ(time[v],
              v < labels.node_time_us.size() ? labels.node_time_us[v] : -1.0f)
        << v;
    EXPECT_EQ(tasks[v], v < labels.node_task_count.size()
                            ? labels.node_task_count[v]
                            : 0u)
        << v;
  }
}

TEST(LayoutEncodingTest, BinaryRoundTripExpanded) {
  Fixture f;
  HierarchicalLayout h = f.Make();
  h.SetSubtreeExpanded(0, true);
  const HierarchicalResult& r = h.Layout();
  ASSERT_EQ(r.frames.size(), 1u);
  CheckRoundTrip(r, f.labels);
}

TEST(LayoutEncodingTest, BinaryRoundTripCollapsedAggregatesEdges) {
  Fixture f;
  HierarchicalLayout h = f.Make();
  h.SetExpanded(1, false);
  const HierarchicalResult& r = h.Layout();
  ASSERT_TRUE(r.frames.empty());
  CheckRoundTrip(r, f.labels);
  // A -> blk draws A -> B and A -> C.
  uint32_t a = r.item_of_node[1], blk = r.item_of_node[2];
  bool found = false;
  for (const VisibleEdge& e : r.edges) {
    if (e.from == a && e.to == blk) {
      EXPECT_EQ(e.count, 2u);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(LayoutEncodingTest, NodeStatusCodes) {
  EXPECT_EQ(EncodedNodeStatus(NodeStatus::kUnknown), 0);
  EXPECT_EQ(EncodedNodeStatus(NodeStatus::kExecuted), 1);
  EXPECT_EQ(EncodedNodeStatus(NodeStatus::kFused), 2);
  EXPECT_EQ(EncodedNodeStatus(NodeStatus::kNotExecuted), 3);
  EXPECT_EQ(EncodedNodeStatus(NodeStatus::kInserted), 4);
  EXPECT_EQ(EncodedNodeStatusName(0), "none");
  EXPECT_EQ(EncodedNodeStatusName(3), "not_executed");
  EXPECT_EQ(EncodedNodeStatusName(4), "inserted");
  EXPECT_EQ(EncodedNodeStatusName(200), "none");
}

TEST(LayoutEncodingTest, JsonCarriesNodeStatusAndTimes) {
  Fixture f;
  HierarchicalLayout h = f.Make();
  h.SetSubtreeExpanded(0, true);
  std::string json = EncodeLayoutJson(h.Layout(), f.labels);
  EXPECT_NE(json.find("\"status\":[\"none\",\"executed\",\"fused\","
                      "\"not_executed\",\"inserted\",\"none\"]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"time_us\":[null,12.5,12.5,null,3.25,null]"),
            std::string::npos);
  EXPECT_NE(json.find("\"task_count\":[0,2,2,0,1,0]"), std::string::npos);
}

TEST(LayoutEncodingTest, MissingRunInfoMeansNone) {
  Fixture f;
  f.labels.node_status.clear();
  f.labels.node_time_us.clear();
  f.labels.node_task_count.clear();
  HierarchicalLayout h = f.Make();
  const HierarchicalResult& r = h.Layout();
  CheckRoundTrip(r, f.labels);
  std::string json = EncodeLayoutJson(r, f.labels);
  EXPECT_NE(json.find("\"time_us\":[null,null,null,null,null,null]"),
            std::string::npos);
}

TEST(LayoutEncodingTest, ShapeLabelShownOncePerTensor) {
  Fixture f;
  HierarchicalLayout h = f.Make();
  h.SetSubtreeExpanded(0, true);
  std::string json = EncodeLayoutJson(h.Layout(), f.labels);
  // A's output (1x8) reaches B, C and D: shown once.
  size_t shown = 0, pos = 0;
  while ((pos = json.find("\"label\":\"1x8\",\"label_shown\":true", pos)) !=
         std::string::npos) {
    ++shown;
    ++pos;
  }
  EXPECT_EQ(shown, 1u);
  EXPECT_NE(json.find("\"label\":\"1x8\",\"label_shown\":false"),
            std::string::npos);
}

TEST(LayoutEncodingTest, JsonIsDeterministic) {
  Fixture f;
  HierarchicalLayout h1 = f.Make(), h2 = f.Make();
  std::string a = EncodeLayoutJson(h1.Layout(), f.labels);
  std::string b = EncodeLayoutJson(h2.Layout(), f.labels);
  EXPECT_EQ(a, b);
  EXPECT_EQ(EncodeLayoutJson(h1.Layout(), f.labels), a);  // cached layout
  // Toggling away and back gives the same bytes.
  h1.SetExpanded(1, false);
  std::string folded = EncodeLayoutJson(h1.Layout(), f.labels);
  EXPECT_NE(folded, a);
  h1.SetExpanded(1, true);
  EXPECT_EQ(EncodeLayoutJson(h1.Layout(), f.labels), a);
  EXPECT_EQ(EncodeLayoutBinary(h1.Layout(), f.labels),
            EncodeLayoutBinary(h2.Layout(), f.labels));
  EXPECT_EQ(a.rfind("{\"format\":\"model-inspector-layout\",\"version\":1,", 0),
            0u);
  // Strings are JSON-escaped.
  EXPECT_NE(a.find("\"blk<\\\"x\\\">&\""), std::string::npos);
}

TEST(LayoutEncodingTest, SvgEscapesLabels) {
  Fixture f;
  for (bool expand : {true, false}) {
    HierarchicalLayout h = f.Make();
    h.SetExpanded(1, expand);
    std::string svg = RenderHierarchicalSvg(h.Layout(), f.labels);
    EXPECT_EQ(svg.find("<1>"), std::string::npos);
    EXPECT_EQ(svg.find("\"x\""), std::string::npos);
    EXPECT_EQ(svg.find("&\""), std::string::npos);
    EXPECT_NE(svg.find("Conv&lt;1&gt;"), std::string::npos);
    EXPECT_NE(svg.find("blk&lt;&quot;x&quot;&gt;&amp;"), std::string::npos);
    EXPECT_NE(svg.find("a&quot;&amp;&apos;"), std::string::npos);
    EXPECT_NE(svg.find("<title>g&amp;&lt;&gt;</title>"), std::string::npos);
    // Every '&' starts an entity.
    for (size_t p = svg.find('&'); p != std::string::npos;
         p = svg.find('&', p + 1)) {
      size_t semi = svg.find(';', p);
      ASSERT_NE(semi, std::string::npos);
      EXPECT_LE(semi - p, 6u) << svg.substr(p, 12);
    }
    if (!expand) {
      EXPECT_NE(svg.find(">2 nodes<"), std::string::npos);
      EXPECT_NE(svg.find("\u00d72</tspan>"), std::string::npos);
    }
  }
}

TEST(LayoutEncodingTest, SvgEdgesFollowTheCurveRule) {
  Fixture f;
  HierarchicalLayout h = f.Make();
  h.SetSubtreeExpanded(0, true);
  const HierarchicalResult& r = h.Layout();
  std::string svg = RenderHierarchicalSvg(r, f.labels);
  // Edge 0 (in -> A) is one straight segment p -> q.
  ASSERT_EQ(r.edge_point_begin[1] - r.edge_point_begin[0], 2u);
  const float* p = &r.points[0];
  float dy = p[3] - p[1];
  char expected[128];
  std::snprintf(expected, sizeof(expected),
                "M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\"", p[0], p[1], p[0],
                p[1] + dy / 2, p[2], p[3] - dy / 2, p[2], p[3]);
  EXPECT_NE(svg.find(expected), std::string::npos) << expected;
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
}

TEST(LayoutEncodingTest, LeftToRightHeader) {
  Fixture f;
  f.labels.direction = Direction::kLeftToRight;
  LayoutOptions options;
  options.direction = Direction::kLeftToRight;
  HierarchicalLayout h(f.nodes, f.edges, f.groups, options);
  std::string b = EncodeLayoutBinary(h.Layout(), f.labels);
  EXPECT_EQ(U32(b, 12), 1u);
  EXPECT_NE(EncodeLayoutJson(h.Layout(), f.labels).find("\"direction\":\"lr\""),
            std::string::npos);
}

TEST(LayoutEncodingTest, EmptyResult) {
  HierarchicalResult r;
  LayoutLabels labels;
  std::string b = EncodeLayoutBinary(r, labels);
  EXPECT_EQ(b.substr(0, 4), "MILY");
  EXPECT_EQ(U32(b, 28), 0u);
  EXPECT_EQ(b.size() % 4, 0u);
  EXPECT_NE(EncodeLayoutJson(r, labels).find("\"items\":[]"),
            std::string::npos);
  EXPECT_NE(RenderHierarchicalSvg(r, labels).find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace mi::layout
