#!/usr/bin/env bash
# model-inspector `cluster` vs Holistic Trace Analysis (HTA) on the same
# multi-rank Kineto folders: per-rank comm/comp overlap and idle time of
# both tools beside a reference computed from the JSON, and both tools'
# wall time and peak memory (bench/cluster/bench_cluster_hta.py says how).
#
#   bench/cluster/bench_cluster_hta.sh [build-dir] [DIR...]
#
# Without DIRs it generates two 8-rank clusters from the real B200 trace
# into $TMPDIR/mi_bench_cluster (test/fixtures/cluster_nccl/README.md):
#   slow     rank 3's vllm::moe_forward kernels x1.5, collectives in stream
#   overlap  collectives on their own stream beside 3 compute kernels,
#            rank 5 starts each step 300 us late, clocks 1 ms apart per rank
# No real multi-rank Kineto set is shared in the workspace; pass one as DIR
# when you have it. HTA (peers/hta) comes from the workspace's shared folder
# (bench/shared_dir.sh; MI_SHARED overrides) and needs Debian's
# python3-pandas python3-plotly python3-networkx python3-pydot.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
shift || true
source "$repo/bench/shared_dir.sh"
mi_shared_require peers/hta/hta/trace_analysis.py
binary="$build/src/cli/model-inspector"
[[ -x "$binary" ]] || { echo "build $binary first (ninja -C $build model-inspector)" >&2; exit 2; }
/usr/bin/python3 -c "import pandas, plotly, networkx" 2>/dev/null || {
  echo "HTA needs python3-pandas python3-plotly python3-networkx python3-pydot (apt-get install)" >&2; exit 2; }
dirs=("$@")
if [[ ${#dirs[@]} -eq 0 ]]; then
  work="${TMPDIR:-/tmp}/mi_bench_cluster"
  gen="$repo/test/fixtures/cluster_nccl/make_nccl_cluster.py"
  [[ -d "$work/slow" ]] || /usr/bin/python3 "$gen" "$work/slow" >/dev/null
  [[ -d "$work/overlap" ]] || /usr/bin/python3 "$gen" "$work/overlap" --overlap-kernels 3 \
    --late-start 5:300 --slow-factor 1 --clock-offset-us 1000 >/dev/null
  dirs=("$work/slow" "$work/overlap")
fi
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M UTC')"
exec /usr/bin/python3 "$here/bench_cluster_hta.py" --binary "$binary" --hta "$MI_SHARED/peers/hta" \
  --jobs 2 "${dirs[@]}"
