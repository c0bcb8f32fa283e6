#include "layout/layered_layout_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace mi::layout::layered_detail {
namespace {

// Brandes–Köpf coordinate assignment (with dagre's handling of node sizes):
// four alignments (up/down x left/right), each aligning nodes with a median
// neighbour into vertical blocks and compacting the blocks, then balanced.
// Chains of dummies become straight vertical lines because inner segments
// (dummy-dummy) win every type-1 conflict.
class Coordinates {
 public:
  Coordinates(Layered& g, float spacing, float rank_spacing)
      : g_(g), spacing_(spacing), rank_spacing_(rank_spacing) {}

  std::vector<float> Run() {
    MarkType1Conflicts();
    std::vector<std::vector<float>> xss;
    for (int vertical = 0; vertical < 2; ++vertical) {
      for (int horizontal = 0; horizontal < 2; ++horizontal) {
        xss.push_back(Align(vertical == 0, horizontal == 0));
      }
    }
    // Align all four to the narrowest one, then take the average median.
    size_t narrowest = 0;
    float best_width = std::numeric_limits<float>::max();
    std::vector<float> mins(4), maxs(4);
    for (size_t i = 0; i < 4; ++i) {
      float lo = std::numeric_limits<float>::max(), hi = -lo;
      for (uint32_t v = 0; v < g_.count; ++v) {
        lo = std::min(lo, xss[i][v] - g_.size[v] / 2);
        hi = std::max(hi, xss[i][v] + g_.size[v] / 2);
      }
      mins[i] = lo;
      maxs[i] = hi;
      if (hi - lo < best_width) {
        best_width = hi - lo;
        narrowest = i;
      }
    }
    for (size_t i = 0; i < 4; ++i) {
      bool left = i % 2 == 0;
      float delta =
          left ? mins[narrowest] - mins[i] : maxs[narrowest] - maxs[i];
      for (float& x : xss[i]) x += delta;
    }
    std::vector<float> x(g_.count);
    for (uint32_t v = 0; v < g_.count; ++v) {
      float a[4] = {xss[0][v], xss[1][v], xss[2][v], xss[3][v]};
      std::sort(a, a + 4);
      x[v] = (a[1] + a[2]) / 2;
    }
    // Balancing can, rarely, pull two neighbours closer than their
    // separation; one left-to-right pass restores it.
    for (uint32_t r = 0; r < g_.rank_count; ++r) {
      auto layer = g_.Layer(r);
      for (size_t i = 1; i < layer.size(); ++i) {
        float min_x = x[layer[i - 1]] + Separation(layer[i - 1], layer[i]);
        if (x[layer[i]] < min_x) x[layer[i]] = min_x;
      }
    }
    // BK keeps every block straight, which on dense graphs with many long
    // edges staircases the blocks sideways (twice the width of a packed
    // layout on a 10k-node branchy DAG). There a median placement is
    // shorter; it wins only when it is both narrower and clearly shorter,
    // since on deep residual stacks it is shorter but drifts sideways.
    std::vector<float> packed = MedianPlacement();
    if (Width(packed) < Width(x) &&
        HorizontalLength(packed) < 0.75 * HorizontalLength(x)) {
      x = std::move(packed);
    }
    // A single alignment keeps chains straight and hangs side inputs
    // beside them, where the balanced one centres every join between its
    // inputs and the chain steps sideways at each. The two shortest of the
    // five candidates (not much wider than the balanced one) are polished
    // and the shorter wins.
    float balanced_width = Width(x);
    std::vector<std::pair<double, size_t>> ranked{{DrawnLength(x), 4}};
    for (size_t i = 0; i < 4; ++i) {
      if (Width(xss[i]) <= 1.5f * balanced_width) {
        ranked.push_back({DrawnLength(xss[i]), i});
      }
    }
    std::sort(ranked.begin(), ranked.end());
    xss.push_back(std::move(x));
    double best_length = std::numeric_limits<double>::max();
    size_t best = ranked[0].second;
    for (size_t k = 0; k < std::min<size_t>(2, ranked.size()); ++k) {
      size_t i = ranked[k].second;
      Polish(xss[i]);
      double length = DrawnLength(xss[i]);
      if (length < best_length) {
        best_length = length;
        best = i;
      }
    }
    x = std::move(xss[best]);
    return x;
  }

 private:
  float Width(const std::vector<float>& x) const {
    float lo = std::numeric_limits<float>::max(), hi = -lo;
    for (uint32_t v = 0; v < g_.count; ++v) {
      lo = std::min(lo, x[v] - g_.size[v] / 2);
      hi = std::max(hi, x[v] + g_.size[v] / 2);
    }
    return g_.count ? hi - lo : 0;
  }

  double HorizontalLength(const std::vector<float>& x) const {
    double sum = 0;
    for (uint32_t v = 0; v < g_.count; ++v) {
      for (uint32_t w : g_.down.Of(v)) sum += std::fabs(x[v] - x[w]);
    }
    return sum;
  }

  // What a reader sees: each segment crosses a gap between rank bands
  // diagonally, so a small sideways step costs little and a big one about
  // its width (the segment's length minus the gap).
  // Edges of leaves (a constant with one consumer, an output) count a
  // quarter:
  // when either the chain or its side input must bend, the side input
  // should, so the main path reads as one straight line.
  double DrawnLength(const std::vector<float>& x) const {
    double sum = 0;
    double gap = rank_spacing_;
    for (uint32_t v = 0; v < g_.count; ++v) {
      for (uint32_t w : g_.down.Of(v)) {
        double dx = x[v] - x[w];
        sum += LeafFactor(v, w) * (std::sqrt(dx * dx + gap * gap) - gap +
                                   kStraightness * std::fabs(dx));
      }
    }
    return sum;
  }

  // Near 0 the drawn length grows only quadratically, so on its own it
  // prefers a chain drifting a few px per node to a straight chain with
  // side inputs beside it; a linear term keeps chains straight.
  static constexpr double kStraightness = 0.25;

  // v is the upper end, w the lower end of a segment.
  float LeafFactor(uint32_t v, uint32_t w) const {
    bool leaf_source =
        !g_.IsDummy(v) && g_.up.Degree(v) == 0 && g_.down.Degree(v) == 1;
    bool leaf_sink =
        !g_.IsDummy(w) && g_.down.Degree(w) == 0 && g_.up.Degree(w) == 1;
    return leaf_source || leaf_sink ? 0.25f : 1.0f;
  }

  struct PavScratch {
    std::vector<float> prefix;
    std::vector<double> sum, weight;
    std::vector<uint32_t> count;
  };

  // Puts a layer's nodes as close to `desired` as their order and
  // separations allow, in weighted least squares (no weights: all 1): pool
  // adjacent violators on desired - prefix separation, which is linear.
  void PlaceLayer(std::span<const uint32_t> layer,
                  std::span<const float> desired,
                  std::span<const double> weights, PavScratch& s,
                  std::vector<float>& x) const {
    size_t len = layer.size();
    s.prefix.assign(len, 0);
    for (size_t i = 1; i < len; ++i) {
      s.prefix[i] = s.prefix[i - 1] + Separation(layer[i - 1], layer[i]);
    }
    s.sum.clear();
    s.weight.clear();
    s.count.clear();
    for (size_t i = 0; i < len; ++i) {
      double w = weights.empty() ? 1.0 : weights[i];
      s.sum.push_back(w * (desired[i] - s.prefix[i]));
      s.weight.push_back(w);
      s.count.push_back(1);
      while (s.sum.size() >= 2) {
        size_t t = s.sum.size() - 1;
        if (s.sum[t - 1] * s.weight[t] <= s.sum[t] * s.weight[t - 1]) break;
        s.sum[t - 1] += s.sum[t];
        s.weight[t - 1] += s.weight[t];
        s.count[t - 1] += s.count[t];
        s.sum.pop_back();
        s.weight.pop_back();
        s.count.pop_back();
      }
    }
    size_t i = 0;
    for (size_t b = 0; b < s.sum.size(); ++b) {
      float y = static_cast<float>(s.sum[b] / s.weight[b]);
      for (uint32_t k = 0; k < s.count[b]; ++k, ++i) {
        x[layer[i]] = y + s.prefix[i];
      }
    }
  }

  // Local improvement of total horizontal edge length (what dot's network
  // simplex minimises): each layer in turn moves its nodes towards the
  // weighted median of their neighbours on both sides (dot's weights: 1
  // real-real, 2 real-dummy, 8 dummy-dummy, so long edges stay straight),
  // as close as order and separations allow (isotonic regression). A round
  // is kept only if the total shrank. BK alone leaves residual stacks ~1.3x
  // longer than dot, mostly in sideways jogs of skip edges.
  void Polish(std::vector<float>& x) const {
    if (g_.count == 0) return;
    std::vector<float> desired;
    std::vector<double> weights;
    PavScratch scratch;
    std::vector<std::pair<float, float>> nbr;
    auto weight = [&](uint32_t a, uint32_t b) {
      int dummies = g_.IsDummy(a) + g_.IsDummy(b);
      return dummies == 2 ? 8.0f : dummies == 1 ? 2.0f : 1.0f;
    };
    double best = DrawnLength(x);
    std::vector<float> trial;
    constexpr int kRounds = 4;
    for (int round = 0; round < kRounds; ++round) {
      trial = x;
      bool down = round % 2 == 0;
      for (uint32_t step = 0; step < g_.rank_count; ++step) {
        uint32_t r = down ? step : g_.rank_count - 1 - step;
        auto layer = g_.Layer(r);
        size_t len = layer.size();
        desired.resize(len);
        weights.resize(len);
        for (size_t i = 0; i < len; ++i) {
          uint32_t v = layer[i];
          nbr.clear();
          float total = 0;
          for (uint32_t w : g_.up.Of(v)) {
            nbr.push_back({trial[w], weight(v, w) * LeafFactor(w, v)});
            total += nbr.back().second;
          }
          for (uint32_t w : g_.down.Of(v)) {
            nbr.push_back({trial[w], weight(v, w) * LeafFactor(v, w)});
            total += nbr.back().second;
          }
          float target = trial[v];
          if (!nbr.empty()) {
            std::sort(nbr.begin(), nbr.end());
            float acc = 0;
            for (size_t k = 0; k < nbr.size(); ++k) {
              acc += nbr[k].second;
              if (2 * acc > total) {
                target = nbr[k].first;
                break;
              }
              if (2 * acc == total) {
                target = (nbr[k].first + nbr[k + 1].first) / 2;
                break;
              }
            }
          }
          desired[i] = target;
          // Nodes with more (and straighter) edges pull harder.
          weights[i] = std::max(0.1f, total);
        }
        PlaceLayer(layer, desired, weights, scratch, trial);
      }
      double length = DrawnLength(trial);
      if (length >= best * 0.999) break;
      best = length;
      x.swap(trial);
    }
  }

  // Sweeps that put each node at the mean of its neighbours' medians in the
  // previous layer, as close as the order and separations allow: per layer
  // an isotonic regression (pool adjacent violators) on x_i - prefix_sep_i,
  // which is linear. Ends with a pass that looks at both sides.
  std::vector<float> MedianPlacement() {
    std::vector<float> x(g_.count, 0);
    std::vector<float> desired;
    PavScratch scratch;
    std::vector<float> nbr_x;
    auto median_of = [&](std::span<const uint32_t> nb, float fallback) {
      if (nb.empty()) return fallback;
      nbr_x.clear();
      for (uint32_t w : nb) nbr_x.push_back(x[w]);
      std::sort(nbr_x.begin(), nbr_x.end());
      size_t k = nbr_x.size();
      return k % 2 ? nbr_x[k / 2] : (nbr_x[k / 2 - 1] + nbr_x[k / 2]) / 2;
    };
    auto place = [&](uint32_t r) {
      PlaceLayer(g_.Layer(r), desired, {}, scratch, x);
    };
    // Start: every layer packed and centred on 0.
    for (uint32_t r = 0; r < g_.rank_count; ++r) {
      auto layer = g_.Layer(r);
      desired.assign(layer.size(), 0);
      place(r);
    }
    constexpr int kRounds = 8;
    for (int round = 0; round <= kRounds; ++round) {
      bool down = round % 2 == 0;
      bool both = round == kRounds;
      for (uint32_t step = 0; step < g_.rank_count; ++step) {
        uint32_t r = down ? step : g_.rank_count - 1 - step;
        auto layer = g_.Layer(r);
        desired.resize(layer.size());
        for (size_t i = 0; i < layer.size(); ++i) {
          uint32_t v = layer[i];
          float up = median_of(g_.up.Of(v), x[v]);
          float dn = median_of(g_.down.Of(v), x[v]);
          if (both) {
            desired[i] = (up + dn) / 2;
          } else {
            desired[i] = down ? up : dn;
          }
        }
        place(r);
      }
    }
    return x;
  }

  float Separation(uint32_t u, uint32_t v) const {
    float gap_u = g_.IsDummy(u) ? spacing_ / 4 : spacing_ / 2;
    float gap_v = g_.IsDummy(v) ? spacing_ / 4 : spacing_ / 2;
    return (g_.size[u] + g_.size[v]) / 2 + gap_u + gap_v;
  }

  static uint64_t Key(uint32_t a, uint32_t b) {
    if (a > b) std::swap(a, b);
    return (static_cast<uint64_t>(a) << 32) | b;
  }
  bool HasConflict(uint32_t a, uint32_t b) const {
    return std::binary_search(conflicts_.begin(), conflicts_.end(), Key(a, b));
  }

  // A non-inner segment crossing an inner (dummy-dummy) segment.
  void MarkType1Conflicts() {
    for (uint32_t r = 1; r < g_.rank_count; ++r) {
      auto layer = g_.Layer(r);
      uint32_t prev_len = g_.layer_begin[r] - g_.layer_begin[r - 1];
      uint32_t k0 = 0;
      size_t scan = 0;
      for (size_t i = 0; i < layer.size(); ++i) {
        uint32_t v = layer[i];
        uint32_t inner = kNone;
        if (g_.IsDummy(v)) {
          for (uint32_t u : g_.up.Of(v)) {
            if (g_.IsDummy(u)) inner = u;
          }
        }
        uint32_t k1 = inner != kNone ? g_.pos[inner] : prev_len;
        if (inner != kNone || i + 1 == layer.size()) {
          for (; scan <= i; ++scan) {
            uint32_t s = layer[scan];
            for (uint32_t u : g_.up.Of(s)) {
              uint32_t p = g_.pos[u];
              if ((p < k0 || k1 < p) && !(g_.IsDummy(u) && g_.IsDummy(s))) {
                conflicts_.push_back(Key(u, s));
              }
            }
          }
          k0 = k1;
        }
      }
    }
    std::sort(conflicts_.begin(), conflicts_.end());
  }

  // One of the four alignments. `down`: blocks follow upper neighbours
  // (sweep top to bottom); `left`: layers are scanned left to right.
  std::vector<float> Align(bool down, bool left) {
    const uint32_t n = g_.count;
    const Csr& nbr = down ? g_.up : g_.down;
    // Position in the mirrored order when scanning right to left.
    auto pos = [&](uint32_t v) {
      if (left) return g_.pos[v];
      uint32_t len =
          g_.layer_begin[g_.rank[v] + 1] - g_.layer_begin[g_.rank[v]];
      return len - 1 - g_.pos[v];
    };
    auto layer_at = [&](uint32_t r, uint32_t i) {
      if (left) return g_.order[g_.layer_begin[r] + i];
      return g_.order[g_.layer_begin[r + 1] - 1 - i];
    };
    std::vector<uint32_t> root(n), align(n), above(n, kNone);
    for (uint32_t v = 0; v < n; ++v) root[v] = align[v] = v;
    std::vector<uint32_t> ws, bound;
    // Two rounds per layer: first real-real and dummy-dummy pairs, then
    // mixed ones. Plain BK lets the leftmost child claim its parent; when
    // that child is the dummy of a residual skip, the main chain steps one
    // slot right in every block and the drawing drifts sideways. Letting
    // real chains align first keeps the trunk straight and bends the skip.
    for (uint32_t step = 0; step < g_.rank_count; ++step) {
      uint32_t r = down ? step : g_.rank_count - 1 - step;
      uint32_t len = g_.layer_begin[r + 1] - g_.layer_begin[r];
      uint32_t adjacent_len = 0;
      if (step > 0) {
        uint32_t a = down ? r - 1 : r + 1;
        adjacent_len = g_.layer_begin[a + 1] - g_.layer_begin[a];
      }
      for (int round = 0; round < 2; ++round) {
        // bound[i]: position of the closest upper partner right of i.
        bound.assign(len, adjacent_len);
        uint32_t next = adjacent_len;
        for (uint32_t i = len; i-- > 0;) {
          bound[i] = next;
          uint32_t v = layer_at(r, i);
          if (above[v] != kNone) next = pos(above[v]);
        }
        int64_t prev = -1;
        for (uint32_t i = 0; i < len; ++i) {
          uint32_t v = layer_at(r, i);
          if (above[v] != kNone) {
            prev = pos(above[v]);
            continue;
          }
          auto nb = nbr.Of(v);
          if (nb.empty()) continue;
          ws.assign(nb.begin(), nb.end());
          std::sort(ws.begin(), ws.end(), [&](uint32_t a, uint32_t b) {
            return pos(a) < pos(b) || (pos(a) == pos(b) && a < b);
          });
          size_t lo = (ws.size() - 1) / 2, hi = ws.size() / 2;
          for (size_t k = lo; k <= hi; ++k) {
            uint32_t w = ws[k];
            bool mixed = g_.IsDummy(v) != g_.IsDummy(w);
            if (mixed != (round == 1)) continue;
            if (above[v] == kNone && prev < static_cast<int64_t>(pos(w)) &&
                pos(w) < bound[i] && !HasConflict(v, w)) {
              align[w] = v;
              align[v] = root[v] = root[w];
              above[v] = w;
              prev = pos(w);
            }
          }
        }
      }
    }
    // Block graph: an edge from the root of each node's left neighbour to
    // its own root, weighted by their separation.
    std::vector<uint32_t> src, dst;
    std::vector<float> weight;
    for (uint32_t r = 0; r < g_.rank_count; ++r) {
      uint32_t len = g_.layer_begin[r + 1] - g_.layer_begin[r];
      for (uint32_t i = 1; i < len; ++i) {
        uint32_t u = layer_at(r, i - 1), v = layer_at(r, i);
        src.push_back(root[u]);
        dst.push_back(root[v]);
        weight.push_back(Separation(u, v));
      }
    }
    std::vector<uint32_t> edge_ids(src.size());
    for (uint32_t e = 0; e < edge_ids.size(); ++e) edge_ids[e] = e;
    Csr out = BuildCsr(n, src, edge_ids);
    Csr in = BuildCsr(n, dst, edge_ids);
    std::vector<uint32_t> topo, pending(n);
    for (uint32_t v = 0; v < n; ++v) {
      if (root[v] != v) continue;
      pending[v] = in.Degree(v);
      if (pending[v] == 0) topo.push_back(v);
    }
    for (size_t i = 0; i < topo.size(); ++i) {
      for (uint32_t e : out.Of(topo[i])) {
        if (--pending[dst[e]] == 0) topo.push_back(dst[e]);
      }
    }
    std::vector<float> xs(n, 0);
    for (uint32_t v : topo) {
      float x = 0;
      for (uint32_t e : in.Of(v)) x = std::max(x, xs[src[e]] + weight[e]);
      xs[v] = x;
    }
    // Pull blocks with slack towards their right neighbours, so that
    // unconstrained blocks do not all pile up on the left.
    for (size_t i = topo.size(); i-- > 0;) {
      uint32_t v = topo[i];
      float m = std::numeric_limits<float>::max();
      for (uint32_t e : out.Of(v)) m = std::min(m, xs[dst[e]] - weight[e]);
      if (m != std::numeric_limits<float>::max()) xs[v] = std::max(xs[v], m);
    }
    std::vector<float> x(n);
    for (uint32_t v = 0; v < n; ++v) x[v] = left ? xs[root[v]] : -xs[root[v]];
    return x;
  }

  Layered& g_;
  float spacing_;
  float rank_spacing_;
  std::vector<uint64_t> conflicts_;
};

}  // namespace

std::vector<float> AssignCoordinates(Layered& g, float spacing,
                                     float rank_spacing) {
  return Coordinates(g, spacing, rank_spacing).Run();
}

}  // namespace mi::layout::layered_detail
