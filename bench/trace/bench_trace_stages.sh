#!/usr/bin/env bash
# Big traces side by side in one run (issue 20): simdjson alone, our
# importer stage by stage, `summary` with every analysis, json.load and
# HTA (load + kernel breakdown), on generated traces built from varied real
# Kineto traces (make_big_trace.py: blocks of the repository's real traces
# plus the shared Qwen traces, each block time-warped and renumbered; not one
# trace copied).
#
#   bench/trace/bench_trace_stages.sh [build-dir] [sizes...]
#        default sizes: 587e6 5e9 (bytes of JSON; a file stops at the first
#        block boundary past its size)
#
# Files are written to MI_BENCH_DIR (default /tmp) once and reused; 5 GB
# needs ~6 GB free there. HTA comes from the shared folder (bench/shared_dir.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
shift || true
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(587e6 5e9)
source "$repo/bench/shared_dir.sh"
q=samples/traces/kineto/tracelens
mi_shared_require peers/hta/hta/trace_analysis.py \
  "$q/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz" \
  "$q/mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
for t in mi_bench_trace_stages; do
  [[ -x "$build/src/session/$t" ]] || { echo "build $t first (ninja -C $build $t)" >&2; exit 2; }
done
dir="${MI_BENCH_DIR:-/tmp}"
traces=()
for s in "${sizes[@]}"; do
  out="$dir/mi_big_trace_$s.json"
  if [[ ! -f "$out" ]]; then
    nice -n 10 /usr/bin/python3 "$here/make_big_trace.py" --target-bytes "$s" --out "$out" \
      --extra-trace "$MI_SHARED/$q/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz" \
      --extra-trace "$MI_SHARED/$q/mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
  fi
  traces+=("$out")
done
exec /usr/bin/python3 "$here/bench_trace_stages.py" --build "$build" \
  --hta "$MI_SHARED/peers/hta" "${traces[@]}"
