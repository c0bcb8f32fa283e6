#!/usr/bin/python3
"""Print the layout benchmark table from results.jsonl (bench_layout.sh).

Per tool: process time (start, read the graph, lay out, write the positions;
timed.py, the same for every tool) / edge crossings / total edge length in
median node heights; the tool's own layout-only time in brackets where it
reports one (dot does not). Ratios: fastest peer's process time / ours, and
our crossings and edge length over dot's (quality target: <= 1.3x where dot
finishes).
"""
import json
import sys

TOOLS = ["ours", "dagre", "elk", "dot"]
PEERS = ["dagre", "elk", "dot"]


def fmt_len(v):
    return "%.1fk" % (v / 1000) if v >= 10000 else "%.0f" % v


def cell(r):
    if r is None:
        return "-"
    if r["status"] != "ok":
        return r["status"]
    def t(ms):
        return "%.3g ms" % ms if ms < 1000 else "%.3g s" % (ms / 1000)

    s = "%s / %d / %s" % (t(r["process_ms"]), r["crossings"], fmt_len(r["edge_length"]))
    if r.get("ms") is not None and r["tool"] != "dot":
        s += " (%s)" % t(r["ms"])
    if r.get("sampled"):
        s += " (crossings sampled %.0f%%)" % (100 * r["sampled"])
    return s


def ratio(a, b):
    if b == 0:
        return "1.00" if a == 0 else "inf"
    return "%.2f" % (a / b)


def main():
    rows, order = {}, []
    with open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/mi_layout_bench/results.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["graph"] not in rows:
                rows[r["graph"]] = {}
                order.append(r["graph"])
            rows[r["graph"]][r["tool"]] = r
    print("Cells: process time / edge crossings / total edge length in median node heights (36 px)"
          " (layout-only time as the tool reports it)")
    print()
    print("| graph | nodes | edges | " + " | ".join(TOOLS) +
          " | ours vs fastest peer (time) | ours/dot crossings | ours/dot length |")
    print("|---" * (3 + len(TOOLS) + 3) + "|")
    for g in order:
        rs = rows[g]
        any_r = next((r for r in rs.values() if "nodes" in r), {})
        ok = {t: r for t, r in rs.items() if r["status"] == "ok"}
        peers = [ok[t] for t in PEERS if t in ok]
        fast = min(peers, key=lambda r: r["process_ms"]) if peers else None
        ours = ok.get("ours")
        sp = cr = ln = "-"
        if ours and fast:
            o, f = ours["process_ms"], fast["process_ms"]
            sp = "%.1fx faster than %s" % (f / o, fast["tool"]) if o <= f \
                else "%.1fx slower than %s" % (o / f, fast["tool"])
        if ours and "dot" in ok:
            cr = ratio(ours["crossings"], ok["dot"]["crossings"])
            ln = ratio(ours["edge_length"], ok["dot"]["edge_length"])
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            g, any_r.get("nodes", "?"), any_r.get("edges", "?"),
            " | ".join(cell(rs.get(t)) for t in TOOLS), sp, cr, ln))


if __name__ == "__main__":
    main()
