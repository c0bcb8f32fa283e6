#!/usr/bin/python3
"""Graphviz dot peer: translates a neutral graph JSON to the dot language and
dot's `-Tplain` output back to the neutral positions JSON. bench_layout.sh
runs `dot -Tplain G.dot -o G.plain` itself, timed as a process the same way
as the other tools (timed.py): dot reads and parses its input, lays it out
and writes its output, as they do.

  /usr/bin/python3 run_dot.py to-dot GRAPH.json G.dot
  /usr/bin/python3 run_dot.py from-plain GRAPH.json G.plain positions.json

Settings: rankdir TB, box nodes of the given size, fixedsize, no labels,
spline edges, arrowhead none so splines end on the node border as the other
tools' edges do. Edge splines (cubic Bezier control points) are flattened to
8 segments per Bezier piece.
"""
import json
import sys

BEZ_STEPS = 8


def write_dot(g, path):
    with open(path, "w") as f:
        f.write("digraph G {\nrankdir=TB;\n"
                "node [shape=box, fixedsize=true, label=\"\"];\nedge [arrowhead=none];\n")
        for i, n in enumerate(g["nodes"]):
            f.write("n%d [width=%.4f, height=%.4f];\n" % (i, n["w"] / 72.0, n["h"] / 72.0))
        for a, b in g["edges"]:
            f.write("n%d -> n%d;\n" % (a, b))
        f.write("}\n")


def bezier_polyline(pts):
    """pts: flat [x0,y0,...] of 3k+1 control points -> flat polyline."""
    cps = list(zip(pts[0::2], pts[1::2]))
    if len(cps) < 4 or (len(cps) - 1) % 3:
        return pts
    out = [cps[0][0], cps[0][1]]
    for k in range(0, len(cps) - 1, 3):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = cps[k:k + 4]
        for s in range(1, BEZ_STEPS + 1):
            t = s / BEZ_STEPS
            u = 1 - t
            a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
            out += [a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3]
    return out


def parse_plain(path, g):
    n = len(g["nodes"])
    x, y = [0.0] * n, [0.0] * n
    slots = {}
    for i, (a, b) in enumerate(g["edges"]):
        slots.setdefault((a, b), []).append(i)
    edges = [[] for _ in g["edges"]]
    height = 0.0
    with open(path) as f:
        for line in f:
            if line.startswith("node "):
                p = line.split(None, 4)
                i = int(p[1][1:])
                x[i], y[i] = float(p[2]) * 72, float(p[3]) * 72
            elif line.startswith("edge "):
                p = line.split()
                a, b, k = int(p[1][1:]), int(p[2][1:]), int(p[3])
                pts = [float(v) * 72 for v in p[4:4 + 2 * k]]
                lst = slots.get((a, b))
                if lst:
                    edges[lst.pop(0)] = bezier_polyline(pts)
            elif line.startswith("graph "):
                height = float(line.split()[3]) * 72
    # dot's y axis points up: flip so y grows downwards like the other tools.
    y = [height - v for v in y]
    for e in edges:
        for j in range(1, len(e), 2):
            e[j] = height - e[j]
    return {"x": x, "y": y, "w": [nd["w"] for nd in g["nodes"]],
            "h": [nd["h"] for nd in g["nodes"]], "edges": edges}


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("to-dot", "from-plain"):
        sys.exit(__doc__)
    with open(sys.argv[2]) as f:
        g = json.load(f)
    if sys.argv[1] == "to-dot":
        write_dot(g, sys.argv[3])
        return
    with open(sys.argv[4], "w") as f:
        json.dump(parse_plain(sys.argv[3], g), f, separators=(",", ":"))


if __name__ == "__main__":
    main()
