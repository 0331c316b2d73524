#!/usr/bin/env bash
# Runs every benchmark program of a build folder; each prints its ratio
# against the baseline it runs in the same process. bench_collectives is a
# multi-rank program: it runs under the launcher on 2 and then 4 local ranks.
set -euo pipefail
build_dir=${1:-build}
for program in "$build_dir"/benchmarks/bench_*; do
  [[ -x "$program" ]] || continue
  echo "=== $(basename "$program")"
  if [[ "$(basename "$program")" == bench_collectives ]]; then
    for ranks in 2 4; do
      "$build_dir"/tools/hostir launch -n "$ranks" -- "$program"
    done
  else
    "$program" --benchmark_min_time=0.2
  fi
done
