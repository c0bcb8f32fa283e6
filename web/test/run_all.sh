#!/usr/bin/env bash
# Runs the web UI tests: the import layering check and the Node unit tests
# of the UI state (URL state, reducer and store, selection controller
# against a test double of the API), layout binary decoding (node),
# renderers on a layout file (Chromium + vite preview), end-to-end against the real server
# (Chromium + `model-inspector open`): the structure view (e2e_test), then
# heat map, lineage, reveal, compare and export (e2e_views_test), then the
# linked views — graph, timeline, mapping, summary, one selection, URL —
# on ORT and Ascend runs (e2e_linked_test), and the generic analysis view
# on every registered analysis (e2e_analyses_test), runs that are not a
# graph + trace pair: trace-only, torch_npu, a bad file with --keep-going,
# run switching, unlinked pairs, the bundled demo (e2e_runs_test), the
# "Pair with MODEL" button of a trace-only run (e2e_pair_test), and
# search, shortcuts, export and the critical path in the URL
# (e2e_search_test), a graph with a fault drawn, its missing input
# marked (e2e_faults_test), and the CANN profiler tables on a GE graph's
# nodes and in the analyses (e2e_ascend_tables_test), and the cluster view
# of a directory of ranks: heat map pixels, a cell opening its rank at the
# step, a collective selected on both ranks (e2e_cluster_test), and the
# diff of two runs: graph colours by diff with legend counts and pixels,
# the timeline's compare marks, the run history's trend tab
# (e2e_diff_test), and tensor probes: statistics with sparklines, colour
# by statistic, the first NaN marked, the step slider, re-runs through the
# server, saved sessions (e2e_probes_test; needs the Python package built:
# the target model_inspector_python), and the Training view on a snapshot
# the monitor wrote around a real torch run with an injected fault: heat map
# pixels, row ↔ graph node, histograms / attention / projection / samples
# against the snapshot, causes in order (e2e_training_test), and long
# memory counter series: downsampled in the metadata, fetched in detail
# when zoomed, exact values drawn (e2e_counters_test). For ctest:
#   MI_BINARY=<build>/src/cli/model-inspector MI_TEST_ARTIFACTS=<build>/web-test-artifacts web/test/run_all.sh
# Fails with a clear message when node, the npm packages, Chromium or the
# binary are missing. Set MI_SKIP_E2E=1 to skip the tests against the server.
set -euo pipefail
# Resolve a relative MI_BINARY against the caller's directory before cd.
if [[ -n "${MI_BINARY:-}" && "$MI_BINARY" != /* ]]; then MI_BINARY="$PWD/$MI_BINARY"; fi
cd "$(dirname "$0")/.."

die() { echo "FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node not found; install Node 20 (Debian: nodejs)"
[[ -d node_modules/vite && -d node_modules/playwright-core ]] ||
  die "web/node_modules is missing; run 'cd web && npm ci'"
[[ -n "${MI_BINARY:-}" ]] || die "MI_BINARY is not set; point it at the built CLI (build/src/cli/model-inspector)"
[[ -x "$MI_BINARY" ]] || die "MI_BINARY=$MI_BINARY is not an executable; build the project first"
CHROMIUM="${MI_CHROMIUM:-/usr/bin/chromium}"
[[ -x "$CHROMIUM" ]] || die "$CHROMIUM not found; install Debian's chromium (apt-get install chromium) or set MI_CHROMIUM"
export MI_BINARY
# The render test serves the built UI: MI_WEB_DIST (ctest passes the one
# CMake built into the build dir), else web/dist, built here when absent.
# The e2e test uses the UI embedded in the binary instead.
if [[ -n "${MI_WEB_DIST:-}" ]]; then
  [[ -f "$MI_WEB_DIST/index.html" ]] || die "MI_WEB_DIST=$MI_WEB_DIST holds no index.html; build the project first"
  export MI_WEB_DIST
else
  [[ -f dist/index.html ]] || node_modules/.bin/vite build --logLevel error
fi

node test/check_imports.mjs
node --test test/unit/
node test/layout_binary_test.mjs
node test/palette_test.mjs
node test/timeline_binary_test.mjs
node test/render_file_test.mjs
if [[ "${MI_SKIP_E2E:-0}" != 1 ]]; then
  "$MI_BINARY" open --help >/dev/null 2>&1 || die "$MI_BINARY has no 'open' command (the server); build the current tree"
  node test/e2e_test.mjs
  node test/e2e_views_test.mjs
  node test/timeline_test.mjs
  node test/e2e_linked_test.mjs
  node test/e2e_analyses_test.mjs
  node test/e2e_runs_test.mjs
  node test/e2e_pair_test.mjs
  node test/e2e_search_test.mjs
  node test/e2e_overview_test.mjs
  node test/e2e_panels_test.mjs
  node test/e2e_timeline_habits_test.mjs
  node test/e2e_counters_test.mjs
  node test/e2e_faults_test.mjs
  node test/e2e_ascend_tables_test.mjs
  node test/e2e_first_minute_test.mjs
  node test/e2e_cluster_test.mjs
  node test/e2e_diff_test.mjs
  node test/e2e_probes_test.mjs
  node test/e2e_training_test.mjs
fi
echo "PASS: web tests"
