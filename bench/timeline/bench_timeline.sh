#!/usr/bin/env bash
# Timeline window queries of the UI server on a generated 1,000,000-task
# Kineto trace: our level-of-detail window (Session::TimelineWindow, MITW
# binary). Prints per query: tasks in the window, items and bytes sent,
# median ms. Our figures alone: no peer tool here answers these queries.
#
#   bench/timeline/bench_timeline.sh [build-dir] [tasks] [px]
#
# Environment: MI_BENCH_TIMELINE_TRACE (default /tmp/mi_timeline_1m.json;
# generated when missing, not committed).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
tasks="${2:-1000000}"
px="${3:-2000}"
out="${MI_BENCH_TIMELINE_TRACE:-/tmp/mi_timeline_1m.json}"
driver="$build/src/session/mi_bench_timeline"

[[ -x "$driver" ]] || { echo "build $driver first (ninja -C $build mi_bench_timeline; needs -DMI_BENCH=ON)"; exit 1; }
if [[ ! -f "$out" ]]; then
  echo "generating a ${tasks}-task trace at $out"
  /usr/bin/python3 "$here/make_timeline_trace.py" --tasks "$tasks" --out "$out"
fi
"$driver" "$out" "$px"
