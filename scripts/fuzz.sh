#!/usr/bin/env bash
# Fuzzes every importer with libFuzzer for a fixed time per target, seeded
# with its committed corpus (test/fuzz/<target>/, regressions included).
#
# Usage: scripts/fuzz.sh [--seconds N] [--jobs J] [--work DIR] [TARGET...]
#   --seconds N  time per target (default 10; CI's short run)
#   --jobs J     targets fuzzed at once (default: nproc)
#   --work DIR   where new inputs, crashers and logs go (default:
#                build-fuzz/fuzz-work); kept between runs, so a longer
#                campaign resumes from what the earlier ones found
#   TARGET       e.g. onnx or onnx_fuzzer (default: every target)
#
# Builds build-fuzz (clang, ASan+UBSan, libFuzzer, MI_DCHECKs on) with only
# the fuzz targets. A target that crashes, leaks, times out on one input or
# grows past the RSS limit leaves its input in <work>/crashes/<target>/; the
# script then prints each crasher's path and how to replay it, and exits 1.
# Every crasher found is minimised (see docs/contributing/testing.md) and
# committed under test/fuzz/<target>/regressions/, which ctest replays.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SECONDS_PER_TARGET=10
JOBS=$(nproc)
WORK=build-fuzz/fuzz-work
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_TARGET=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) TARGETS+=("${1%_fuzzer}"); shift ;;
  esac
done
if [ ${#TARGETS[@]} -eq 0 ]; then
  for src in src/importers/*/*_fuzzer.cc src/session/*_fuzzer.cc src/diff/*_fuzzer.cc src/compare/*_fuzzer.cc; do
    name=$(basename "$src" .cc)
    TARGETS+=("${name%_fuzzer}")
  done
fi

# Per-input limits. Seeds longer than MAX_LEN (the deep-nesting regressions)
# are still replayed whole by ctest; fuzzing mutates their first MAX_LEN
# bytes. RSS_LIMIT_MB turns unbounded memory growth into a reported
# crasher (oom-*); TIMEOUT_S does the same for one slow input (timeout-*).
MAX_LEN=65536
RSS_LIMIT_MB=2048
TIMEOUT_S=25

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" \
  -DCMAKE_CXX_COMPILER=clang++ -DMI_SANITIZE=ON -DMI_FUZZ=ON \
  -DMI_TESTS=OFF -DMI_BENCH=OFF >/dev/null
ninja -C build-fuzz -j"$(nproc)" "${TARGETS[@]/%/_fuzzer}"

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

# Fuzzes one target; its libFuzzer output goes to <work>/logs/<target>.log.
fuzz_one() {
  local t=$1
  local src
  src=$(cd "$ROOT" && ls src/importers/*/"${t}_fuzzer.cc" src/session/"${t}_fuzzer.cc" src/diff/"${t}_fuzzer.cc" src/compare/"${t}_fuzzer.cc" 2>/dev/null || true)
  local bin="$ROOT/build-fuzz/${src%.cc}"
  local corpus="$WORK/corpus/$t" crashes="$WORK/crashes/$t"
  mkdir -p "$corpus" "$crashes" "$WORK/logs"
  local dict=()
  [ -f "$ROOT/test/fuzz/dicts/$t.dict" ] && dict=(-dict="$ROOT/test/fuzz/dicts/$t.dict")
  # New inputs go to the first directory (the work corpus); the committed
  # corpus is only read.
  local rc=0
  ASAN_OPTIONS=detect_leaks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" "$corpus" "$ROOT/test/fuzz/$t" "${dict[@]}" \
      -max_total_time="$SECONDS_PER_TARGET" -max_len="$MAX_LEN" \
      -rss_limit_mb="$RSS_LIMIT_MB" -timeout="$TIMEOUT_S" \
      -artifact_prefix="$crashes/" -print_final_stats=1 \
      >"$WORK/logs/$t.log" 2>&1 || rc=$?
  local stats
  stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb):' \
            "$WORK/logs/$t.log" | sed 's/^stat:://; s/: */=/' | tr '\n' ' ')
  local cov
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$WORK/logs/$t.log" | tail -1)
  echo "$rc" >"$WORK/logs/$t.rc"
  printf '%-16s rc=%d %s %s\n' "$t" "$rc" "$cov" "$stats"
}
export -f fuzz_one
export ROOT WORK SECONDS_PER_TARGET MAX_LEN RSS_LIMIT_MB TIMEOUT_S

STAMP="$WORK/.started"
touch "$STAMP"
sleep 1  # crashers of this run are newer than the stamp
echo "fuzzing ${#TARGETS[@]} targets, ${SECONDS_PER_TARGET}s each, $JOBS at a time (work: $WORK)"
printf '%s\n' "${TARGETS[@]}" | xargs -P "$JOBS" -I{} bash -c 'fuzz_one "$@"' _ {}

found=0
for t in "${TARGETS[@]}"; do
  src=$(ls src/importers/*/"${t}_fuzzer.cc" src/session/"${t}_fuzzer.cc" src/diff/"${t}_fuzzer.cc" src/compare/"${t}_fuzzer.cc" 2>/dev/null || true)
  while IFS= read -r f; do
    found=1
    echo "FUZZ CRASHER ($t): $f"
    echo "  replay: build-fuzz/${src%.cc} $f   (log: $WORK/logs/$t.log)"
  done < <(find "$WORK/crashes/$t" -type f -newer "$STAMP")
  rc=$(cat "$WORK/logs/$t.rc" 2>/dev/null || echo missing)
  if [ "$rc" != 0 ]; then
    found=1
    echo "FUZZ FAILED ($t): exit status $rc (log: $WORK/logs/$t.log)"
  fi
done
if [ "$found" -ne 0 ]; then
  echo "fuzzing found crashers (see above); minimise each and add it to test/fuzz/<target>/regressions/" >&2
  exit 1
fi
echo "fuzzing: no crasher"
