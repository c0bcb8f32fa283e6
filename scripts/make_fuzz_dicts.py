#!/usr/bin/env python3
"""Writes the libFuzzer dictionaries test/fuzz/dicts/<target>.dict from the
committed fuzz corpora: JSON syntax plus the object keys and short string
values (JSON formats), protobuf-text field names and enum values (GE dumps),
identifiers of the text forms (ONNX), header columns (CSV formats).
Run from the repository root after the corpus grows new fields."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1] / "test" / "fuzz"


def esc(s):
    out = ""
    for ch in s:
        if ch in '"\\':
            out += "\\" + ch
        elif 32 <= ord(ch) < 127:
            out += ch
        else:
            out += "\\x%02x" % ord(ch)
    return out


def write(name, header, tokens):
    toks = sorted(set(t for t in tokens if 0 < len(t) <= 40))
    lines = ["# " + line for line in header] + ['"%s"' % esc(t) for t in toks]
    (ROOT / "dicts" / f"{name}.dict").write_text("\n".join(lines) + "\n")
    print(name, len(toks))


def files(d):
    return sorted(p for p in (ROOT / d).rglob("*") if p.is_file())


JSON_SYNTAX = ["{", "}", "[", "]", ":", ",", '"', "true", "false", "null", "-1", "1e308",
               "\\u0000", "\\\""]


def main():
    (ROOT / "dicts").mkdir(exist_ok=True)
    for t in ["chrome_trace", "ascend_timeline", "atc_json", "ascend_communication",
              "cluster_summary", "run_digest"]:
        keys = set()
        for p in files(t):
            text = p.read_text(errors="replace")
            keys |= {'"%s"' % k for k in re.findall(r'"([^"\\]{1,38})"\s*:', text)}
            keys |= {'"%s"' % k for k in re.findall(r':\s*"([^"\\]{1,12})"', text)}
        write(t, [f"libFuzzer dictionary for {t}_fuzzer: JSON syntax, plus every object key",
                  f"and short string value found in test/fuzz/{t}/ (keys quoted as they appear).",
                  "Written by scripts/make_fuzz_dicts.py."], keys | set(JSON_SYNTAX))
    for t in ["ge_proto_text", "ge_onnx_text"]:
        toks = set()
        for p in files(t):
            text = p.read_text(errors="replace")[:20000]
            toks |= {k + ":" for k in re.findall(r'\b([A-Za-z_][A-Za-z0-9_]*)\s*:', text)}
            toks |= {k + " {" for k in re.findall(r'\b([A-Za-z_][A-Za-z0-9_]*)\s*\{', text)}
            toks |= set(re.findall(r':\s*([A-Z][A-Z0-9_]+)\b', text))
        toks |= {"{", "}", "<", ">", '"', "\\", "#", "\n", "-", "inf", "nan", "0x", "1e999"}
        write(t, [f"libFuzzer dictionary for {t}_fuzzer: protobuf text syntax, plus the field",
                  f"names and enum values found in test/fuzz/{t}/.",
                  "Written by scripts/make_fuzz_dicts.py."], toks)
    toks = set()
    for p in files("onnx"):
        if p.suffix == ".onnx":
            continue  # binary protobuf: its tags are not words
        text = p.read_text(errors="replace")
        toks |= {k for k in re.findall(r'\b([A-Za-z_][A-Za-z0-9_]*)\b', text) if len(k) > 2}
    toks |= {"<", ">", "{", "}", "(", ")", "=", ",", ":", "[", "]", '"'}
    write("onnx", ["libFuzzer dictionary for onnx_fuzzer: identifiers and punctuation of the",
                   "ONNX text, protobuf text and JSON models in test/fuzz/onnx/ (binary models",
                   "are mutated as bytes). Written by scripts/make_fuzz_dicts.py."], toks)
    for t in ["ascend_csv", "trace_event_csv", "ascend_step_trace"]:
        toks = set()
        for p in files(t):
            lines = p.read_text(errors="replace").splitlines()
            if lines:
                toks |= {c.strip() for c in lines[0].split(",")}
        toks |= {",", '"', '""', "\r\n", "\n", "N/A", "-1", "1e308", "nan"}
        write(t, [f"libFuzzer dictionary for {t}_fuzzer: CSV syntax, plus the header columns",
                  f"of the files in test/fuzz/{t}/. Written by scripts/make_fuzz_dicts.py."], toks)


if __name__ == "__main__":
    main()
