#!/usr/bin/env python3
"""Checks #include directions between modules (CONVENTIONS.md "Layering is
mechanical"). Each module may include only the modules listed for it;
public headers (include/model_inspector) only themselves and std.

Usage: check_layering.py REPO_ROOT
"""
import pathlib
import re
import sys

# module -> modules it may include ("model_inspector" = the public API).
ALLOWED = {
    "model_inspector": set(),
    "base": {"model_inspector"},
    # Write() of the public result types: the public headers only.
    "results": {"model_inspector"},
    # The front ends' encoders of results (JSON, tables).
    "encoders": {"base", "model_inspector"},
    "io": {"base", "model_inspector"},
    "diag": {"base", "model_inspector"},
    "model": {"base", "model_inspector"},
    "trace": {"base", "model_inspector"},
    # The training data model (a snapshot's steps, layers and metrics).
    "training": {"base", "model_inspector"},
    "importers/common": {"base", "io", "diag", "model", "trace", "training",
                         "model_inspector"},
    "importers/<format>": {"importers/common", "base", "io", "diag", "model", "trace",
                           "training", "model_inspector"},
    "importers": {"importers/common", "importers/<format>", "model_inspector"},
    "linker": {"base", "diag", "model", "trace", "model_inspector"},
    "analysis": {"base", "model", "trace", "training", "linker", "model_inspector"},
    "layout": {"base", "model", "model_inspector"},
    # The regression gate's core: digests of a run (model, trace, links, as
    # an analysis sees them) and diffs of digests.
    "diff": {"base", "model", "trace", "linker", "analysis", "model_inspector"},
    "session": {"base", "io", "diag", "model", "trace", "training", "importers", "importers/common",
                "importers/<format>", "linker", "analysis", "layout", "encoders",
                "diff", "probes", "model_inspector"},
    # The run history store: SQLite, digests through the public API.
    "history": {"base", "model_inspector"},
    # Tensor probes: the statistics kernel and the per-run probe store
    # (SQLite and .npy files), below the session that reads it.
    "probes": {"base", "model_inspector"},
    # Compare: tensor metrics, matching of two runs' probes, the report; the
    # levels through the public Session API, like a front end.
    "compare": {"base", "model_inspector"},
    "server": {"model_inspector", "base", "encoders"},
    # Reports of a diff or a run for people and CI systems (table, Markdown,
    # JUnit XML, HTML with layered drawings).
    "report": {"model_inspector", "base", "encoders", "layout"},
    "cli": {"model_inspector", "base", "server", "encoders", "report"},
    # The Python package's extension module: the public API and the JSON
    # encoder of results, as the other front ends.
    "python": {"model_inspector", "base", "encoders"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of_source(rel):
    parts = rel.parts
    if parts[0] == "include":
        return "model_inspector", None
    sub = parts[1]
    if sub == "importers":
        if len(parts) == 3:
            return "importers", None
        if parts[2] == "common":
            return "importers/common", None
        return "importers/<format>", parts[2]
    if sub == "analysis":
        return "analysis", parts[2] if len(parts) > 3 else None
    return sub, None


def module_of_include(path):
    parts = pathlib.PurePosixPath(path).parts
    if parts[0] == "model_inspector":
        return "model_inspector", None
    if parts[0] == "importers":
        if len(parts) == 2:
            return "importers", None
        if parts[1] == "common":
            return "importers/common", None
        return "importers/<format>", parts[1]
    if parts[0] == "analysis":
        return "analysis", parts[1] if len(parts) > 2 else None
    return parts[0], None


def main():
    root = pathlib.Path(sys.argv[1])
    errors = []
    files = [p for d in ("src", "include") for p in (root / d).rglob("*")
             if p.suffix in (".h", ".cc")]
    for path in files:
        rel = path.relative_to(root)
        # Tests, benchmarks, fuzzers and drivers may load real inputs through
        # any importer; the rule is for the libraries.
        if rel.stem.endswith(("_test", "_benchmark", "_fuzzer", "_main")):
            continue
        mod, sub = module_of_source(rel)
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            target, target_sub = module_of_include(inc)
            if target not in ALLOWED and target != mod:
                continue  # third-party or generated headers
            if target == mod:
                # Format folders never include a sibling format; analyses
                # never include each other (the registry, which lists them
                # all, sits above them).
                if (sub is not None and target_sub is not None and sub != target_sub
                        and not (mod == "analysis" and sub == "registry")):
                    errors.append(f"{rel}: includes sibling '{inc}'")
                continue
            if target not in ALLOWED[mod]:
                errors.append(f"{rel}: module '{mod}' may not include '{inc}'")
    for e in errors:
        print(e)
    print(f"{len(files) - len(errors)} passed, {len(errors)} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
