#!/usr/bin/python3
"""Generate the layout benchmark graphs (deterministic, no downloads).

Writes one neutral JSON format to OUT (default /tmp/mi_layout_bench):

    {"nodes": [{"w": px, "h": px, "label": str}, ...], "edges": [[a, b], ...]}

Edges are producer -> consumer node indices, unique (no multi-edges, no
self-loops) so every tool's output can be matched edge by edge.
Node size: w = 7 px * len(label) + 16 px padding, h = 36 px.

Graphs:
  transformer_1k / _3k / _10k / _100k  synthetic transformer stacks (repeated
      blocks: layernorm chain, q/k/v MatMul+Add+Reshape+Transpose, QK^T,
      scale, mask add, Softmax, attention MatMul, output projection, residual
      Add skips, layernorm, GELU MLP, residual Add; each block's mask Add takes
      its own Constant, as in test/fixtures/transformer)
  transformer_sharedmask_1k  the same stack, but one attention-mask node feeds
      every block's mask Add (as HF BERT-style exports do): a high fan-out node
      whose edges span the whole graph (dot's x-positioning network simplex
      takes minutes on it at 1k nodes; without the shared mask: 0.4 s)
  dag_branchy_10k   random branchy DAG, 10,000 nodes: 1-3 parents each, mostly
      local, ~10% long-range (the shape on which network-simplex ranking
      falls off a cliff)
  fixture_resnet18, fixture_transformer  the repo's test fixtures converted
      with Debian's python3-onnx (ONNX node -> node, tensor producer ->
      consumer edges; label = op_type)

  /usr/bin/python3 bench/layout/generate.py [OUT] [--force]
"""
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H = 36


def node(label):
    return {"w": 7 * len(label) + 16, "h": H, "label": label}


class G:
    def __init__(self):
        self.nodes, self.edges, self.seen = [], [], set()

    def add(self, label, *parents):
        i = len(self.nodes)
        self.nodes.append(node(label))
        for p in parents:
            self.edge(p, i)
        return i

    def edge(self, a, b):
        if a != b and (a, b) not in self.seen:
            self.seen.add((a, b))
            self.edges.append([a, b])

    def dump(self, path):
        with open(path + ".tmp", "w") as f:
            json.dump({"nodes": self.nodes, "edges": self.edges}, f, separators=(",", ":"))
        os.replace(path + ".tmp", path)


def layernorm(g, x):
    mean = g.add("ReduceMean", x)
    sub = g.add("Sub", x, mean)
    pw = g.add("Pow", sub)
    var = g.add("ReduceMean", pw)
    eps = g.add("Add", var)
    sq = g.add("Sqrt", eps)
    div = g.add("Div", sub, sq)
    mul = g.add("Mul", div)
    return g.add("Add", mul)


def block(g, x, mask, i):
    ln = layernorm(g, x)
    heads = []
    for _ in "qkv":
        mm = g.add("MatMul", ln)
        b = g.add("Add", mm)
        shape = g.add("Constant")
        r = g.add("Reshape", b, shape)
        heads.append(g.add("Transpose", r))
    q, k, v = heads
    kt = g.add("Transpose", k)
    qk = g.add("MatMul", q, kt)
    sc = g.add("Div", qk)
    msk = g.add("Add", sc, mask if mask is not None else g.add("Constant"))
    sm = g.add("Softmax", msk)
    av = g.add("MatMul", sm, v)
    t = g.add("Transpose", av)
    shape = g.add("Constant")
    r = g.add("Reshape", t, shape)
    o = g.add("MatMul", r)
    ob = g.add("Add", o)
    res1 = g.add("Add", x, ob)            # residual skip around attention
    ln2 = layernorm(g, res1)
    up = g.add("MatMul", ln2)
    upb = g.add("Add", up)
    d = g.add("Div", upb)                 # GELU (erf form)
    erf = g.add("Erf", d)
    one = g.add("Add", erf)
    m1 = g.add("Mul", upb, one)
    m2 = g.add("Mul", m1)
    down = g.add("MatMul", m2)
    downb = g.add("Add", down)
    return g.add("Add", res1, downb)      # residual skip around the MLP


def transformer(target, shared_mask=False):
    g = G()
    ids = g.add("input_ids")
    emb = g.add("Gather", ids)
    pos = g.add("Gather")
    x = g.add("Add", emb, pos)
    mask = None
    if shared_mask:
        am = g.add("attention_mask")
        u = g.add("Unsqueeze", am)
        c = g.add("Cast", u)
        s = g.add("Sub", c)
        mask = g.add("Mul", s)
    per_block = 55 if shared_mask else 56
    tail = 12
    nblocks = max(1, round((target - len(g.nodes) - tail) / per_block))
    for i in range(nblocks):
        x = block(g, x, mask, i)
    x = layernorm(g, x)
    lm = g.add("MatMul", x)
    g.add("logits", lm)
    g.add("ArgMax", lm)
    return g


def branchy_dag(n, seed=20261201):
    rnd = random.Random(seed)
    g = G()
    labels = ["Conv", "Relu", "Add", "Concat", "MatMul", "Mul", "Sigmoid", "Split", "Slice"]
    for i in range(n):
        g.add(rnd.choice(labels))
        if i == 0:
            continue
        k = 1 + (rnd.random() < 0.45) + (rnd.random() < 0.15)
        for _ in range(k):
            if rnd.random() < 0.10:
                p = rnd.randrange(0, i)                     # long-range
            else:
                p = rnd.randrange(max(0, i - 60), i)        # local window
            g.edge(p, i)
    return g


def onnx_graph(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    g = G()
    producer = {}
    for n in m.graph.node:
        i = g.add(n.op_type)
        for t in n.output:
            if t:
                producer[t] = i
    for i, n in enumerate(m.graph.node):
        for t in n.input:
            if t in producer:
                g.edge(producer[t], i)
    return g


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    force = "--force" in sys.argv
    out = args[0] if args else os.environ.get("MI_LAYOUT_BENCH_DIR", "/tmp/mi_layout_bench")
    os.makedirs(out, exist_ok=True)
    jobs = [("transformer_1k", lambda: transformer(1000)),
            ("transformer_3k", lambda: transformer(3000)),
            ("transformer_10k", lambda: transformer(10000)),
            ("transformer_100k", lambda: transformer(100000)),
            ("transformer_sharedmask_1k", lambda: transformer(1000, shared_mask=True)),
            ("dag_branchy_10k", lambda: branchy_dag(10000))]
    for name, fx in (("resnet18", "resnet18"), ("transformer", "transformer")):
        p = os.path.join(ROOT, "test", "fixtures", fx, "model.onnx")
        if os.path.exists(p):
            jobs.append(("fixture_" + name, lambda p=p: onnx_graph(p)))
    for name, make in jobs:
        path = os.path.join(out, name + ".json")
        if os.path.exists(path) and not force:
            continue
        g = make()
        g.dump(path)
        print("%-20s %7d nodes %7d edges -> %s" % (name, len(g.nodes), len(g.edges), path))


if __name__ == "__main__":
    main()
