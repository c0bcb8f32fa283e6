#!/usr/bin/env bash
# Structural diff on large synthetic graphs: BLOCKS residual MLP blocks (5
# nodes each) against the same graph renamed, and with one block inserted.
#
#   bench/diff/bench_diff.sh [BLOCKS]   (default 20000: 100,001 nodes)
#
# Needs a build with -DMI_BENCH=ON (mi_bench_diff) and /usr/bin/python3
# with python3-onnx.
set -euo pipefail
cd "$(dirname "$0")/../.."
BLOCKS=${1:-20000}
BIN=${MI_BENCH_DIFF:-build/src/diff/mi_bench_diff}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
/usr/bin/python3 bench/diff/make_models.py "$WORK" "$BLOCKS"
echo "== renamed"
"$BIN" "$WORK/base.onnx" "$WORK/renamed.onnx"
echo "== one block inserted"
"$BIN" "$WORK/base.onnx" "$WORK/inserted.onnx"
