#!/usr/bin/env bash
# The long run of the differential fuzzer (issue 11): N random fusions
# (default 10000) from seed FIRST (default 1000, past the smoke run's
# seeds 1..300), lowered and run through HostExecutor and compared with
# plain ATen. Prints the summary line the test prints, then any failure.
#
#   tests/fuzz/long_run.sh [BUILD_DIR] [N] [FIRST]
#
# Its last result is recorded in docs/reliability.md.
set -euo pipefail
build_dir=${1:-build}
programs=${2:-10000}
first_seed=${3:-1000}
binary="$build_dir/tests/test_fuzz"
if [[ ! -x "$binary" ]]; then
  echo "no $binary: build it first (ninja -C $build_dir test_fuzz)" >&2
  exit 2
fi
HOSTIR_FUZZ_PROGRAMS="$programs" HOSTIR_FUZZ_FIRST_SEED="$first_seed" \
  "$binary" --gtest_filter='Fuzz.DifferentialAgainstAten' --gtest_color=no
