#!/usr/bin/env bash
# Issue 36's "does no harm" check on a shared machine: the layer at small
# sizes over loopback, where the automatic stream splits should decline.
# Each round runs every given hostir binary once (interleaved, under the
# bench lock) and prints the load average, what the automatic program
# chose, its time against the unchunked program's, and the link its probe
# saw. Give two binaries (before/after a change) to compare them.
#
#   benchmarks/overlap/small_loopback_rounds.sh ROUNDS HOSTIR [HOSTIR...]
set -euo pipefail
rounds=${1:?rounds}
shift
(($# > 0)) || { echo "give at least one hostir binary" >&2; exit 2; }
for round in $(seq 1 "$rounds"); do
  for binary in "$@"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    out=$(flock /tmp/hostir-bench.lock "$binary" sp-layer --ranks 2 --tokens 256 --hidden 256 \
      --ffn 1024 --heads 4 --runs 60 2>&1)
    automatic=$(grep '^\[rank 0\]   automatic' <<<"$out" | sed 's/^\[rank 0\] *//')
    link=$(grep -o 'link [0-9.e+]* MB/s + [0-9.e+-]* ms' <<<"$out" | head -1)
    echo "$round $binary load=$load | $automatic | $link"
  done
done
