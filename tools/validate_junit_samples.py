#!/usr/bin/env python3
"""Validates the JUnit reports of the hand-filled diff reports
(src/report/report_samples.cc, written by `diff_report_samples write DIR`)
against test/fixtures/junit/junit.xsd with xmllint (Debian's libxml2-utils),
checks their counts against the samples' rules (written out below), and
checks that the schema rejects a report that breaks the format.

Usage: validate_junit_samples.py DIFF_REPORT_SAMPLES JUNIT_XSD
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

# name -> (tests, failures, skipped), from report_samples.cc: regressed has
# 4 rules (total>+5% and overlap-lost>0 crossed, op:Relu>+1% within the
# noise, nodes!=0 passed); clean 1 rule passed; structure_only nodes!=0
# crossed and total>+5% not measurable (no trace); nasty = regressed.
EXPECTED = {
    "regressed": (4, 2, 0),
    "clean": (1, 0, 0),
    "structure_only": (2, 1, 1),
    "nasty": (4, 2, 0),
}


def xmllint(xsd, path):
    return subprocess.run(["xmllint", "--noout", "--schema", str(xsd), str(path)],
                          capture_output=True, text=True)


def main():
    exe, xsd = sys.argv[1], pathlib.Path(sys.argv[2])
    if shutil.which("xmllint") is None:
        sys.exit("xmllint not found: install Debian's libxml2-utils (scripts/setup.sh)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([exe, "write", tmp], check=True)
        for name, (tests, failures, skipped) in EXPECTED.items():
            path = pathlib.Path(tmp) / f"{name}.xml"
            proc = xmllint(xsd, path)
            if proc.returncode != 0:
                sys.exit(f"{name}.xml does not validate:\n{proc.stderr}")
            root = ET.parse(path).getroot()
            suite = root.find("testsuite")
            cases = suite.findall("testcase")
            got = (len(cases), sum(1 for c in cases if c.find("failure") is not None),
                   sum(1 for c in cases if c.find("skipped") is not None))
            if got != (tests, failures, skipped):
                sys.exit(f"{name}: testcases/failures/skipped {got}, expected "
                         f"{(tests, failures, skipped)}")
            for el in (root, suite):
                attrs = (int(el.get("tests")), int(el.get("failures")), int(el.get("skipped")))
                if attrs != got:
                    sys.exit(f"{name}: <{el.tag}> counts {attrs} != test cases {got}")
            print(f"{name}.xml: valid, {got[0]} tests, {got[1]} failures, {got[2]} skipped")
        # The nasty names survive the round trip through XML unchanged
        # except for what XML cannot hold (U+0001 and the byte 0xFF become
        # U+FFFD).
        nasty = ET.parse(pathlib.Path(tmp) / "nasty.xml").getroot()
        want = "op:a<b>&\"c'\n\ufffdz\ufffd</testcase><script>alert(1)</script>>+5%"
        names = [c.get("name") for c in nasty.iter("testcase")]
        if want not in names:
            sys.exit(f"nasty.xml: the escaped rule name did not round-trip: {names}")
        # The schema is strict enough to fail.
        broken = pathlib.Path(tmp) / "broken.xml"
        text = (pathlib.Path(tmp) / "regressed.xml").read_text()
        for what, bad in [
                ("a testcase without a name", text.replace('<testcase name="nodes!=0"', "<testcase", 1)),
                ("a negative count", text.replace('tests="4"', 'tests="-4"', 1)),
                ("an unknown element", text.replace("<properties>", "<properties><bogus/>", 1))]:
            broken.write_text(bad)
            if xmllint(xsd, broken).returncode == 0:
                sys.exit(f"the schema accepted {what}")
        print("3 broken reports rejected")


if __name__ == "__main__":
    main()
