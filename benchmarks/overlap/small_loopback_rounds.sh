#!/usr/bin/env bash
# Issue 36's "does no harm" check on a shared machine: the blocks at small
# sizes over loopback, where the automatic stream splits should decline.
# Each round runs every given hostir binary once per job and load
# (interleaved, under the bench lock) and prints the load average, what the
# automatic program chose, its time against the unchunked program's, the
# link its probe saw and what planning and the probe cost. Give two binaries
# (before/after a change) to compare them.
#
#   [JOBS="sp-mlp sp-layer"] [BUSY="0 1 2"] \
#     benchmarks/overlap/small_loopback_rounds.sh ROUNDS HOSTIR [HOSTIR...]
#
# JOBS: the jobs (default sp-layer). BUSY: per round, each count of
# `yes > /dev/null` loops to run beside the job as extra load (default 0).
set -euo pipefail
rounds=${1:?rounds}
shift
(($# > 0)) || { echo "give at least one hostir binary" >&2; exit 2; }
for round in $(seq 1 "$rounds"); do
  for busy in ${BUSY:-0}; do
    for job in ${JOBS:-sp-layer}; do
      for binary in "$@"; do
        loops=()
        for _ in $(seq 1 "$busy"); do
          yes >/dev/null &
          loops+=($!)
        done
        load=$(cut -d' ' -f1 /proc/loadavg)
        heads=()
        [[ $job == sp-layer ]] && heads=(--heads 4)
        out=$(flock /tmp/hostir-bench.lock "$binary" "$job" --ranks 2 --tokens 256 --hidden 256 \
          --ffn 1024 "${heads[@]}" --runs 60 2>&1) || true
        ((${#loops[@]} == 0)) || kill "${loops[@]}"
        automatic=$(grep '^\[rank 0\]   automatic' <<<"$out" | sed 's/^\[rank 0\] *//;s/  */ /g')
        link=$(grep -o 'link [0-9.e+]* MB/s + [0-9.e+-]* ms' <<<"$out" | tail -1)
        wake=$(grep -o 'a wake-up waits [0-9.e+-]* ms' <<<"$out" | tail -1)
        cost=$(grep -o 'planning took .*' <<<"$out" | sed 's/ (once per process and team)//')
        echo "$round $job busy=$busy $binary load=$load | $automatic | $link ${wake:+, $wake} | $cost"
      done
    done
  done
done
