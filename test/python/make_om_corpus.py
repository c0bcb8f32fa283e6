#!/usr/bin/python3
"""Writes the seed corpus of the .om fuzz target (test/fuzz/om/): small
hand-built .om files, good and bad, with the standard-library writer of
om_reference.py; and the bad ones, with a few more, into the bad-input
corpus (test/bad_inputs/om/, whose manifest.json says what each must
print). Run from anywhere: /usr/bin/python3 test/python/make_om_corpus.py
The committed corpus also holds a copy of a real sample (see
test/fixtures/om/README.md)."""
import pathlib
import struct

import om_reference as ref

OUT = pathlib.Path(__file__).resolve().parents[1] / "fuzz" / "om"
BAD = pathlib.Path(__file__).resolve().parents[1] / "bad_inputs" / "om"


def model(name="m", graph="g"):
    ops = [ref.op_def("data", "Data", 0),
           ref.op_def("w", "Const", 1, attrs={"value": ref.enc_bytes(12, ref.enc_bytes(
               1, ref.enc_int(11, 2048) + ref.enc_int(18, 512)))}),
           ref.op_def("relu", "Relu", 2, inputs=["data:0", "w:0"]),
           ref.op_def("out", "NetOutput", 3, inputs=["relu:0"])]
    return ref.model_def_bytes(name, [(graph, ops)])


def kernels():
    name = b"relu"
    return struct.pack("<III", 0x5D776EFD, len(name), 16) + name + b"\x7f" * 16


def parts():
    return [(ref.MODEL_DEF, model()), (ref.WEIGHTS_DATA, b"\0" * 64),
            (ref.TBE_KERNELS, kernels()),
            (ref.TASK_INFO, ref.kernel_task(2, "te_relu__kernel0", 1, 8))]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    tiny = ref.om_file(parts())
    files = {
        "tiny_table.om": tiny,
        "wide_table.om": ref.om_file(parts(), wide=True),
        "v1_header.om": ref.om_file(parts(), version=0x10000000),
        "truncated.om": tiny[:300],
        "pico.om": b"PICO" + tiny[4:],
        "encrypted.om": ref.om_file(parts(), encrypt=1),
    }
    beyond = bytearray(tiny)
    struct.pack_into("<I", beyond, 256 + 4 + 8, 1 << 20)
    files["beyond_eof.om"] = bytes(beyond)
    overlap = bytearray(tiny)
    struct.pack_into("<I", overlap, 256 + 4 + 12 + 4, 3)
    files["overlap.om"] = bytes(overlap)
    # A flow model: its FLOW_SUBMODEL (SubmodelDef: 1 name, 2 type,
    # 3 om_data) nests a whole .om.
    submodel = (ref.enc_bytes(1, "npu") + ref.enc_bytes(2, "NPU") +
                ref.enc_bytes(3, ref.om_file(parts(), wide=True)))
    files["flow.om"] = ref.om_file(
        [(ref.MODEL_DEF, model("flow", "flow_root")), (ref.FLOW_SUBMODEL, submodel)],
        model_type=3)
    for name, data in files.items():
        (OUT / name).write_bytes(data)
    bad = {name: files[name] for name in
           ("truncated.om", "pico.om", "encrypted.om", "beyond_eof.om", "overlap.om")}
    bad["empty.om"] = b""
    bad["om2_zip.om"] = b"PK\x03\x04" + tiny[4:]
    bad["size_mismatch.om"] = tiny + b"xx"
    BAD.mkdir(parents=True, exist_ok=True)
    for name, data in bad.items():
        (BAD / name).write_bytes(data)


if __name__ == "__main__":
    main()
