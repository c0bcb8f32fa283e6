#!/usr/bin/env python3
"""Builds the model_inspector wheel from the CMake build, with the standard
library alone (no PyPI, no setuptools: offline machines build it too).

    python/build_wheel.py [--build-dir build] [--out-dir dist]

builds the target `model_inspector_python` in the build folder (CMake, as
configured there), then packs BUILD/python/model_inspector (the extension
module and the package's .py files) into
model_inspector-VERSION-TAG-TAG-PLATFORM.whl: a zip with the package,
METADATA (from pyproject.toml), WHEEL and RECORD (sha256 of every file), as
https://packaging.python.org/specifications/binary-distribution-format/
describes. The wheel is for the interpreter running this script, which must
be the one the module was built for (CMake's Python3_EXECUTABLE, by default
/usr/bin/python3).

This file is also pyproject.toml's in-tree build backend (PEP 517), so
`python3 -m pip wheel --no-build-isolation --no-deps python/` works offline;
MI_BUILD_DIR names the CMake build folder (default: ../build beside python/),
`--config-settings no-build=1` packs it without running the build.
"""

import argparse
import base64
import hashlib
import importlib.machinery
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE = "model_inspector"


def _tags(package_dir):
    """(python tag, abi tag, platform tag) of this interpreter, after checking
    that the built extension module is for it."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]  # .cpython-311-x86_64-linux-gnu.so
    modules = sorted(package_dir.glob("_core*.so"))
    if [m.name for m in modules] != ["_core" + suffix]:
        raise SystemExit(
            f"build_wheel: expected {package_dir}/_core{suffix} (built for {sys.executable}), "
            f"found {[m.name for m in modules] or 'no extension module'}: build with "
            f"-DPython3_EXECUTABLE={sys.executable} or run this script with the interpreter "
            f"the module was built for")
    impl = sys.implementation.name
    if impl != "cpython":
        raise SystemExit(f"build_wheel: CPython only, this is {impl}")
    version = f"{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"cp{version}", f"cp{version}", platform


def _version(package_parent):
    # The core's own version (Version() in the C++ API) is the package's.
    # Run from the package's parent: from python/ (where pip runs a
    # backend), the source folder would shadow the built package.
    out = subprocess.run(
        [sys.executable, "-c", f"import {PACKAGE}; print({PACKAGE}.__version__)"],
        env={**os.environ, "PYTHONPATH": str(package_parent)}, cwd=package_parent,
        capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"build_wheel: the built package does not import: {out.stderr}")
    return out.stdout.strip()


def _metadata(project, version):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {version}",
             f"Summary: {project['description']}"]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lic = project.get("license", {})
    if "text" in lic:
        lines.append(f"License: {lic['text']}")
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for r in requirements:
            lines.append(f'Requires-Dist: {r}; extra == "{extra}"')
    readme = project.get("readme")
    body = ""
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (HERE / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _module_bytes(path):
    """The extension module without its debug sections (a RelWithDebInfo
    build's module is mostly DWARF: 135 MiB, 6 MiB without); as built when
    binutils' strip is missing or MI_WHEEL_KEEP_DEBUG is set."""
    if os.environ.get("MI_WHEEL_KEEP_DEBUG") or shutil.which("strip") is None:
        return path.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        stripped = pathlib.Path(tmp) / path.name
        subprocess.run(["strip", "--strip-debug", "-o", str(stripped), str(path)], check=True)
        return stripped.read_bytes()


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def pack(package_dir, out_dir):
    """Writes the wheel of a built package folder into out_dir; returns its
    path."""
    package_dir = pathlib.Path(package_dir).resolve()
    project = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    python_tag, abi_tag, platform_tag = _tags(package_dir)
    version = _version(package_dir.parent)
    dist = f"{project['name'].replace('-', '_')}-{version}"
    tag = f"{python_tag}-{abi_tag}-{platform_tag}"
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel_path = out_dir / f"{dist}-{tag}.whl"
    # The package's files: what the build folder holds for it, no caches.
    # Subpackages and data files (the Node runner script) included.
    files = sorted(p for p in package_dir.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts
                   and (p.suffix in (".py", ".mjs", ".json", ".sql") or p.name.startswith("_core")))
    info = f"{dist}.dist-info"
    entries = [(f"{PACKAGE}/{p.relative_to(package_dir).as_posix()}",
                _module_bytes(p) if p.suffix == ".so" else p.read_bytes())
               for p in files]
    entries.append((f"{info}/METADATA", _metadata(project, version).encode()))
    entries.append((f"{info}/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: model-inspector build_wheel.py\n"
        f"Root-Is-Purelib: false\nTag: {tag}\n").encode()))
    entries.append((f"{info}/top_level.txt", f"{PACKAGE}\n".encode()))
    record = "\n".join(_record_line(n, d) for n, d in entries) + f"\n{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode()))
    tmp = wheel_path.with_suffix(".whl.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            # Fixed times and modes: the same build gives the same bytes.
            item = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            item.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(item, data)
    tmp.replace(wheel_path)
    return wheel_path


def build(build_dir, out_dir):
    """Builds the package in a configured CMake build folder, then packs it."""
    build_dir = pathlib.Path(build_dir).resolve()
    if not (build_dir / "CMakeCache.txt").exists():
        raise SystemExit(f"build_wheel: {build_dir} is not a configured CMake build folder "
                         "(scripts/setup.sh configures ./build)")
    subprocess.run(["cmake", "--build", str(build_dir), "--target", "model_inspector_python"],
                   check=True)
    return pack(build_dir / "python" / PACKAGE, out_dir)


# PEP 517 hooks (pyproject.toml: build-backend = "build_wheel").
def _default_build_dir():
    return os.environ.get("MI_BUILD_DIR", str(HERE.parent / "build"))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    # `pip wheel --config-settings no-build=1`: pack what is built, as
    # --no-build does.
    if (config_settings or {}).get("no-build"):
        package = pathlib.Path(_default_build_dir()) / "python" / PACKAGE
        return pack(package, wheel_directory).name
    return build(_default_build_dir(), wheel_directory).name


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=_default_build_dir(),
                        help="the configured CMake build folder (default: %(default)s)")
    parser.add_argument("--out-dir", default="dist", help="where the wheel goes")
    parser.add_argument("--no-build", action="store_true",
                        help="pack the package as built, without running the build")
    args = parser.parse_args()
    if args.no_build:
        path = pack(pathlib.Path(args.build_dir) / "python" / PACKAGE, args.out_dir)
    else:
        path = build(args.build_dir, args.out_dir)
    print(path)


if __name__ == "__main__":
    main()
