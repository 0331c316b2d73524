#!/usr/bin/env bash
# Runs every benchmark program of a build folder; each prints its ratio
# against the baseline it runs in the same process.
set -euo pipefail
build_dir=${1:-build}
for program in "$build_dir"/benchmarks/bench_*; do
  [[ -x "$program" ]] || continue
  echo "=== $(basename "$program")"
  "$program" --benchmark_min_time=0.2
done
