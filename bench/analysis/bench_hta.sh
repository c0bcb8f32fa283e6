#!/usr/bin/env bash
# model-inspector vs Holistic Trace Analysis (HTA) on the same real PyTorch
# traces: load, kernel breakdown, idle time, critical path, timed the same
# way, answers cross-checked (bench/analysis/bench_hta.py says how).
#
#   bench/analysis/bench_hta.sh [build-dir] [repeat]     (default: build, 3)
#
# Reads HTA (peers/hta) and the Kineto traces (samples/traces/kineto) from
# the workspace's shared folder (bench/shared_dir.sh; MI_SHARED overrides).
# HTA needs Debian's python3-pandas python3-plotly python3-networkx
# python3-pydot. MI_BENCH_TRACES="a.json.gz b.json.gz" runs other traces.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
repeat="${2:-3}"
source "$repo/bench/shared_dir.sh"
mi_shared_require peers/hta/hta/trace_analysis.py samples/traces/kineto
driver="$build/src/session/mi_bench_analyses"
[[ -x "$driver" ]] || { echo "build $driver first (ninja -C $build mi_bench_analyses)" >&2; exit 2; }
/usr/bin/python3 -c "import pandas, plotly, networkx" 2>/dev/null || {
  echo "HTA needs python3-pandas python3-plotly python3-networkx python3-pydot (apt-get install)" >&2; exit 2; }
if [[ -n "${MI_BENCH_TRACES:-}" ]]; then
  read -r -a traces <<< "$MI_BENCH_TRACES"
else
  traces=("$MI_SHARED"/samples/traces/kineto/tracelens/*.json.gz "$MI_SHARED"/samples/traces/kineto/tb_plugin/*.json.gz)
fi
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
exec /usr/bin/python3 "$here/bench_hta.py" --driver "$driver" --hta "$MI_SHARED/peers/hta" \
  --repeat "$repeat" "${traces[@]}"
