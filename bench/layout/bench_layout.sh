#!/bin/bash
# Layout benchmark: ours (build/src/layout/mi_bench_layout) vs dagre, elkjs
# (npm, this folder) and Graphviz dot (Debian) on the same generated graphs.
# Every tool runs as a process doing the same work: start, read and parse
# the graph, lay it out, write the positions; timed.py times each from
# spawn to exit the same way (the tools' own layout-only figures are kept
# beside). Quality (crossings, normalised edge length) is measured by
# metrics.py from every tool's positions file the same way.
#
#   bench/layout/bench_layout.sh [build-dir]          (default: build)
#
# Env: MI_LAYOUT_BENCH_DIR (default /tmp/mi_layout_bench), MI_LAYOUT_TOOLS
# ("ours dagre elk dot"), MI_LAYOUT_GRAPHS (space-separated names, default
# all), MI_LAYOUT_NODE_TIMEOUT (120 s), MI_LAYOUT_OURS_TIMEOUT (120 s),
# MI_LAYOUT_DOT_TIMEOUT (120 s), MI_LAYOUT_NO_SKIP=1 (also try sizes above
# one that already timed out in the same graph family).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
DRIVER="$BUILD/src/layout/mi_bench_layout"
OUT="${MI_LAYOUT_BENCH_DIR:-/tmp/mi_layout_bench}"
PY=/usr/bin/python3
TOOLS="${MI_LAYOUT_TOOLS:-ours dagre elk dot}"
NODE_TO="${MI_LAYOUT_NODE_TIMEOUT:-120}"
OURS_TO="${MI_LAYOUT_OURS_TIMEOUT:-120}"
DOT_TO="${MI_LAYOUT_DOT_TIMEOUT:-120}"
RES="$OUT/results.jsonl"
mkdir -p "$OUT/pos"
: > "$RES"

"$PY" "$HERE/generate.py" "$OUT" || exit 1

have_node=1
[ -d "$HERE/node_modules/@dagrejs/dagre" ] && [ -d "$HERE/node_modules/elkjs" ] || {
  echo "dagre/elkjs: not installed (cd bench/layout && npm ci --ignore-scripts)"; have_node=0; }
command -v node >/dev/null || { echo "node: not found"; have_node=0; }
have_dot=1
command -v dot >/dev/null || { echo "dot: not found (apt-get install graphviz)"; have_dot=0; }
have_ours=1
[ -x "$DRIVER" ] || { echo "ours: not built ($DRIVER missing; build target mi_bench_layout)"; have_ours=0; }

# Graphs in order of size; a family is the name without its size suffix.
GRAPHS="${MI_LAYOUT_GRAPHS:-fixture_resnet18 fixture_transformer transformer_1k transformer_sharedmask_1k transformer_3k transformer_10k dag_branchy_10k transformer_100k}"
declare -A TIMED_OUT   # "tool family" -> graph that timed out

record() {  # graph tool status json-or-empty
  "$PY" - "$1" "$2" "$3" "$4" >> "$RES" <<'PYEOF'
import json, sys
g, t, st, js = sys.argv[1:5]
r = {"graph": g, "tool": t, "status": st}
if js:
    try:
        r.update(json.loads(js))
    except ValueError:
        r["status"] = "bad output"
print(json.dumps(r))
PYEOF
}

for g in $GRAPHS; do
  gf="$OUT/$g.json"
  [ -f "$gf" ] || { echo "missing $gf"; continue; }
  fam="${g%_*}"
  for t in $TOOLS; do
    case $t in
      ours) [ $have_ours = 1 ] || { record "$g" ours "not built" ""; continue; } ;;
      dagre|elk) [ $have_node = 1 ] || { record "$g" "$t" "not installed" ""; continue; } ;;
      dot) [ $have_dot = 1 ] || { record "$g" dot "not installed" ""; continue; } ;;
    esac
    if [ -n "${TIMED_OUT[$t $fam]:-}" ] && [ "${MI_LAYOUT_NO_SKIP:-0}" != 1 ]; then
      record "$g" "$t" "skip (timeout at ${TIMED_OUT[$t $fam]})" ""; echo "$g $t: skipped"; continue
    fi
    pos="$OUT/pos/$g.$t.json"
    rm -f "$pos"
    err="$OUT/pos/$g.$t.err"
    case $t in
      ours)  line=$("$PY" "$HERE/timed.py" "$OURS_TO" "$DRIVER" "$gf" --out "$pos" 2>"$err"); rc=$? ;;
      dagre|elk)
             line=$(ulimit -s unlimited 2>/dev/null || ulimit -s 1048576; \
                    "$PY" "$HERE/timed.py" "$NODE_TO" node --stack-size=500000 --max-old-space-size=16384 \
                    "$HERE/run_$t.mjs" "$gf" --out "$pos" 2>"$err"); rc=$? ;;
      dot)   # The .dot text is written first, untimed (dot's input format,
             # as the neutral JSON is the others'); the plain output is
             # turned into positions after, untimed.
             "$PY" "$HERE/run_dot.py" to-dot "$gf" "$OUT/pos/$g.dot"
             line=$("$PY" "$HERE/timed.py" "$DOT_TO" dot -Tplain "$OUT/pos/$g.dot" -o "$OUT/pos/$g.plain" 2>"$err"); rc=$?
             if [ $rc = 0 ]; then
               "$PY" "$HERE/run_dot.py" from-plain "$gf" "$OUT/pos/$g.plain" "$pos" 2>>"$err" || rc=3
               line=$("$PY" -c 'import json,sys; a=json.loads(sys.argv[1]); a["tool"]="dot"; print(json.dumps(a))' "$line")
             fi ;;
    esac
    line=$(printf '%s\n' "$line" | grep '^{' | tail -1)
    to=$NODE_TO; [ $t = dot ] && to=$DOT_TO; [ $t = ours ] && to=$OURS_TO
    if [ $rc = 124 ]; then
      st="timeout >${to} s"; TIMED_OUT[$t $fam]="$g"; line=""
    elif [ $rc = 3 ] && [[ "$line" == *'stack overflow'* ]]; then
      st="stack overflow"; line=""
    elif [ $rc != 0 ] || [ ! -s "$pos" ]; then
      st="failed (rc $rc)"; [ $rc -ge 128 ] && st="crashed (signal $((rc-128)))"; line=""
    else
      m=$("$PY" "$HERE/metrics.py" "$gf" "$pos") || m='{}'
      st=ok; line=$("$PY" -c 'import json,sys; a=json.loads(sys.argv[1]); a.update({k:v for k,v in json.loads(sys.argv[2]).items() if k!="nodes"}); print(json.dumps(a))' "$line" "$m")
    fi
    record "$g" "$t" "$st" "$line"
    echo "$g $t: $st ${line:0:160}"
  done
done
echo
"$PY" "$HERE/report.py" "$RES"
