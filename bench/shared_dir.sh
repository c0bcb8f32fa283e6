# Sourced by the benchmark scripts (bash): finds the workspace's shared
# folder, which holds the peer tools (peers/hta: Holistic Trace Analysis)
# and the larger real samples (samples/traces) the benchmarks run on.
# Benchmarks are not tests: nothing the build or ctest runs reads it
# (tools/check_no_shared.py); the tests use the copies in
# test/fixtures/samples/.
#
#   MI_SHARED=/path/to/shared    (default: the folder beside the repository)
#
# mi_shared_require PATH... fails with a clear message when one is missing.

MI_SHARED="${MI_SHARED:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared}"
export MI_SHARED

mi_shared_require() {
  local p
  for p in "$@"; do
    if [[ ! -e "$MI_SHARED/$p" ]]; then
      echo "missing $MI_SHARED/$p: this benchmark runs on the workspace's shared" \
           "peers and samples (set MI_SHARED to their folder)" >&2
      exit 2
    fi
  done
}
