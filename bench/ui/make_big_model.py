#!/usr/bin/python3
"""Writes a synthetic transformer-like ONNX model of about N nodes (no
libraries: a tiny protobuf writer), with scoped node names
(/layers.K/self_attn/q_proj/MatMul) so the layout has nested groups.

  /usr/bin/python3 bench/ui/make_big_model.py N OUT.onnx
"""
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):  # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def fint(num, v):
    return varint(num << 3) + varint(v)


def s(x):
    return x.encode()


class Graph:
    def __init__(self):
        self.nodes = []
        self.count = 0

    def add(self, scope, op, *inputs):
        self.count += 1
        out = f"t{self.count}"
        name = f"{scope}/{op}" if scope else f"/{op}_{self.count}"
        body = b"".join(field(1, s(i)) for i in inputs) + field(2, s(out)) + field(3, s(name)) + field(4, s(op))
        self.nodes.append(field(1, body))
        return out


def block(g, x, k):
    p = f"/layers.{k}"
    ln = g.add(f"{p}/norm1", "LayerNormalization", x)
    heads = []
    for proj in ("q_proj", "k_proj", "v_proj"):
        m = g.add(f"{p}/self_attn/{proj}", "MatMul", ln)
        a = g.add(f"{p}/self_attn/{proj}", "Add", m)
        r = g.add(f"{p}/self_attn", "Reshape", a)
        heads.append(g.add(f"{p}/self_attn", "Transpose", r))
    qk = g.add(f"{p}/self_attn", "MatMul", heads[0], heads[1])
    sc = g.add(f"{p}/self_attn", "Div", qk)
    sm = g.add(f"{p}/self_attn", "Softmax", sc)
    av = g.add(f"{p}/self_attn", "MatMul", sm, heads[2])
    t = g.add(f"{p}/self_attn", "Transpose", av)
    r = g.add(f"{p}/self_attn", "Reshape", t)
    o = g.add(f"{p}/self_attn/out_proj", "MatMul", r)
    o = g.add(f"{p}/self_attn/out_proj", "Add", o)
    x = g.add(p, "Add", x, o)
    ln = g.add(f"{p}/norm2", "LayerNormalization", x)
    h = g.add(f"{p}/mlp/fc1", "MatMul", ln)
    h = g.add(f"{p}/mlp/fc1", "Add", h)
    h = g.add(f"{p}/mlp", "Gelu", h)
    h = g.add(f"{p}/mlp/fc2", "MatMul", h)
    h = g.add(f"{p}/mlp/fc2", "Add", h)
    return g.add(p, "Add", x, h)


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    g = Graph()
    x = g.add("/embed", "Gather", "input_ids")
    k = 0
    while g.count < n - 2:
        x = block(g, x, k)
        k += 1
    x = g.add("/head", "MatMul", x)
    y = g.add("/head", "Softmax", x)
    graph = b"".join(g.nodes) + field(2, s("synthetic")) + field(11, field(1, s("input_ids"))) + field(12, field(1, s(y)))
    model = fint(1, 8) + field(8, field(1, b"") + fint(2, 17)) + field(7, graph)
    with open(out, "wb") as f:
        f.write(model)
    print(f"{out}: {g.count} nodes, {k} blocks")


main()
