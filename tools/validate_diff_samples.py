#!/usr/bin/env python3
"""Validates the hand-filled diff reports (src/report/report_samples.cc,
printed by `diff_report_samples json`) against docs/reference/schemas/diff.schema.json,
and checks that the schema is strict enough to fail: a report missing a
field, with an unknown field, or with a wrong verdict is rejected.

Usage: validate_diff_samples.py DIFF_REPORT_SAMPLES SCHEMA
"""
import copy
import json
import subprocess
import sys

import jsonschema


def main():
    exe, schema_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    out = subprocess.run([exe, "json"], check=True, capture_output=True).stdout
    docs = {}
    for line in out.decode("utf-8").splitlines():
        name, text = line.split("\t", 1)
        docs[name] = json.loads(text)
    expected = {"regressed", "clean", "structure_only", "nasty"}
    if set(docs) != expected:
        sys.exit(f"expected samples {sorted(expected)}, got {sorted(docs)}")
    for name, doc in docs.items():
        validator.validate(doc)
        print(f"{name}: valid")
    # The structure-only report has no timing: null, not an empty object.
    if docs["structure_only"]["timing"] is not None:
        sys.exit("structure_only: timing should be null")
    # Node ids not known (-1) are null.
    removed = docs["regressed"]["structure"][0]["changes"][1]
    if removed["kind"] != "removed" or removed["new_node_id"] is not None:
        sys.exit(f"regressed: a removed node's new_node_id should be null: {removed}")
    # The schema rejects what it should.
    bad = []
    d = copy.deepcopy(docs["regressed"]); del d["failed"]; bad.append(("missing failed", d))
    d = copy.deepcopy(docs["regressed"]); d["extra"] = 1; bad.append(("unknown field", d))
    d = copy.deepcopy(docs["regressed"]); d["timing"]["total"]["verdict"] = "worse"; bad.append(("verdict", d))
    d = copy.deepcopy(docs["regressed"]); d["structure"][0]["changes"][0]["kind"] = "moved"; bad.append(("change kind", d))
    d = copy.deepcopy(docs["regressed"]); d["rules"][0]["crossed"] = "yes"; bad.append(("crossed type", d))
    for what, doc in bad:
        if validator.is_valid(doc):
            sys.exit(f"the schema accepted a report with a wrong {what}")
    print(f"{len(bad)} broken reports rejected")


if __name__ == "__main__":
    main()
