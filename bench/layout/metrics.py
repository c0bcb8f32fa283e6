#!/usr/bin/python3
"""Layout quality metrics, identical for every tool, from its positions file.

  /usr/bin/python3 metrics.py GRAPH.json POSITIONS.json [--max-pairs N]

POSITIONS.json: {"x":[],"y":[],"w":[],"h":[],"edges":[[x0,y0,x1,y1,...],...]}
(node centres and sizes in px, one polyline per input edge, same order).
Prints one JSON line:

  crossings     number of proper intersections between segments of two
                different edges' polylines (interiors cross; touching at a
                segment end, collinear overlap and crossings that lie inside
                the box of a node both edges attach to do not count; two
                edges crossing twice count 2). Exact, via a uniform grid:
                every segment is bucketed into the cells its (subdivided)
                bounding boxes cover, candidate pairs are tested per cell and
                a crossing is counted only in the cell holding the crossing
                point. If the candidate pairs exceed --max-pairs (default
                3e8), a random sample of cells is tested and the count scaled
                up: "sampled" then gives the fraction of cells tested.
  edge_length   sum of all polyline lengths divided by the median node height
                of the layout (all generated nodes are 36 px high, so this is
                total length in "node heights", comparable across tools that
                keep node sizes but use different units/spacing).
  edge_length_px  the same in px.
  missing_edges number of edges with fewer than 2 points (not drawn).
"""
import json
import sys

import numpy as np


def load(graph_path, pos_path):
    with open(graph_path) as f:
        g = json.load(f)
    with open(pos_path) as f:
        p = json.load(f)
    return g, p


def segments(p):
    polys = p["edges"]
    npts = np.fromiter((len(e) // 2 for e in polys), dtype=np.int64, count=len(polys))
    flat = np.fromiter((v for e in polys for v in e[:2 * (len(e) // 2)]), dtype=np.float64,
                       count=int(npts.sum()) * 2).reshape(-1, 2)
    starts = np.concatenate([[0], np.cumsum(npts)[:-1]])
    nseg = np.maximum(npts - 1, 0)
    edge_of = np.repeat(np.arange(len(polys)), nseg)
    first = np.repeat(starts, nseg) + (np.arange(int(nseg.sum())) - np.repeat(np.cumsum(nseg) - nseg, nseg))
    a, b = flat[first], flat[first + 1]
    return a, b, edge_of, int((npts < 2).sum())


def crossings(a, b, edge_of, ends, boxes, max_pairs, seed=1):
    """ends: (E,2) node ids per edge; boxes: (N,4) xmin,ymin,xmax,ymax."""
    d = b - a
    ln = np.hypot(d[:, 0], d[:, 1])
    keep = ln > 1e-9
    a, b, d, ln, edge_of = a[keep], b[keep], d[keep], ln[keep], edge_of[keep]
    n = len(a)
    if n < 2:
        return 0, 1.0
    lo = np.minimum(a, b).min(axis=0)
    hi = np.maximum(a, b).max(axis=0)
    area = max((hi[0] - lo[0]) * (hi[1] - lo[1]), 1.0)
    cs = max(float(np.median(ln)), float(np.sqrt(area / (4.0 * n))), 1e-6)
    nx = int((hi[0] - lo[0]) / cs) + 2
    # Subdivide long segments (for bucketing only) into pieces <= cs long.
    k = np.maximum(np.ceil(ln / cs).astype(np.int64), 1)
    seg = np.repeat(np.arange(n), k)
    j = np.arange(len(seg)) - np.repeat(np.cumsum(k) - k, k)
    t0 = (j / np.repeat(k, k))[:, None]
    t1 = ((j + 1) / np.repeat(k, k))[:, None]
    p0 = a[seg] + d[seg] * t0
    p1 = a[seg] + d[seg] * t1
    c0 = np.floor((np.minimum(p0, p1) - lo) / cs).astype(np.int64)
    c1 = np.floor((np.maximum(p0, p1) - lo) / cs).astype(np.int64)
    cx, cy = c1[:, 0] - c0[:, 0] + 1, c1[:, 1] - c0[:, 1] + 1
    cnt = cx * cy
    rs = np.repeat(np.arange(len(seg)), cnt)
    loc = np.arange(len(rs)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    ix = c0[rs, 0] + loc % cx[rs]
    iy = c0[rs, 1] + loc // cx[rs]
    cell = iy * nx + ix
    key = np.unique(cell * n + seg[rs])
    cell, sid = key // n, key % n
    # Groups of segments per cell.
    bounds = np.flatnonzero(np.diff(cell)) + 1
    gstart = np.concatenate([[0], bounds])
    gsize = np.diff(np.concatenate([gstart, [len(cell)]]))
    multi = gsize > 1
    gstart, gsize = gstart[multi], gsize[multi]
    gpairs = gsize * (gsize - 1) // 2
    total = int(gpairs.sum())
    frac = 1.0
    if total > max_pairs:
        rng = np.random.default_rng(seed)
        frac = max_pairs / total
        pick = rng.random(len(gstart)) < frac
        frac = float(gpairs[pick].sum()) / total if total else 1.0
        gstart, gsize, gpairs = gstart[pick], gsize[pick], gpairs[pick]
    count = 0
    chunk = 4_000_000
    gi = 0
    cum = np.cumsum(gpairs)
    while gi < len(gstart):
        base = cum[gi - 1] if gi else 0
        gj = int(np.searchsorted(cum, base + chunk, side="right"))
        gj = max(gj, gi + 1)
        st, sz = gstart[gi:gj], gsize[gi:gj]
        # entries of these groups
        ent = np.repeat(st, sz) + (np.arange(int(sz.sum())) - np.repeat(np.cumsum(sz) - sz, sz))
        endg = np.repeat(st + sz, sz)
        m = endg - ent - 1
        li = np.repeat(ent, m)
        ri = li + 1 + (np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m))
        count += _count(li, ri, cell, sid, a, d, edge_of, ends, boxes, lo, cs, nx)
        gi = gj
    if frac < 1.0:
        return int(round(count / frac)), frac
    return count, 1.0


def _count(li, ri, cell, sid, a, d, edge_of, ends, boxes, lo, cs, nx):
    s1, s2 = sid[li], sid[ri]
    e1, e2 = edge_of[s1], edge_of[s2]
    ok = e1 != e2
    s1, s2, e1, e2, c = s1[ok], s2[ok], e1[ok], e2[ok], cell[li[ok]]
    p, r = a[s1], d[s1]
    q, s = a[s2], d[s2]
    den = r[:, 0] * s[:, 1] - r[:, 1] * s[:, 0]
    qp = q - p
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (qp[:, 0] * s[:, 1] - qp[:, 1] * s[:, 0]) / den
        u = (qp[:, 0] * r[:, 1] - qp[:, 1] * r[:, 0]) / den
    eps = 1e-9
    hit = (den != 0) & (t > eps) & (t < 1 - eps) & (u > eps) & (u < 1 - eps)
    if not hit.any():
        return 0
    t, p, r, c, e1, e2 = t[hit], p[hit], r[hit], c[hit], e1[hit], e2[hit]
    x = p + r * t[:, None]
    ci = np.floor((x - lo) / cs).astype(np.int64)
    own = (ci[:, 1] * nx + ci[:, 0]) == c
    x, e1, e2 = x[own], e1[own], e2[own]
    # Ignore crossings inside the box of a node both edges attach to.
    inside_shared = np.zeros(len(x), dtype=bool)
    for i in (0, 1):
        for jj in (0, 1):
            v = ends[e1, i]
            shared = v == ends[e2, jj]
            bx = boxes[v]
            inside_shared |= shared & (x[:, 0] >= bx[:, 0] - 1) & (x[:, 0] <= bx[:, 2] + 1) \
                & (x[:, 1] >= bx[:, 1] - 1) & (x[:, 1] <= bx[:, 3] + 1)
    return int((~inside_shared).sum())


def metrics(graph_path, pos_path, max_pairs=3e8):
    g, p = load(graph_path, pos_path)
    if len(p["edges"]) != len(g["edges"]) or len(p["x"]) != len(g["nodes"]):
        raise SystemExit("positions do not match graph: %d/%d nodes, %d/%d edges" % (
            len(p["x"]), len(g["nodes"]), len(p["edges"]), len(g["edges"])))
    a, b, edge_of, missing = segments(p)
    ln = np.hypot(*(b - a).T).sum() if len(a) else 0.0
    h = np.asarray(p["h"], dtype=np.float64)
    w = np.asarray(p["w"], dtype=np.float64)
    x = np.asarray(p["x"], dtype=np.float64)
    y = np.asarray(p["y"], dtype=np.float64)
    norm = float(np.median(h)) if len(h) else 1.0
    boxes = np.stack([x - w / 2, y - h / 2, x + w / 2, y + h / 2], axis=1)
    ends = np.asarray(g["edges"], dtype=np.int64).reshape(-1, 2)
    cr, frac = crossings(a, b, edge_of, ends, boxes, max_pairs)
    return {"crossings": cr, "sampled": None if frac >= 1.0 else round(frac, 4),
            "edge_length": round(float(ln) / norm, 1), "edge_length_px": round(float(ln), 1),
            "norm_px": norm, "segments": int(len(a)), "missing_edges": missing}


def main():
    args = [v for v in sys.argv[1:]]
    max_pairs = 3e8
    if "--max-pairs" in args:
        i = args.index("--max-pairs")
        max_pairs = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    print(json.dumps(metrics(args[0], args[1], max_pairs)))


if __name__ == "__main__":
    main()
