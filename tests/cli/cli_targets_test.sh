#!/usr/bin/env bash
# Issue 12: `hostir targets` runs a Megatron MLP whose weights carry
# matmul_rhs on a mesh of mixed targets, prints the executables per device
# and checks every rank against plain ATen. Usage: cli_targets_test.sh HOSTIR_BINARY
set -uo pipefail
hostir=$1
failures=0

# expect WHAT OUTPUT NEEDLE: OUTPUT contains the fixed string NEEDLE.
expect() {
  if grep -qF -- "$3" <<<"$2"; then
    echo "ok: $1: $(grep -m1 -F -- "$3" <<<"$2")"
  else
    echo "FAIL: $1: the output lacks '$3'"
    failures=$((failures + 1))
  fi
}

# expect_count WHAT OUTPUT NEEDLE N: NEEDLE occurs on exactly N lines.
expect_count() {
  local count
  count=$(grep -cF -- "$3" <<<"$2")
  if [[ $count -eq $4 ]]; then
    echo "ok: $1: $4 lines with '$3'"
  else
    echo "FAIL: $1: $count lines with '$3', want $4"
    failures=$((failures + 1))
  fi
}

run() {
  local output status
  output=$(HOSTIR_COMM_TIMEOUT_S=60 "$hostir" targets "$@" 2>&1)
  status=$?
  if [[ $status -ne 0 ]]; then
    echo "FAIL: hostir targets $* exited with $status"
    echo "$output" | tail -20
    failures=$((failures + 1))
  fi
  printf '%s' "$output"
}

# Two ranks, avx512 and avx2: each linear has one executable per target.
out=$(run --ranks 2 --targets cpu:avx512,cpu:avx2)
expect "2 ranks" "$out" "targets: 0=cpu:avx512 (512-bit vectors, matmul_rhs BA16a64b) 1=cpu:avx2 (256-bit vectors, matmul_rhs plain)"
expect_count "2 ranks" "$out" "executables per device:" 1
# Two launches (the linears), each on its PostOnStream line and in the list.
expect_count "2 ranks" "$out" " on (0) | HostUnit " 4
expect "2 ranks" "$out" "device 0 (cpu:avx512): HostUnit"
expect "2 ranks" "$out" "#matmul_rhs:BA16a64b(n=0)"
expect "2 ranks" "$out" "device 1 (cpu:avx2): HostUnit"
expect "2 ranks" "$out" "#matmul_rhs:identity"
expect_count "2 ranks" "$out" "PASSED" 2

# Four ranks over two targets: still exactly two executables per linear.
out=$(run --ranks 4 --targets cpu:avx512,cpu:avx2)
expect_count "4 ranks" "$out" " on (0 2) | HostUnit " 4
expect_count "4 ranks" "$out" "PASSED" 4

# One target everywhere: no clone, the linears stay single ops.
out=$(run --ranks 2 --targets cpu:avx2)
expect_count "1 target" "$out" " | HostUnit " 0
expect_count "1 target" "$out" "PASSED" 2

# A bad target is an error naming it.
out=$("$hostir" targets --targets cpu:avx3 2>&1)
expect "bad target" "$out" "unknown target 'cpu:avx3'"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
