#!/usr/bin/env bash
# Runs every test: the full build + ctest (unit, golden, bad-input corpus,
# schema validation, fuzz-corpus replay, Python tests), then the same suite
# under ASan+UBSan (clang), then a short libFuzzer run of every fuzz target
# (scripts/fuzz.sh: MI_FUZZ_SECONDS per target, default 15).
# Usage: scripts/test.sh [--no-sanitizers] [--no-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)
SANITIZERS=1
FUZZ=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitizers) SANITIZERS=0 ;;
    --no-fuzz) FUZZ=0 ;;
    *) echo "usage: scripts/test.sh [--no-sanitizers] [--no-fuzz]" >&2; exit 2 ;;
  esac
done

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$JOBS"
(cd build && ctest --output-on-failure -j"$JOBS")

if [ "$SANITIZERS" = 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_COMPILER=clang++ -DMI_SANITIZE=ON -DMI_BENCH=OFF >/dev/null
  ninja -C build-asan -j"$JOBS"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$JOBS")
fi

if [ "$FUZZ" = 1 ]; then
  # Its own build (only the fuzz targets, -O2 with ASan+UBSan): fuzzing the
  # -O0 build-asan binaries would run several times fewer inputs.
  scripts/fuzz.sh --seconds "${MI_FUZZ_SECONDS:-15}" --jobs "$JOBS"
fi
