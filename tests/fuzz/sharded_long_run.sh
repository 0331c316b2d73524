#!/usr/bin/env bash
# The long run of the sharded differential fuzzer (issue 11): N random
# sharded fusions (default 500) from seed FIRST (default 1000, past the
# smoke run's seeds), run on RANKS ranks (default 2) through
# MultiDeviceExecutor and compared with plain ATen. Prints each rank's
# summary line, then any failure; exits non-zero if any rank failed.
#
#   tests/fuzz/sharded_long_run.sh [BUILD_DIR] [N] [FIRST] [RANKS]
#
# Its last result is recorded in docs/reliability.md.
set -euo pipefail
build_dir=${1:-build}
programs=${2:-500}
first_seed=${3:-1000}
ranks=${4:-2}
binary="$build_dir/tests/multidevice/test_multidevice_sharded_fuzz"
launcher="$build_dir/tools/hostir"
for file in "$binary" "$launcher"; do
  if [[ ! -x "$file" ]]; then
    echo "no $file: build it first (ninja -C $build_dir hostir test_multidevice_sharded_fuzz)" >&2
    exit 2
  fi
done
HOSTIR_FUZZ_PROGRAMS="$programs" HOSTIR_FUZZ_FIRST_SEED="$first_seed" \
  HOSTIR_COMM_TIMEOUT_S=${HOSTIR_COMM_TIMEOUT_S:-30} \
  "$launcher" launch -n "$ranks" -- "$binary" --gtest_color=no
