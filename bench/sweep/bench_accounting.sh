#!/usr/bin/env bash
# The memory accounting's cost on the import path: `summary -q` of one large
# trace with this build and with a reference build without the accounting
# (e.g. the main checkout's at the commit this branch starts from),
# alternated in one run (the order swapped every round, so load drifts hit
# both alike), N of each. Prints wall and CPU (user + sys) seconds, their
# medians and the ratios, and the ratio of the fastest runs (the least
# disturbed by other work on a shared VM).
#
#   bench/sweep/bench_accounting.sh TRACE REFERENCE_BINARY [build-dir] [N]
#
# TRACE: e.g. bench/ui/make_kineto_trace.py --out /tmp/k300.json --mb 300.
# MI_BENCH_COMMAND replaces `summary` (e.g. "summary --no-calibrate").
set -euo pipefail
trace="$1"
ref="$2"
here="$(cd "$(dirname "$0")" && pwd)"
build="${3:-$here/../../build}"
n="${4:-7}"
shift $(($# < 4 ? $# : 4))
ours="$build/src/cli/model-inspector"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); ${MI_BENCH_COMMAND:-summary} of $trace ($(stat -c %s "$trace") bytes)"
# "wall cpu" of one run.
time_one() {
  /usr/bin/time -f "%e %U %S" -o /tmp/mi_bench_accounting.$$ \
    "$1" ${MI_BENCH_COMMAND:-summary} "$trace" -q > /dev/null
  awk '{printf "%s %.2f\n", $1, $2 + $3}' /tmp/mi_bench_accounting.$$
}
ours_w=() ours_c=() ref_w=() ref_c=()
for ((i = 0; i < n; i++)); do
  for side in $( ((i % 2 == 0)) && echo "ref ours" || echo "ours ref"); do
    if [[ $side == ref ]]; then
      read -r w c < <(time_one "$ref")
      ref_w+=("$w") ref_c+=("$c")
    else
      read -r w c < <(time_one "$ours")
      ours_w+=("$w") ours_c+=("$c")
    fi
  done
done
rm -f /tmp/mi_bench_accounting.$$
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
minimum() { printf '%s\n' "$@" | sort -g | head -1; }
ratio() { echo "scale=3; $1 / $2" | bc; }
echo "ours      wall: ${ours_w[*]}  median $(median "${ours_w[@]}") s"
echo "reference wall: ${ref_w[*]}  median $(median "${ref_w[@]}") s"
echo "ours      cpu:  ${ours_c[*]}  median $(median "${ours_c[@]}") s"
echo "reference cpu:  ${ref_c[*]}  median $(median "${ref_c[@]}") s"
echo "ours / reference: wall $(ratio "$(median "${ours_w[@]}")" "$(median "${ref_w[@]}")"), cpu $(ratio "$(median "${ours_c[@]}")" "$(median "${ref_c[@]}")") (medians); fastest runs: cpu $(ratio "$(minimum "${ours_c[@]}")" "$(minimum "${ref_c[@]}")")"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
