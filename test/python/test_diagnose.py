"""`diagnose` end to end (rules, frequent sequences, per-block time): the
rule reference is generated from the rule table, the JSON validates against
its schema, the rules that fire on the real fixtures are pinned (framework
vs compiled graphs, the Ascend sample), options are validated, and the
transformer's layers come out as one block family with per-layer time."""
import json

import jsonschema
import pytest

from conftest import FIXTURES, ROOT, SAMPLES, SCHEMAS, committed, run

SCHEMA = json.loads((SCHEMAS / "findings.schema.json").read_text())
ASCEND_LEVEL1 = committed(SAMPLES / "ascend" / "msinsight_pt_text_level1_rank0")


def diagnose(*inputs, extra=()):
    proc = run("diagnose", "--quiet", *inputs, "--json", "--sequences", "--blocks",
               *extra)
    doc = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    return doc


def fired(doc):
    return sorted(f["rule"] for f in doc["findings"])


def test_rules_reference_is_generated_from_the_table():
    generated = run("diagnose", "--list-rules").stdout
    assert (ROOT / "docs" / "reference" / "diagnosis-rules.md").read_text() == generated


def test_every_rule_is_documented_with_a_section():
    text = run("diagnose", "--list-rules").stdout
    for rule in ["layout_conversion_share", "data_movement_share",
                 "unfused_conv_bn_activation", "unfused_matmul_add",
                 "unfused_layer_norm", "unfused_gelu", "redundant_transpose_reshape",
                 "dynamic_input_shape", "eager_launches"]:
        assert f"## `{rule}`" in text


# Rules of the diagnosis module; the timing rules (host_sync_gap, ...) are
# pinned by the timing tests.
OWN_RULES = {"layout_conversion_share", "data_movement_share",
             "unfused_conv_bn_activation", "unfused_matmul_add", "unfused_layer_norm",
             "unfused_gelu", "redundant_transpose_reshape", "dynamic_input_shape",
             "eager_launches"}


def own(doc):
    return [f for f in doc["findings"] if f["rule"] in OWN_RULES]


def ort_kernel_events(path):
    events = json.loads(path.read_text())
    return [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]


def test_resnet18_ort_all_layout_conversions_match_the_profile():
    doc = diagnose(FIXTURES / "resnet18" / "ort_all")
    findings = own(doc)
    assert [f["rule"] for f in findings] == ["layout_conversion_share"]
    # Independently: ReorderOutput kernel time over all kernel time.
    kernels = ort_kernel_events(FIXTURES / "resnet18" / "ort_all" / "onnxruntime_profile.json")
    reorder = sum(e["dur"] for e in kernels if e["args"]["op_name"] == "ReorderOutput")
    total = sum(e["dur"] for e in kernels)
    f = findings[0]
    assert f["severity"] == "warning"
    assert f["time_ns"] == reorder * 1000
    assert f["share"] == pytest.approx(reorder / total, abs=1e-9)
    assert len(f["tasks"]) == sum(1 for e in kernels if e["args"]["op_name"] == "ReorderOutput")
    assert "ReorderOutput" in f["message"]


def test_resnet18_ort_extended_leaves_conv_add_relu_unfused():
    findings = own(diagnose(FIXTURES / "resnet18" / "ort_extended"))
    assert [f["rule"] for f in findings] == ["unfused_conv_bn_activation"]
    f = findings[0]
    # 8 residual blocks: conv2 -> Add -> Relu, plus the 3 downsample convs
    # feeding the same Adds; ORT's "all" level (NCHWc) fuses them, "extended"
    # does not.
    assert "11 x Conv -> Add -> Relu" in f["message"]
    assert "compiled graph" in f["message"]
    # The downsample convs share their block's Add and Relu: 27 distinct
    # nodes (8 x 3 + 3).
    assert "27 nodes" in f["message"]
    assert f["severity"] == "warning" and len(f["nodes"]) == 27 and f["time_ns"] > 0


@pytest.mark.parametrize("level", ["ort_all", "ort_extended"])
def test_transformer_compiled_graphs_have_no_pattern_findings(level):
    # ONNX Runtime fused LayerNorm (SkipLayerNormalization), GELU and the
    # bias Adds (Gemm): nothing is left for the pattern rules.
    assert own(diagnose(FIXTURES / "transformer" / level)) == []


def test_transformer_framework_graph_patterns_match_the_model():
    import onnx
    model = onnx.load(str(FIXTURES / "transformer" / "model.onnx"))
    nodes = model.graph.node
    initializers = {i.name for i in model.graph.initializer}
    producers = {o: n for n in nodes for o in n.output}
    consumers = {}
    for n in nodes:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    bias_adds = sum(
        1 for n in nodes if n.op_type == "MatMul"
        and len(consumers.get(n.output[0], [])) == 1
        and consumers[n.output[0]][0].op_type == "Add"
        and any(i in initializers or (i in producers and producers[i].op_type == "Constant")
                for i in consumers[n.output[0]][0].input if i != n.output[0]))
    expected = {"unfused_gelu": sum(n.op_type == "Erf" for n in nodes),
                "unfused_layer_norm": sum(n.op_type == "Sqrt" for n in nodes),
                "unfused_matmul_add": bias_adds}
    assert expected == {"unfused_gelu": 2, "unfused_layer_norm": 4, "unfused_matmul_add": 12}
    doc = diagnose(FIXTURES / "transformer" / "model.onnx",
                   FIXTURES / "transformer" / "ort_extended" / "onnxruntime_profile.json")
    findings = own(doc)
    assert sorted(f["rule"] for f in findings) == sorted(expected)
    for f in findings:
        assert f["severity"] == "info"  # framework graph only
        assert "framework graph only" in f["message"]
        assert f["message"].startswith(f"{expected[f['rule']]} ")


def test_ascend_sample_layout_conversions_match_op_statistic():
    import csv
    doc = diagnose(ASCEND_LEVEL1)
    findings = {f["rule"]: f for f in own(doc)}
    assert sorted(findings) == ["data_movement_share", "layout_conversion_share"]
    # The sample's own op_statistic.csv: TransData's share of op time.
    with open(ASCEND_LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    total = sum(float(r["Total Time(us)"]) for r in rows)
    trans = sum(float(r["Total Time(us)"]) for r in rows if r["OP Type"] == "TransData")
    layout = findings["layout_conversion_share"]
    assert layout["share"] == pytest.approx(trans / total, abs=0.005)
    assert "TransData" in layout["message"]
    # torch_npu eager mode, but most of its 191 kernels outlast their launch
    # call: the eager rule stays silent on this small sample.
    assert "eager_launches" not in findings


def test_thresholds_and_disable():
    run_dir = FIXTURES / "resnet18" / "ort_all"
    assert own(diagnose(run_dir, extra=("--threshold", "layout_conversion_share=0.1"))) == []
    assert own(diagnose(run_dir, extra=("--disable", "layout_conversion_share"))) == []
    f = own(diagnose(run_dir, extra=("--threshold", "layout_conversion_share=0.09")))
    assert [x["rule"] for x in f] == ["layout_conversion_share"]
    assert f[0]["threshold"] == 0.09


@pytest.mark.parametrize("args,message", [
    (("--threshold", "nope=1"), "no rule 'nope'"),
    (("--threshold", "layout_conversion_share"), "expected RULE=VALUE"),
    (("--threshold", "layout_conversion_share=2"), "between 0 and 1"),
    (("--disable", "typo"), "--disable: no rule 'typo'"),
    (("--sequences", "--sequence-max-length", "40"), "<= 32"),
])
def test_bad_options_are_usage_errors(args, message):
    proc = run("diagnose", "--quiet", FIXTURES / "resnet18" / "ort_all", *args, check=False)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert proc.stdout == ""


def test_sequences_match_the_profile():
    doc = diagnose(FIXTURES / "resnet18" / "ort_all")
    top = doc["sequences"][0]
    assert top["symbols"] == ["Conv", "ReorderOutput"]
    # Independently: adjacent (Conv, ReorderOutput) kernels in the profile.
    kernels = sorted(ort_kernel_events(FIXTURES / "resnet18" / "ort_all" /
                                       "onnxruntime_profile.json"), key=lambda e: e["ts"])
    ops = [e["args"]["op_name"] for e in kernels]
    pairs = [i for i in range(len(ops) - 1) if ops[i:i + 2] == ["Conv", "ReorderOutput"]]
    assert top["count"] == len(pairs) == 15
    assert top["total_ns"] == 1000 * sum(kernels[i]["dur"] + kernels[i + 1]["dur"] for i in pairs)
    assert doc["sequences"] == sorted(doc["sequences"], key=lambda s: -s["total_ns"])


def test_transformer_layers_are_one_block_family():
    doc = diagnose(FIXTURES / "transformer" / "ort_all")
    layers = [b for b in doc["blocks"] if b["label"] == "layers.0"]
    assert len(layers) == 1
    family = layers[0]
    assert family["level"] == "framework"
    assert [i["path"] for i in family["instances"]] == ["layers.0", "layers.1"]
    assert all(i["total_ns"] > 0 and i["node_count"] == family["nodes_per_instance"]
               for i in family["instances"])
    assert family["total_ns"] == sum(i["total_ns"] for i in family["instances"])
    # The two layers hold most of the model's work: every kernel except the
    # few outside them, and never more than all kernels together.
    kernels = ort_kernel_events(FIXTURES / "transformer" / "ort_all" / "onnxruntime_profile.json")
    total_ns = 1000 * sum(e["dur"] for e in kernels)
    assert 0.5 * total_ns < family["total_ns"] <= total_ns
    slowest = family["instances"][family["slowest"]]["total_ns"]
    assert slowest == max(i["total_ns"] for i in family["instances"])


def test_block_groups_are_the_layout_views_groups(tmp_path):
    run_dir = FIXTURES / "transformer" / "ort_all"
    doc = diagnose(run_dir)
    out = tmp_path / "layout.json"
    run("render", "--quiet", run_dir, "--level", "framework", "--format", "json", "--out", out)
    groups = json.loads(out.read_text())["groups"]
    for family in doc["blocks"]:
        first = family["instances"][0]["group"]
        for inst in family["instances"]:
            g = groups[inst["group"]]
            assert g["label"] == inst["path"].split("/")[-1]
            assert g["node_count"] == inst["node_count"]
            # All instances are marked as repeats of the same group.
            assert inst["group"] == first or g["repeat_of"] == first
