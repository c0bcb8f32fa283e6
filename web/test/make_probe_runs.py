"""Run directories with real probe stores for the UI's probe test
(e2e_probes_test.mjs), written with the Python package and ONNX Runtime
(the runner, `python3 -m model_inspector.runner`), never by hand:

  OUT/runs/resnet   test/fixtures/resnet18/model.onnx probed on every node,
                    three runs on the inputs x, 2x and x/2 (x: the fixtures'
                    x[i] = (i % 7) / 7), statistics kept
  OUT/runs/nan      two runs on x: the model as it is (every node), then
                    the same model with one weight of layer1.0's first conv
                    set to +Inf (python3-onnx) with the "nan" and "inf"
                    triggers: that run stops at that conv, the producer
                    (its inputs are clean; the ReLU before it leaves zeros,
                    and 0 x Inf is NaN); compared with the first run it is
                    the first divergent node
  OUT/runs/lstm     a one-LSTM model (made here with python3-onnx: seq 6,
                    batch 1, input 3, hidden 4, weights from a seeded
                    generator) probed on every node: per-step events

and prints, as JSON, what the test compares the UI with, read back from
the stores through model_inspector.ProbeStore (the store's own reader, not
the server): per run directory its runs, and the statistics the test
looks at.

    PYTHONPATH=build/python python3 web/test/make_probe_runs.py OUT
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = pathlib.Path(__file__).resolve().parents[2]
RESNET = REPO / "test" / "fixtures" / "resnet18" / "model.onnx"


def runner(*args):
    cmd = [sys.executable, "-m", "model_inspector.runner", *map(str, args), "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fixture_input(shape):
    n = int(np.prod(shape))
    return ((np.arange(n) % 7) / 7).astype(np.float32).reshape(shape)


def lstm_model(seq=6, batch=1, inp=3, hidden=4):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((1, 4 * hidden, inp)).astype(np.float32)
    r = rng.standard_normal((1, 4 * hidden, hidden)).astype(np.float32)
    lstm = helper.make_node("LSTM", ["x", "W", "R"], ["Y", "Y_h"], name="/lstm/LSTM", hidden_size=hidden)
    relu = helper.make_node("Relu", ["Y"], ["out"], name="/relu/Relu")
    graph = helper.make_graph(
        [lstm, relu], "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, inp])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [seq, 1, batch, hidden])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    out = pathlib.Path(sys.argv[1])
    runs = out / "runs"
    inputs = out / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    x = fixture_input((1, 3, 224, 224))
    for name, arr in (("x", x), ("x2", 2 * x), ("xhalf", x / 2)):
        np.save(inputs / f"{name}.npy", arr)

    for name in ("x", "x2", "xhalf"):
        runner("--model", RESNET, "--out", runs / "resnet", "--inputs", inputs / f"{name}.npy",
               "--probes", "*", "--label", name)
    # An input the resnet run directory offers to re-runs (the server lists its .npy files).
    np.save(runs / "resnet" / "x.npy", x)
    broken = onnx.load(str(RESNET))
    conv = next(n for n in broken.graph.node if n.name == "/layer1/layer1.0/conv1/Conv")
    weight = next(t for t in broken.graph.initializer if t.name == conv.input[1])
    w = numpy_helper.to_array(weight).copy()
    w.flat[0] = np.inf
    weight.CopyFrom(numpy_helper.from_array(w, weight.name))
    onnx.save(broken, str(out / "broken.onnx"))
    runner("--model", RESNET, "--out", runs / "nan", "--inputs", inputs / "x.npy", "--probes", "*")
    hit = runner("--model", out / "broken.onnx", "--out", runs / "nan", "--inputs", inputs / "x.npy",
                 "--probes", "*", "--triggers", "nan", "--triggers", "inf")

    model = out / "lstm.onnx"
    onnx.save(lstm_model(), model)
    xs = np.random.default_rng(3).standard_normal((6, 1, 3)).astype(np.float32)
    np.save(inputs / "xs.npy", xs)
    runner("--model", model, "--out", runs / "lstm", "--inputs", inputs / "xs.npy", "--probes", "*")

    from model_inspector import ProbeStore
    facts = {"nan_first_hit": hit.get("first_hit")}
    for name in ("resnet", "nan", "lstm"):
        with ProbeStore(str(runs / name)) as store:
            rows = store.probes()
            facts[name] = {
                "runs": [r["id"] for r in store.runs()],
                "probes": [{k: r.get(k) for k in ("probe", "node", "kind", "index", "step", "stats")} for r in rows],
            }
            if name == "resnet":
                series = {}
                for probe in ("/conv1/Conv:0", "/fc/Gemm:0"):
                    series[probe] = {s: store.series(probe, stat=s, last=10) for s in ("mean", "max", "std")}
                facts[name]["series"] = series
    json.dump(facts, sys.stdout, default=float)


if __name__ == "__main__":
    main()
