"""Compare: a model against ONNX Runtime's optimized form of it (through
fused_from), two copies of a model (by probe name), the metrics kernel from
Python, and `model-inspector compare`.

Real runs: every model runs on ONNX Runtime for Node (the fixtures'
onnxruntime-node) through model_inspector.runner. Expected values come from
elsewhere than the code under test: node names, op types and initializers
from python3-onnx; the corrupted node is found from the initializer the test
corrupts; kernel figures are computed by hand or with numpy.
"""

import json
import sys

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import committed, FIXTURES, run


import model_inspector as mi  # noqa: E402
from model_inspector.compare import compare_tensors  # noqa: E402


def models(name):
    framework = committed(FIXTURES / name / "model.onnx")
    compiled = committed(FIXTURES / name / "ort_all" / "model.optimized.onnx")
    return framework, compiled


@pytest.mark.parametrize("name", ["resnet18", "transformer"])
def test_model_against_its_ort_optimized_graph(name):
    framework, compiled = models(name)
    res = mi.compare(framework, compiled)
    assert res["match"] == "fused_from"
    assert res["level_a"] == "framework" and res["level_b"] == "compiled"
    # Every fused group was compared, and every pair agrees (fp32, same
    # input: only summation order differs).
    assert res["groups"], "the compiled graph replaced framework nodes"
    unmatched = [g for g in res["groups"] if g["status"] != "matched"]
    assert unmatched == []
    assert res["groups_matched"] == len(res["groups"])
    assert res["pass"] and res["failed"] == 0 and res["not_compared"] == 0
    assert res["first_divergent"] == -1
    for e in res["entries"]:
        assert e["metrics"]["cosine"] > 0.9999, e
        assert e["metrics"]["max_abs_err"] < 1e-3, e
    # Every node of the optimized graph (python3-onnx's list) is either
    # compared or listed as a probe without a framework counterpart.
    graph = onnx.load(str(compiled)).graph
    names = {n.name for n in graph.node}
    compared = {e["node_b"] for e in res["entries"]}
    alone = {p.rsplit(":", 1)[0] for p in res["only_in_b"]}
    assert compared | alone == names
    # A compiled node keeping a framework tensor's name is set against that
    # tensor's producer.
    framework_outputs = {o: n.name for n in onnx.load(str(framework)).graph.node for o in n.output}
    by_probe = {e["probe_b"]: e for e in res["entries"]}
    for node in graph.node:
        if node.output[0] in framework_outputs and f"{node.name}:0" in by_probe:
            e = by_probe[f"{node.name}:0"]
            assert e["node_a"] == framework_outputs[node.output[0]]


def test_resnet18_nchwc_groups_are_unblocked():
    """ORT's "all" level turns Convs into com.microsoft.nchwc Convs whose
    outputs are blocked; each is compared un-blocked against the last
    framework node of its group (a Conv, or the Relu fused into it)."""
    framework, compiled = models("resnet18")
    res = mi.compare(framework, compiled)
    graph = onnx.load(str(compiled)).graph
    nchwc = [n for n in graph.node if n.domain == "com.microsoft.nchwc" and n.op_type == "Conv"]
    assert len(nchwc) == 20
    by_node = {e["node_b"]: e for e in res["entries"]}
    for n in nchwc:
        e = by_node[n.name]
        assert e["layout"].startswith("nchwc"), e
        assert e["matched_by"] == "fused_from"
        group = next(g for g in res["groups"] if g["compiled_node"] == n.name)
        assert e["node_a"] == group["fused_from"][-1]


def corrupt_initializer(src, dst, node_name):
    """Copies the model with the weight of `node_name` (its input 1) sign-
    flipped in its first half of output channels; returns the
    initializer's name."""
    model = onnx.load(str(src))
    node = next(n for n in model.graph.node if n.name == node_name)
    weight = node.input[1]
    for i, init in enumerate(model.graph.initializer):
        if init.name == weight:
            w = numpy_helper.to_array(init).copy()
            w[: w.shape[0] // 2] *= -1
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(w, weight))
    onnx.save(model, str(dst))
    return weight


def test_corrupted_initializer_is_the_first_divergent_node(tmp_path):
    framework, _ = models("resnet18")
    target = "/layer2/layer2.0/conv1/Conv"
    weight = corrupt_initializer(framework, tmp_path / "corrupt.onnx", target)
    # The node that reads the corrupted initializer, as python3-onnx sees it.
    readers = [n.name for n in onnx.load(str(framework)).graph.node if weight in n.input]
    assert readers == [target]
    res = mi.compare(framework, tmp_path / "corrupt.onnx")
    assert res["match"] == "name"
    assert not res["pass"]
    assert res["first_divergent_node"] == target
    first = res["entries"][res["first_divergent"]]
    assert first["verdict"] == "fail"
    # Everything before it in execution order agrees exactly.
    for e in res["entries"][: res["first_divergent"]]:
        assert e["verdict"] == "pass" and e["metrics"]["max_abs_err"] == 0.0


def test_corrupted_initializer_in_the_compiled_graph(tmp_path):
    """The same fault in the optimized graph: the first divergent node is
    the compiled node that reads it, compared through fused_from."""
    framework, compiled = models("resnet18")
    graph = onnx.load(str(compiled)).graph
    # The compiled node that replaced /layer2/layer2.0/conv1/Conv (with its
    # Relu): the NCHWc Conv named after the Relu's output.
    target = "/layer2/layer2.0/relu/Relu_output_0_nchwc"
    assert target in {n.name for n in graph.node}
    corrupt_initializer(compiled, tmp_path / "corrupt.optimized.onnx", target)
    res = mi.compare(framework, tmp_path / "corrupt.optimized.onnx")
    assert res["match"] == "fused_from"
    assert res["first_divergent_node"] == target
    assert res["groups_unmatched"] == 0


def test_thresholds_are_keyword_arguments():
    framework, compiled = models("transformer")
    strict = mi.compare(framework, compiled, cosine_min=1.0, max_abs_err_max=0.0)
    assert not strict["pass"]
    assert strict["thresholds"]["cosine_min"] == 1.0
    with pytest.raises(TypeError, match="unknown threshold"):
        mi.compare(framework, compiled, cosine=0.5)


def test_compare_tensors_from_python():
    import torch  # Debian python3-torch: a missing one fails
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([1, 2, 3, 5], np.float32)
    m = compare_tensors(a, b)
    # By hand: cosine 34 / sqrt(30 * 39), max abs err 1, RMSE 0.5.
    assert m["cosine"] == pytest.approx(34 / np.sqrt(1170), abs=1e-12)
    assert m["max_abs_err"] == 1.0 and m["rmse"] == 0.5
    assert m["verdict"] == "pass"
    assert compare_tensors(a, b, rule="msit")["verdict"] == "fail"
    # torch bfloat16 crosses as its 16-bit words.
    t = torch.tensor([1.0, -2.0, 0.5], dtype=torch.bfloat16)
    m = compare_tensors(np.array([1.0, -2.0, 0.5]), t)
    assert m["max_abs_err"] == 0.0 and m["count"] == 3
    # fp16 overflow: 70000 is beyond float16's 65504.
    m = compare_tensors(np.array([1.0, 70000.0]), np.array([1.0, 70000.0]))
    assert m["fp16_overflow_a"] == 1 and m["fp16_overflow_b"] == 1


def test_cli_compare_models(tmp_path):
    framework, compiled = models("resnet18")
    proc = run("compare", framework, compiled, "--format", "json")
    cli = json.loads(proc.stdout)
    api = mi.compare(framework, compiled)
    assert cli["pass"] and proc.returncode == 0
    for key in ("match", "compared", "passed", "failed", "groups_matched", "groups_unmatched"):
        assert cli[key] == api[key], key
    assert [e["probe_b"] for e in cli["entries"]] == [e["probe_b"] for e in api["entries"]]
    assert cli["a"] == str(framework)
    # A corrupted copy: exit code 1, the node named in the table output.
    target = "/layer3/layer3.1/conv2/Conv"
    corrupt_initializer(framework, tmp_path / "corrupt.onnx", target)
    proc = run("compare", framework, tmp_path / "corrupt.onnx", check=False)
    assert proc.returncode == 1, proc.stderr
    assert f"first divergent  {target} ({target}:0)" in proc.stdout
    md = run("compare", framework, tmp_path / "corrupt.onnx", "--format", "md", check=False)
    assert md.returncode == 1 and "### Pairs in execution order" in md.stdout


def test_cli_compare_run_directories_and_errors(tmp_path):
    """Two runs of one model on inputs that differ in one element, written
    by the runner into two run directories; then the usage and not-found
    exit codes."""
    framework, _ = models("resnet18")
    x = ((np.arange(3 * 224 * 224) % 7) / 7).astype(np.float32).reshape(1, 3, 224, 224)
    y = x.copy()
    y[0, :, 100:140, 100:140] = 5.0
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    for name, inputs in (("ra", "x.npy"), ("rb", "y.npy")):
        proc = __import__("subprocess").run(
            [sys.executable, "-m", "model_inspector.runner", "--model", str(framework),
             "--out", str(tmp_path / name), "--inputs", str(tmp_path / inputs),
             "--keep", "tensor"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    proc = run("compare", tmp_path / "ra", tmp_path / "rb", "--format", "json", check=False)
    assert proc.returncode == 1, proc.stderr
    res = json.loads(proc.stdout)
    assert res["match"] == "name"
    first_node = onnx.load(str(framework)).graph.node[0].name
    assert res["first_divergent_node"] == first_node
    same = run("compare", tmp_path / "ra", tmp_path / "ra")
    assert json.loads(run("compare", tmp_path / "ra", tmp_path / "ra", "--format",
                          "json").stdout)["failed"] == 0 and same.returncode == 0
    # The Python call on the same directories agrees.
    api = mi.compare(tmp_path / "ra", tmp_path / "rb")
    assert api["first_divergent_node"] == first_node and api["failed"] == res["failed"]
    missing = run("compare", tmp_path / "ra", tmp_path / "nowhere", check=False)
    assert missing.returncode == 3 and "nowhere" in missing.stderr
    bad = run("compare", tmp_path / "ra", tmp_path / "rb", "--threshold", "cosine=1",
              check=False)
    assert bad.returncode == 2 and "unknown name 'cosine'" in bad.stderr
    no_run = run("compare", tmp_path / "ra", tmp_path / "rb", "--run-b", "7", check=False)
    assert no_run.returncode == 3 and "no run 7" in no_run.stderr


def test_report_matches_its_schema():
    import jsonschema
    from conftest import SCHEMAS
    schema = json.loads(committed(SCHEMAS / "compare.schema.json").read_text())
    framework, compiled = models("transformer")
    jsonschema.validate(dict(mi.compare(framework, compiled)), schema)
    jsonschema.validate(dict(mi.compare(FIXTURES / "msprobe" / "pytorch_statistics",
                                        FIXTURES / "msprobe" / "pytorch_statistics")), schema)


def test_runner_levels_compare_through_fused_from(tmp_path):
    """The runner's framework run and its --level compiled run of the same
    model (ONNX Runtime compiles it at "all" and keeps the optimized graph
    in the run directory): compare finds the compiled graph there and
    matches through fused_from."""
    framework, _ = models("transformer")
    for name, extra in (("fw", []), ("ort", ["--level", "compiled"])):
        proc = __import__("subprocess").run(
            [sys.executable, "-m", "model_inspector.runner", "--model", str(framework),
             "--out", str(tmp_path / name), "--keep", "tensor", *extra],
            capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    kept = onnx.load(str(tmp_path / "ort" / "ort" / "model.optimized.onnx")).graph
    assert any(n.op_type == "SkipLayerNormalization" for n in kept.node)
    res = json.loads(run("compare", tmp_path / "fw", tmp_path / "ort", "--format", "json").stdout)
    assert res["match"] == "fused_from" and res["pass"]
    assert res["groups_unmatched"] == 0 and res["groups_matched"] == len(res["groups"]) > 0
    api = mi.compare(tmp_path / "fw", tmp_path / "ort")
    assert api["groups_matched"] == res["groups_matched"]


def test_pytorch_against_its_onnx_export(tmp_path):
    """The ResNet-18 module probed through PyTorch hooks and its ONNX export
    on ONNX Runtime, tensors kept: one probe namespace, so compare pairs
    them by name; every ONNX node's output is compared and passes (the two
    runtimes differ only in summation order)."""
    import torch
    if str(FIXTURES) not in sys.path:
        sys.path.insert(0, str(FIXTURES))
    import make_models
    torch.set_num_threads(1)
    module = make_models.build_resnet18_slim()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    onnx_path = committed(FIXTURES / "resnet18" / "model.onnx")
    with mi.Inspector(module, x, run_dir=tmp_path / "torch", keep="tensor") as it, \
            mi.Inspector(model_path=str(onnx_path), run_dir=tmp_path / "ort",
                         keep="tensor") as io:
        with torch.no_grad():
            it.run(x, probes=["*"])
        io.run(x.numpy(), probes=["*"])
    res = mi.compare(tmp_path / "torch", tmp_path / "ort")
    assert res["match"] == "name"
    expected = {f"{n.name}:0" for n in onnx.load(str(onnx_path)).graph.node}
    compared = {e["probe_b"] for e in res["entries"] if e["verdict"] != "not_compared"}
    assert expected <= compared
    assert res["pass"], [e for e in res["entries"] if e["verdict"] == "fail"][:3]


def test_probe_sets_by_hand_against_numpy(tmp_path):
    """Probe sets built by hand (.npy files written by numpy) through
    _core.compare_probe_sets_json; every metric recomputed with numpy in
    float64, with msprobe's definitions (relative error against A, a zero
    reference taken as machine epsilon)."""
    from model_inspector import _core
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 1000)).astype(np.float32)
    a[0, :10] = 0  # zero references
    b = (a + rng.standard_normal(a.shape).astype(np.float32) * 1e-3).astype(np.float32)
    b[0, :5] = 0
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)

    def side(path):
        return {"label": str(path), "probes": [{
            "probe": "n:0", "node": "n", "dtype": "float32", "shape": list(a.shape),
            "array_path": str(path)}]}

    res = json.loads(_core.compare_probe_sets_json(side(tmp_path / "a.npy"),
                                                   side(tmp_path / "b.npy")))
    m = res["entries"][0]["metrics"]
    x, y = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    eps = np.finfo(float).eps
    rel = np.abs(y - x) / np.where(x == 0, eps, np.abs(x))
    assert m["cosine"] == pytest.approx(x @ y / np.linalg.norm(x) / np.linalg.norm(y), rel=1e-12)
    assert m["max_abs_err"] == pytest.approx(np.abs(y - x).max(), rel=1e-12)
    assert m["rmse"] == pytest.approx(np.sqrt(np.mean((y - x) ** 2)), rel=1e-9)
    assert m["max_rel_err"] == pytest.approx(rel.max(), rel=1e-12)
    assert m["mean_rel_err"] == pytest.approx(rel.mean(), rel=1e-9)
    assert m["one_thousandth_ratio"] == pytest.approx(np.mean(rel < 0.001), abs=1e-12)
    assert m["ten_thousandth_ratio"] == pytest.approx(np.mean(rel < 0.0001), abs=1e-12)
    assert m["relative_euclidean"] == pytest.approx(
        np.linalg.norm(y - x) / np.linalg.norm(x), rel=1e-9)
    # msprobe's rule by hand: cosine >= 0.99 here, so the verdict follows
    # max abs err <= 1.
    assert res["entries"][0]["verdict"] == ("pass" if np.abs(y - x).max() <= 1 else "fail")


def test_cli_side_of_another_kind(tmp_path):
    (tmp_path / "notes").mkdir()
    proc = run("compare", tmp_path / "notes", tmp_path / "notes", check=False)
    assert proc.returncode == 5 and "neither a run directory" in proc.stderr
