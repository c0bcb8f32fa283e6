#!/bin/bash
# End-to-end: time opening ONNX models with model-inspector's importer vs
# onnx.load (Debian python3-onnx), on generated models (no downloads):
#  (a) the 1 GB model of (b) with its weights in an external-data file,
#      read with onnx.load(path, load_external_data=False): like for like,
#      neither side reads the weights. Two files:
#      weights_external_typed: every edge's type declared (value_info, as
#        shape-inferred exports have): we parse and index, onnx.load parses;
#      weights_external: only inputs / outputs typed: we run ONNX shape
#        inference to type every edge, so the peer is onnx.load +
#        onnx.shape_inference.infer_shapes;
#  (b) weights_1gb: ~1 GB model whose bulk is weights inside the .onnx
#      (MatMul chain, raw_data floats); NOT like for like: onnx.load reads
#      the weights, we don't (we skip them by length on a memory map);
#  (c) nodes_100k: a 100,000-node graph, every edge typed (onnx.load +
#      iterating every node's fields vs our import, which indexes every
#      node and value).
# Both sides time themselves in-process, wall and CPU (ours:
# mi_bench_onnx_open around the import; peer: around onnx.load and what
# follows), best of 5, page cache warm.
#
#   bench/onnx/bench_onnx_open.sh [build-dir]   (default: build)
# Needs the target mi_bench_onnx_open built in the build dir. Outputs go to
# /tmp/mi_bench_onnx (override with MI_BENCH_DIR).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
DRIVER="$BUILD/src/importers/onnx/mi_bench_onnx_open"
OUT="${MI_BENCH_DIR:-/tmp/mi_bench_onnx}"
PY=/usr/bin/python3
mkdir -p "$OUT"
[ -x "$DRIVER" ] || { echo "build $DRIVER first (ninja mi_bench_onnx_open)"; exit 2; }

"$PY" - "$OUT" <<'PYEOF'
import os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto

out = sys.argv[1]

def varint(n):
    b = bytearray()
    while n >= 0x80:
        b.append((n & 0x7f) | 0x80)
        n >>= 7
    b.append(n)
    return bytes(b)

def field_len(number, payload_len):
    return varint((number << 3) | 2) + varint(payload_len)

# (b) Weight-heavy: 32 MatMul layers with [4096, 2048] float weights
# (32 MiB each, 1 GiB total). The initializers are streamed into the file by
# hand (protobuf fields may come in any order), so generating it needs no
# GiB of Python memory.
path_a = os.path.join(out, "weights_1gb.onnx")
if not os.path.exists(path_a):
    layers, rows, cols = 32, 4096, 2048
    nodes = [helper.make_node("MatMul", ["x%d" % i, "w%d" % i], ["x%d" % (i + 1)],
                              name="/layer%d/MatMul" % i) for i in range(layers)]
    # Shapes chain: [1, rows] @ [rows, cols] -> [1, cols] @ [cols, rows] ...
    dims = [(rows, cols) if i % 2 == 0 else (cols, rows) for i in range(layers)]
    graph = helper.make_graph(
        nodes, "weights_1gb",
        [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1, rows])],
        [helper.make_tensor_value_info("x%d" % layers, TensorProto.FLOAT, [1, rows])])
    model = helper.make_model(graph, producer_name="bench",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    graph_bytes = graph.SerializeToString()
    inits = []
    for i, (r, c) in enumerate(dims):
        t = onnx.TensorProto(name="w%d" % i, data_type=TensorProto.FLOAT, dims=[r, c])
        head = t.SerializeToString()
        raw_len = r * c * 4
        inits.append((head, raw_len))
    init_total = sum(len(field_len(5, len(h) + len(field_len(9, n)) + n)) +
                     len(h) + len(field_len(9, n)) + n for h, n in inits)
    model.ClearField("graph")
    with open(path_a, "wb") as f:
        f.write(model.SerializeToString())
        f.write(field_len(7, len(graph_bytes) + init_total))
        f.write(graph_bytes)
        rng = np.random.default_rng(0)
        chunk = rng.random(4 << 20, dtype=np.float32).tobytes()  # 16 MiB
        for head, n in inits:
            body_len = len(head) + len(field_len(9, n)) + n
            f.write(field_len(5, body_len))
            f.write(head)
            f.write(field_len(9, n))
            left = n
            while left:
                k = min(left, len(chunk))
                f.write(chunk[:k])
                left -= k

# (a) The same model with its weights in weights_external.bin (ONNX external
# data: each initializer names the file, an offset and a length).
path_c = os.path.join(out, "weights_external.onnx")
if not os.path.exists(path_c):
    layers, rows, cols = 32, 4096, 2048
    nodes = [helper.make_node("MatMul", ["x%d" % i, "w%d" % i], ["x%d" % (i + 1)],
                              name="/layer%d/MatMul" % i) for i in range(layers)]
    dims = [(rows, cols) if i % 2 == 0 else (cols, rows) for i in range(layers)]
    inits = []
    offset = 0
    for i, (r, c) in enumerate(dims):
        t = onnx.TensorProto(name="w%d" % i, data_type=TensorProto.FLOAT, dims=[r, c])
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", "weights_external.bin"), ("offset", str(offset)),
                     ("length", str(r * c * 4))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        offset += r * c * 4
    graph = helper.make_graph(
        nodes, "weights_external",
        [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1, rows])],
        [helper.make_tensor_value_info("x%d" % layers, TensorProto.FLOAT, [1, rows])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="bench",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    rng = np.random.default_rng(0)
    chunk = rng.random(4 << 20, dtype=np.float32).tobytes()  # 16 MiB
    with open(os.path.join(out, "weights_external.bin"), "wb") as f:
        left = offset
        while left:
            k = min(left, len(chunk))
            f.write(chunk[:k])
            left -= k
    onnx.save(model, path_c)
    # The same graph with every edge's type declared.
    for i, (r, c) in enumerate(dims[:-1]):
        model.graph.value_info.append(
            helper.make_tensor_value_info("x%d" % (i + 1), TensorProto.FLOAT, [1, c]))
    model.graph.name = "weights_external_typed"
    onnx.save(model, os.path.join(out, "weights_external_typed.onnx"))

# (c) 100,000 nodes: a chain of Relu/Neg with small shapes, names in the
# torch style, value_info on every edge (as shape-inferred files have).
path_b = os.path.join(out, "nodes_100k.onnx")
if not os.path.exists(path_b):
    n = 100_000
    nodes, infos = [], []
    for i in range(n):
        op = "Relu" if i % 2 == 0 else "Neg"
        nodes.append(helper.make_node(op, ["t%d" % i], ["t%d" % (i + 1)],
                                      name="/block%d/layer%d/%s" % (i // 100, i, op)))
        if i + 1 < n:
            infos.append(helper.make_tensor_value_info("t%d" % (i + 1), TensorProto.FLOAT, [1, 64]))
    graph = helper.make_graph(
        nodes, "nodes_100k",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("t%d" % n, TensorProto.FLOAT, [1, 64])],
        value_info=infos)
    model = helper.make_model(graph, producer_name="bench",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path_b)
PYEOF

peer_time() {  # $1 = file, $2 = mode: load | load_noext | load_noext_infer | load_iterate
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, time, resource
import onnx
import onnx.shape_inference
mode = sys.argv[2]
t = time.perf_counter()
c = time.process_time()
m = onnx.load(sys.argv[1], load_external_data=mode in ("load", "load_iterate"))
if mode == "load_noext_infer":
    m = onnx.shape_inference.infer_shapes(m)
if mode == "load_iterate":
    k = 0
    for node in m.graph.node:
        k += len(node.op_type) + len(node.name) + len(node.input) + len(node.output)
        for i in node.input: k += len(i)
        for o in node.output: k += len(o)
dt = time.perf_counter() - t
dc = time.process_time() - c
print("%.4f %d %.4f" % (dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, dc))
PYEOF
}

best_of() {  # $1 = runs, rest = command; prints ours: best "wall_ms peak_kb cpu_ms"
  local runs=$1; shift
  local best="" best_rss="" best_cpu=""
  for _ in $(seq "$runs"); do
    line=$("$@")
    ms=$(sed -E 's/.*wall_ms=([0-9.]+).*/\1/' <<<"$line")
    cpu=$(sed -E 's/.*cpu_ms=([0-9.]+).*/\1/' <<<"$line")
    rss=$(sed -E 's/.*peak_rss_kb=([0-9]+).*/\1/' <<<"$line")
    if [ -z "$best" ] || awk "BEGIN{exit !($ms < $best)}"; then best=$ms; best_rss=$rss; fi
    if [ -z "$best_cpu" ] || awk "BEGIN{exit !($cpu < $best_cpu)}"; then best_cpu=$cpu; fi
  done
  echo "$best $best_rss $best_cpu"
}

report() {  # name file peer-mode peer-label label
  local name=$1 file=$2 mode=$3 peer_label=$4 label=$5
  local size; size=$(stat -c %s "$file")
  cat "$file" > /dev/null  # warm the page cache for both sides alike
  echo "== $name: $label"
  read -r ours_ms ours_rss ours_cpu < <(best_of 5 "$DRIVER" "$file")
  local peer_s peer_rss peer_c best_peer="" best_peer_cpu=""
  for _ in 1 2 3 4 5; do
    read -r peer_s peer_rss peer_c < <(peer_time "$file" "$mode")
    if [ -z "$best_peer" ] || awk "BEGIN{exit !($peer_s < $best_peer)}"; then best_peer=$peer_s; fi
    if [ -z "$best_peer_cpu" ] || awk "BEGIN{exit !($peer_c < $best_peer_cpu)}"; then best_peer_cpu=$peer_c; fi
  done
  # Wall time is the headline; CPU time is printed too because shared
  # machines make wall time noisy. Ratio = peer time / ours.
  awk -v n="$name" -v size="$size" -v ours="$ours_ms" -v peer="$best_peer" \
      -v oc="$ours_cpu" -v pc="$best_peer_cpu" -v pl="$peer_label" \
      -v rss="$ours_rss" -v prss="$peer_rss" 'BEGIN {
    printf "   file %.3f MB; peer: %s\n", size/1e6, pl
    printf "   wall: ours %.2f ms, peer %.2f ms, ratio %.2fx;  cpu: ours %.2f ms, peer %.2f ms, ratio %.2fx;  peak RSS: ours %.1f MB, peer %.1f MB\n",
      ours, peer*1000, peer*1000/ours, oc, pc*1000, pc*1000/oc, rss/1024, prss/1024 }'
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
report "weights_external_typed" "$OUT/weights_external_typed.onnx" load_noext \
  "onnx.load(load_external_data=False)" \
  "1 GB of weights in an external-data file, every edge typed: neither side reads the weights"
report "weights_external" "$OUT/weights_external.onnx" load_noext_infer \
  "onnx.load(load_external_data=False) + onnx.shape_inference.infer_shapes" \
  "the same, only inputs and outputs typed: both sides run ONNX shape inference"
report "weights_1gb" "$OUT/weights_1gb.onnx" load "onnx.load" \
  "1 GB of weights inside the .onnx: onnx.load reads the weights, we don't (not like for like)"
report "nodes_100k" "$OUT/nodes_100k.onnx" load_iterate "onnx.load + a visit of every node's fields" \
  "100,000-node graph, every edge typed"
