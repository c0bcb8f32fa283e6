#!/usr/bin/env bash
# Trace ingest: ours vs Python json.load, Node JSON.parse and Holistic Trace
# Analysis' trace load (bench_trace_ingest.py says how each is timed), on
#  - varied real traces: Kineto (H100, MI300, B200, a 2021 V100 trace) and
#    an ONNX Runtime profile, from the workspace's shared samples;
#  - one large generated trace whose names and arguments vary as a real
#    trace's do (bench/timeline/make_timeline_trace.py --varied-names), for
#    throughput at size. Not one real trace copied many times: string
#    interning would flatter the copies.
#
#   bench/trace/bench_trace_ingest.sh [build-dir] [large-trace-tasks] [repeat]
#        defaults: build, 1000000 (~0.4 GB of JSON), 3
#
# Reads HTA (peers/hta) and the traces (samples/traces) from the shared
# folder (bench/shared_dir.sh; MI_SHARED overrides). The large trace is
# written to MI_BENCH_TRACE (default /tmp/mi_bench_trace_varied_<tasks>.json);
# large-trace-tasks 0 skips it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
tasks="${2:-1000000}"
repeat="${3:-3}"
source "$repo/bench/shared_dir.sh"
k=samples/traces/kineto
real=(
  $k/tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz
  $k/tracelens/mi300__gaunernst_bert-small-uncased__1016001.json.gz
  $k/tracelens/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
  $k/tracelens/mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
  $k/tracelens/b200__eager_trace.json.gz
  $k/tb_plugin/samples__resnet50_num_workers_0__worker0.1623143566756.pt.trace.json.gz
  samples/traces/ort/quadric__gpnpumode__4cpu_2025-01-29_23-03-39.json
)
mi_shared_require peers/hta/hta/trace_analysis.py "${real[@]}"
driver="$build/src/importers/chrome_trace/mi_bench_trace_ingest"
[[ -x "$driver" ]] || { echo "build $driver first (ninja -C $build mi_bench_trace_ingest)" >&2; exit 2; }
command -v node >/dev/null || { echo "node not found" >&2; exit 2; }
/usr/bin/python3 -c "import pandas, plotly, networkx" 2>/dev/null || {
  echo "HTA needs python3-pandas python3-plotly python3-networkx python3-pydot (apt-get install)" >&2; exit 2; }
inputs=()
for f in "${real[@]}"; do inputs+=("$MI_SHARED/$f"); done
if [[ "$tasks" != 0 ]]; then
  big="${MI_BENCH_TRACE:-/tmp/mi_bench_trace_varied_${tasks}.json}"
  [[ -f "$big" ]] || /usr/bin/python3 "$repo/bench/timeline/make_timeline_trace.py" \
    --varied-names --tasks "$tasks" --out "$big"
  inputs+=("$big")
fi
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
exec /usr/bin/python3 "$here/bench_trace_ingest.py" --driver "$driver" \
  --hta "$MI_SHARED/peers/hta" --repeat "$repeat" "${inputs[@]}"
