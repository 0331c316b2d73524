#!/usr/bin/env bash
# The mpi backend's dead-rank tests (issue 18): 2 ranks under mpirun run
# FaultInjection (tests/multidevice/fault_injection_test.cpp) with one fault
# each; the job must end non-zero within a bound, with a message that names
# the cause, and leave no rank behind.
#   dead_*_first_collective: device 1 exits without a word. mpirun sees a
#     rank leave without MPI_Finalize and ends the job itself (it says so).
#   stuck_before_first_collective: device 1 never joins. Device 0's
#     collective times out (HOSTIR_COMM_TIMEOUT_S=3) with a hostir::Error,
#     then MPI_Abort ends the job (MPI cannot cancel a collective).
# Usage: mpi_fault_test.sh MPIRUN RELIABILITY_TEST_BINARY
set -uo pipefail
mpirun=$1
binary=$2
flags=(--oversubscribe -np 2)
[[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
failures=0

# run_fault FAULT BOUND_S EXPECTED...: each EXPECTED must appear in the output.
run_fault() {
  local fault=$1 bound=$2
  shift 2
  local start end output status
  start=$(date +%s.%N)
  output=$(HOSTIR_COMM_BACKEND=mpi HOSTIR_TEST_FAULT=$fault HOSTIR_COMM_TIMEOUT_S=3 \
    timeout 120 "$mpirun" "${flags[@]}" -x HOSTIR_COMM_BACKEND -x HOSTIR_TEST_FAULT \
    -x HOSTIR_COMM_TIMEOUT_S "$binary" --gtest_filter='FaultInjection.*' 2>&1)
  status=$?
  end=$(date +%s.%N)
  local seconds
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  local ok=1
  if ((status == 0 || status == 124)); then
    echo "FAIL $fault: mpirun exited with $status (want non-zero, no timeout)"
    ok=0
  fi
  if awk -v s="$seconds" -v b="$bound" 'BEGIN { exit !(s >= b) }'; then
    echo "FAIL $fault: the job took ${seconds} s, the bound is ${bound} s"
    ok=0
  fi
  for expected in "$@"; do
    if ! grep -qF -- "$expected" <<<"$output"; then
      echo "FAIL $fault: the output lacks '$expected'"
      ok=0
    fi
  done
  if pgrep -f -- "$binary --gtest_filter=FaultInjection" >/dev/null; then
    echo "FAIL $fault: a rank is still running"
    ok=0
  fi
  if ((ok)); then
    echo "ok   $fault: exit $status after ${seconds} s"
  else
    echo "---- output of $fault:"
    echo "$output"
    failures=$((failures + 1))
  fi
}

run_fault dead_before_first_collective 30 "mpirun has exited due to process rank 1" "exiting improperly"
run_fault dead_after_first_collective 30 "mpirun has exited due to process rank 1" "exiting improperly"
run_fault stuck_before_first_collective 30 "fault injection: device 0 failed:" \
  "did not complete within the communication timeout of 3 s" "MPI_Abort"
exit $((failures > 0))
