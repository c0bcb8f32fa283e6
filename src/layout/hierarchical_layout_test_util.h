#pragma once

// Checks shared by the hierarchical layout and group detection tests.

#include <gtest/gtest.h>

#include <cstdint>

#include "layout/hierarchical_layout.h"

namespace mi::layout::test_util {

inline bool Inside(const Box& inner, const Box& outer) {
  constexpr float kEps = 0.01f;
  return inner.x >= outer.x - kEps && inner.y >= outer.y - kEps &&
         inner.x + inner.w <= outer.x + outer.w + kEps &&
         inner.y + inner.h <= outer.y + outer.h + kEps;
}

// Every visible item lies inside the frame of its innermost expanded
// group, and every frame inside its parent's.
inline void ExpectNested(const HierarchicalResult& r, const GroupTree& groups) {
  for (const VisibleItem& item : r.items) {
    int32_t g = item.node >= 0 ? groups.node_group[item.node]
                               : groups.parent[item.group];
    // Single-node groups are not drawn: their node sits in the parent.
    while (g > 0 && !r.groups[g].expanded) g = groups.parent[g];
    if (g <= 0) continue;
    EXPECT_TRUE(Inside(item.box, r.groups[g].bounds));
  }
  for (int32_t f : r.frames) {
    int32_t p = groups.parent[f];
    if (p > 0) {
      EXPECT_TRUE(Inside(r.groups[f].bounds, r.groups[p].bounds));
    }
  }
}

}  // namespace mi::layout::test_util
