#!/usr/bin/env bash
# Writes a 64-rank Kineto cluster of ~47 MB per rank (~3.0 GB of JSON) for
# the scale benchmark (bench_cluster_scale.sh), with
# test/fixtures/cluster_nccl/make_nccl_cluster.py (how the ranks are made:
# that folder's README.md): 6 steps of the real B200 decode trace per rank
# (74 NCCL collectives per step, every kernel's gaps and durations jittered
# per rank and step, rank 3's vllm::moe_forward kernels x1.5), and after
# each step's collectives a block of one of 7 other real traces (H100 and
# MI300 ViT and BERT, an SGLang decode, an MI210 trace, torch.compile/Triton;
# block (rank + step) mod 7) followed by one more all-reduce, so no two
# ranks' files are the same and ranks' steps differ in length.
#
#   bench/cluster/make_big_cluster.sh [OUT_DIR] [RANKS] [STEPS]
#   (default $TMPDIR/mi_bench_cluster64, 64, 6; plain JSON, not gzip)
#
# Generated data stays out of git. Took 14.5 min of one core (nice 19, the
# machine busy) and 128 MB (2026-12-02).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-${TMPDIR:-/tmp}/mi_bench_cluster64}"
ranks="${2:-64}"
steps="${3:-6}"
x="$repo/test/fixtures/samples/traces/kineto/tracelens"
extras=()
for f in h100__Falconsai_nsfw_image_detection__1016002 h100__gaunernst_bert-small-uncased__1016001 \
         inference__sglang_decode__sglang_Qwen3-8B_decode mi210__gpu_only_trace__gpu_only_trace \
         mi300__Falconsai_nsfw_image_detection__1016002 mi300__gaunernst_bert-small-uncased__1016001 \
         torch_compile_triton__trace; do
  extras+=(--extra-trace "$x/$f.json.gz")
done
exec /usr/bin/python3 "$repo/test/fixtures/cluster_nccl/make_nccl_cluster.py" "$out" \
  --ranks "$ranks" --steps "$steps" --no-gzip "${extras[@]}"
