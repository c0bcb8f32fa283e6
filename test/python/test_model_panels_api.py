"""The model-properties and weight-peek routes of `model-inspector open`
(GET .../properties, GET .../values; docs/reference/http-api.md) against
python3-onnx as the independent reader: every initializer of the demo's
framework model, and a model written here with external data, int64_data,
float16 raw data, metadata_props and a weight larger than the bounded
statistics read."""
import json
import urllib.parse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from conftest import FIXTURES, committed
from test_server import Server

STATS_LIMIT = 1 << 20  # Session::kValueStatsLimit: statistics read at most this many elements


def get(server, path, status=200):
    code, _, body = server.request(path)
    assert code == status, (path, code, body[:300])
    return json.loads(body)


def values(server, level, name, limit):
    q = urllib.parse.urlencode({"name": name, "limit": limit})
    return get(server, f"/api/runs/0/levels/{level}/values?{q}")


def check_against_numpy(got, tensor):
    a = numpy_helper.to_array(tensor)
    flat = a.reshape(-1)
    assert got["shape"] == list(a.shape)
    assert got["elements"] == flat.size
    n = len(got["values"])
    assert n == min(flat.size, 10000)
    if np.issubdtype(a.dtype, np.integer):
        assert got["values"] == [int(x) for x in flat[:n]]
    else:
        # JSON carries the float32/float16 value widened to double exactly.
        assert got["values"] == [float(x) for x in flat[:n].astype(np.float64)]
    counted = flat[:STATS_LIMIT].astype(np.float64)
    assert got["stats"]["count"] == counted.size
    assert got["stats"]["complete"] == (counted.size == flat.size)
    assert got["stats"]["min"] == counted.min()
    assert got["stats"]["max"] == counted.max()
    assert abs(got["stats"]["mean"] - counted.mean()) <= 1e-9 * max(1.0, abs(counted.mean()))


def test_demo_weights_match_numpy_helper():
    model = onnx.load(str(committed(FIXTURES / "resnet18" / "model.onnx")))
    s = Server()  # no PATH: the demo run
    try:
        runs = get(s, "/api/runs")["runs"]
        assert "framework" in runs[0]["levels"]
        props = get(s, "/api/runs/0/levels/framework/properties")
        assert props["onnx"]["ir_version"] == model.ir_version
        assert props["producer"] == f"{model.producer_name} {model.producer_version}"
        assert [(o["domain"], o["version"]) for o in props["opset_imports"]] == \
            [(o.domain, o.version) for o in model.opset_import]
        assert {w["name"] for w in props["initializers"]} == {t.name for t in model.graph.initializer}
        for t in model.graph.initializer:
            got = values(s, "framework", t.name, 10000)
            assert got["dtype"] == "float32", t.name
            check_against_numpy(got, t)
    finally:
        s.close()


def test_external_data_and_other_encodings(tmp_path):
    rng = np.random.default_rng(7)
    big = rng.standard_normal((1100, 1000)).astype(np.float32)   # past the bounded statistics read
    small = rng.standard_normal((64, 32)).astype(np.float32)
    ints = np.array([3, -2, 1 << 40, 0, 9], dtype=np.int64)
    halfs = np.array([0.5, -1.25, 65504, 1e-4, 0, 3.140625, -0.0], dtype=np.float16)
    inits = [numpy_helper.from_array(big, "big"), numpy_helper.from_array(small, "small"),
             helper.make_tensor("ints", TensorProto.INT64, [5], ints.tolist()),  # int64_data, not raw
             numpy_helper.from_array(halfs, "halfs")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1000])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1100])
    graph = helper.make_graph([helper.make_node("Gemm", ["x", "big"], ["y"], name="fc", transB=1),
                               helper.make_node("Identity", ["small"], ["s"], name="keep_small"),
                               helper.make_node("Identity", ["ints"], ["i"], name="keep_ints"),
                               helper.make_node("Identity", ["halfs"], ["h"], name="keep_halfs")],
                              "peek", [x], [y, helper.make_tensor_value_info("s", TensorProto.FLOAT, [64, 32]),
                                            helper.make_tensor_value_info("i", TensorProto.INT64, [5]),
                                            helper.make_tensor_value_info("h", TensorProto.FLOAT16, [7])],
                              initializer=inits)
    model = helper.make_model(graph, producer_name="peek-test", producer_version="0.1",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.model_version = 3
    model.domain = "test.domain"
    model.doc_string = "a model for the weight peek"
    helper.set_model_props(model, {"author": "test", "license": "MIT"})
    path = tmp_path / "peek.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=1024)
    # What python3-onnx reads back (external data loaded from weights.bin).
    reread = onnx.load(str(path))
    by_name = {t.name: t for t in reread.graph.initializer}
    raw = onnx.load(str(path), load_external_data=False)
    ext = {t.name: {e.key: e.value for e in t.external_data} for t in raw.graph.initializer
           if t.data_location == TensorProto.EXTERNAL}
    assert set(ext) == {"big", "small"}, ext  # the fixture is what the test means

    s = Server(path)
    try:
        props = get(s, "/api/runs/0/levels/framework/properties")
        assert props["onnx"]["model_version"] == 3
        assert props["onnx"]["domain"] == "test.domain"
        assert props["onnx"]["doc_string"] == "a model for the weight peek"
        assert {(m["key"], m["value"]) for m in props["onnx"]["metadata_props"]} == {("author", "test"), ("license", "MIT")}
        assert props["producer"] == "peek-test 0.1"
        ws = {w["name"]: w for w in props["initializers"]}
        assert ws["big"]["external"] == "weights.bin"
        assert ws["big"]["type"] == "float32[1100,1000]"

        for name in ("big", "small"):
            got = values(s, "framework", name, 10000)
            assert got["storage"] == "external"
            assert got["external"]["location"] == "weights.bin"
            assert got["external"]["offset"] == int(ext[name].get("offset", 0))
            check_against_numpy(got, by_name[name])
        got = values(s, "framework", "big", 5)
        assert got["stats"]["complete"] is False and got["stats"]["count"] == STATS_LIMIT

        got = values(s, "framework", "ints", 100)
        assert got["storage"] == "int64_data" and got["dtype"] == "int64"
        check_against_numpy(got, by_name["ints"])
        got = values(s, "framework", "halfs", 100)
        assert got["storage"] == "raw_data" and got["dtype"] == "float16"
        check_against_numpy(got, by_name["halfs"])

        code, _, body = s.request("/api/runs/0/levels/framework/values?name=x")
        assert code == 404, body  # a graph input, not a weight
    finally:
        s.close()


def test_external_data_outside_the_model_folder_is_refused(tmp_path):
    """A weight whose external_data location climbs out of the model's
    folder (or is absolute) is not read: 400, naming the location."""
    (tmp_path / "secret.bin").write_bytes(np.arange(16, dtype=np.float32).tobytes())
    inner = tmp_path / "model"
    inner.mkdir()
    w = numpy_helper.from_array(np.zeros(16, dtype=np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for location in ("../secret.bin", str(tmp_path / "secret.bin")):
        del w.external_data[:]
        w.external_data.add(key="location", value=location)
        graph = helper.make_graph([helper.make_node("Identity", ["w"], ["y"], name="keep")], "g", [],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])], initializer=[w])
        path = inner / "escape.onnx"
        onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
        s = Server(path)
        try:
            code, _, body = s.request("/api/runs/0/levels/framework/values?name=w")
            assert code == 400, body
            assert location in json.loads(body)["error"]["message"]
        finally:
            s.close()
