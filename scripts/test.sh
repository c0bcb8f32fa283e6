#!/usr/bin/env bash
# Runs every test: the full build + ctest (unit, golden, bad-input corpus,
# schema validation, fuzz-corpus replay, Python tests), then the same suite
# under ASan+UBSan (clang).
# Usage: scripts/test.sh [--no-sanitizers]
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$JOBS"
(cd build && ctest --output-on-failure -j"$JOBS")

if [ "${1:-}" != "--no-sanitizers" ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_COMPILER=clang++ -DMI_SANITIZE=ON -DMI_BENCH=OFF >/dev/null
  ninja -C build-asan -j"$JOBS"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$JOBS")
fi
