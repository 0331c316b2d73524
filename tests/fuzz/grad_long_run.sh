#!/usr/bin/env bash
# The long run of the gradient fuzzer (issue 38): N random differentiable
# programs (default 5000) from seed FIRST (default 1000, past the smoke run's
# seeds), on RANKS ranks (default 1; 2 or 4 run under `hostir launch`),
# differentiated by hostir and compared with torch autograd
# (tests/python/grad_fuzz.py). Prints the summary line, then any failure.
#
#   tests/fuzz/grad_long_run.sh [BUILD_DIR] [N] [FIRST] [RANKS]
#
# Its last result is recorded in docs/reliability.md.
set -euo pipefail
build_dir=$(cd "${1:-build}" && pwd)
programs=${2:-5000}
first_seed=${3:-1000}
ranks=${4:-1}
here=$(cd "$(dirname "$0")/../python" && pwd)
export PYTHONPATH="$build_dir/python:$here${PYTHONPATH:+:$PYTHONPATH}" HOSTIR_BUILD_DIR="$build_dir"
command=(/usr/bin/python3 "$here/grad_fuzz.py" --programs "$programs" --first-seed "$first_seed")
if [[ "$ranks" -gt 1 ]]; then
  HOSTIR_COMM_TIMEOUT_S=${HOSTIR_COMM_TIMEOUT_S:-60} "$build_dir/tools/hostir" launch -n "$ranks" -- \
    "${command[@]}" --min-matched 0.3
else
  "${command[@]}"
fi
