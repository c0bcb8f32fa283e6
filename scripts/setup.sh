#!/usr/bin/env bash
# Installs every dependency (Debian packages, npm packages) idempotently,
# builds model-inspector, and runs the main job on the bundled demo run.
# Usage: scripts/setup.sh            (from the repository root or anywhere)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  # build
  cmake ninja-build g++ clang libclang-rt-14-dev clang-format clang-tidy
  libonnx-dev libprotobuf-dev protobuf-compiler libsimdjson-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev zlib1g-dev
  # torch_npu's DB export (importers/ascend_db)
  libsqlite3-dev
  # the Python package (python/, src/python): pybind11 and the headers of
  # Debian's python3, the interpreter it is built for and imported by
  pybind11-dev python3-dev
  # `open`: the embedded HTTP server (found through pkg-config)
  libcpp-httplib-dev pkg-config
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev python3-pytest python3-jsonschema
  python3-onnx python3-numpy
  # the timing tests' second implementation (test/python/timing_reference.py)
  python3-networkx
  # benchmark peer (bench/analysis, bench/trace): Holistic Trace Analysis's
  # own dependencies
  python3-pandas python3-plotly python3-pydot
  # layout benchmark peer (bench/layout): Graphviz dot
  graphviz
  # fixture generation (test/fixtures/generate.sh): the real tools
  python3-torch python3-torchvision
  # model_inspector.cluster.summarize over a Dask cluster (its test starts
  # a local process cluster)
  python3-distributed
  # training monitor: t-SNE projections of activations (PCA needs only numpy)
  python3-sklearn
  # web UI browser tests (the UI itself is built with Node 20 + npm, which
  # the machine provides; see the npm packages below); also what
  # `report --pdf` prints through
  chromium
  # xmllint: the JUnit reports of `diff --format junit` are validated
  # against test/fixtures/junit/junit.xsd
  libxml2-utils
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# ONNX Runtime (for regenerating fixtures and the ORT peer figures). Its
# install script would download GPU binaries, hence --ignore-scripts.
# dagre and elkjs: the layout benchmark's peers (bench/layout).
if command -v npm >/dev/null 2>&1; then
  if [ ! -d test/fixtures/node_modules/onnxruntime-node ]; then
    (cd test/fixtures && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
  if [ ! -d bench/layout/node_modules/elkjs ]; then
    (cd bench/layout && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
  # The web UI's build tools (vite, typescript) and playwright-core for its
  # browser tests; the C++ build runs vite and embeds the result.
  if [ ! -x web/node_modules/.bin/vite ] || [ ! -d web/node_modules/playwright-core ]; then
    (cd web && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
else
  echo "setup: npm not found; install Node.js 20 + npm (the web UI, fixtures and benchmarks need it)" >&2
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build model-inspector model_inspector_python

# `import model_inspector` for Debian's python3: a .pth file in its
# site-packages (/usr/local/lib/python3.11/dist-packages) names the package's
# folder in this build, so a rebuild is what Python imports next. Rewritten
# on every run (idempotent; a moved checkout is followed).
PTH_DIR=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
PTH_LINE="$(pwd)/build/python"
if [ "$(cat "$PTH_DIR/model_inspector.pth" 2>/dev/null)" != "$PTH_LINE" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO mkdir -p "$PTH_DIR"
  echo "$PTH_LINE" | $SUDO tee "$PTH_DIR/model_inspector.pth" >/dev/null
fi
/usr/bin/python3 -c 'import model_inspector as mi; print("setup: model_inspector", mi.__version__, "importable by /usr/bin/python3")'

echo
echo "== model-inspector summary test/fixtures/resnet18/ort_all (bundled demo run) =="
./build/src/cli/model-inspector summary test/fixtures/resnet18/ort_all
