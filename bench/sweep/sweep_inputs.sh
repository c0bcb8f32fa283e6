#!/usr/bin/env bash
# Peak memory and exit status of every real sample, fixture, bad input and
# crafted gzip bomb (sweep_inputs.py says how): finds the shared samples and
# runs the sweep with Debian's python3.
#
#   bench/sweep/sweep_inputs.sh [--binary B] [--limit 2G] [--markdown]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../shared_dir.sh"
mi_shared_require samples
exec /usr/bin/python3 "$here/sweep_inputs.py" "$@"
