#!/usr/bin/python3
"""Run digests of the fixture runs validate against
docs/reference/schemas/run-digest.schema.json.

    check_run_digest_schema.py MI_DIFF_TEST SOURCE_DIR

Runs the digest-writing test of MI_DIFF_TEST (src/diff/digest_test.cc,
DigestFiles.*) with MI_DIGEST_OUT set to a temporary folder, validates every
digest it wrote with jsonschema (Draft 2020-12), and checks that the schema
rejects what the reader rejects (an unknown field, a missing field, a
negative time).
"""

import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import jsonschema


def main():
    binary, root = sys.argv[1], pathlib.Path(sys.argv[2])
    schema = json.loads((root / "docs/reference/schemas/run-digest.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, MI_DIGEST_OUT=out)
        subprocess.run([binary, "--gtest_filter=DigestFiles.*"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        files = sorted(pathlib.Path(out).glob("*.midigest.json"))
        assert len(files) == 4, files
        for f in files:
            doc = json.loads(f.read_text())
            validator.validate(doc)
            nodes = sum(len(level["nodes"]) for level in doc["levels"])
            print(f"{f.name}: valid ({len(doc['levels'])} levels, {nodes} nodes)")
        doc = json.loads(files[0].read_text())
        assert doc["timing"]["run_count"] > 0 or any(
            json.loads(f.read_text())["timing"]["run_count"] > 0 for f in files)

        def rejected(mutate):
            bad = copy.deepcopy(doc)
            mutate(bad)
            return not validator.is_valid(bad)

        assert rejected(lambda d: d["meta"].__setitem__("extra", 1))
        assert rejected(lambda d: d["meta"].pop("label"))
        assert rejected(lambda d: d["timing"]["total"]["run_ns"].__setitem__(0, -1))
        assert rejected(lambda d: d.__setitem__("schema", "model-inspector/run-digest/2"))
        assert rejected(lambda d: d["levels"][0].__setitem__("level", "device"))
    print("run digests valid")


if __name__ == "__main__":
    main()
