#!/usr/bin/python3
"""Graphviz dot peer: lay out a neutral graph JSON with `dot -Tplain`.

  /usr/bin/python3 run_dot.py GRAPH.json [--out positions.json] [--timeout 300]

Writes GRAPH.dot next to the positions (default settings: rankdir TB, box
nodes of the given size, fixedsize, no labels, spline edges, arrowhead none so
splines end on the node border as the other tools' edges do). The time is the
wall time of `dot -Tplain` minus the best of 3 runs on a trivial 2-node graph
(same attributes; process start, plugin load), so it includes dot's own parse of the .dot
file and writing of the plain output, which are small next to layout.
Edge splines (cubic Bezier control points) are flattened to 8 segments per
Bezier piece. Prints one JSON line; on timeout {"tool":"dot","error":"timeout"}.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

DOT = os.environ.get("DOT", "dot")
BEZ_STEPS = 8


def run(args, timeout):
    """Run, return (wall seconds, peak rss kB, returncode) or None on timeout."""
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    killed = []
    timer = threading.Timer(timeout, lambda: (killed.append(1), p.kill()))
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    if killed:
        return None
    return wall, ru.ru_maxrss, p.returncode, err


def baseline(tmp):
    path = os.path.join(tmp, "trivial.dot")
    write_dot({"nodes": [{"w": 50, "h": 36}] * 2, "edges": [[0, 1]]}, path)
    return min(run([DOT, "-Tplain", path, "-o", os.path.join(tmp, "trivial.plain")], 30)[0]
               for _ in range(3))


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
    args, out, timeout = [], None, 300.0
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--out":
            out = next(it)
        elif a == "--timeout":
            timeout = float(next(it))
        else:
            args.append(a)
    if not args:
        sys.exit(__doc__)
    with open(args[0]) as f:
        g = json.load(f)
    res = {"tool": "dot", "nodes": len(g["nodes"]), "edges": len(g["edges"])}
    with tempfile.TemporaryDirectory(prefix="mi_dot_") as tmp:
        base = baseline(tmp)
        dot_path = os.path.join(tmp, "g.dot")
        plain = os.path.join(tmp, "g.plain")
        write_dot(g, dot_path)
        r = run([DOT, "-Tplain", dot_path, "-o", plain], timeout)
        if r is None:
            res["error"] = "timeout"
            print(json.dumps(res))
            sys.exit(124)
        wall, rss, rc, err = r
        if rc != 0:
            res["error"] = "exit %d: %s" % (rc, err.strip()[-200:])
            print(json.dumps(res))
            sys.exit(3)
        res.update(ms=round((wall - base) * 1000, 2), wall_ms=round(wall * 1000, 2),
                   baseline_ms=round(base * 1000, 2), peak_rss_kb=rss)
        if out:
            with open(out, "w") as f:
                json.dump(parse_plain(plain, g), f, separators=(",", ":"))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
