#!/usr/bin/env bash
# Issue 20, item 6: `hostir sp-mlp` checks its arguments before any rank
# starts: the error is printed once (not once per rank) and no rank runs; an
# output file's folder is checked before the run, not after it.
# Usage: cli_sp_mlp_args_test.sh HOSTIR_BINARY
set -uo pipefail
hostir=$1
failures=0

expect_early_error() {
  local want=$1
  shift
  local output status count
  output=$("$hostir" sp-mlp "$@" 2>&1)
  status=$?
  count=$(grep -c -- "$want" <<<"$output")
  if [[ $status -eq 0 ]] || [[ $count -ne 1 ]] || grep -q "^\[rank" <<<"$output"; then
    echo "FAIL: hostir sp-mlp $*: exit $status, '$want' printed $count times (want once, no rank output):"
    echo "$output" | tail -5
    failures=$((failures + 1))
  else
    echo "ok: hostir sp-mlp $* -> $(grep -m1 -- "$want" <<<"$output")"
  fi
}

expect_early_error "must divide by the number of ranks (3)" --ranks 3 --tokens 64 --hidden 8 --ffn 48
expect_early_error "must divide each rank's 32 token rows" --ranks 2 --tokens 64 --hidden 8 --ffn 16 --chunks 5
expect_early_error "does not exist" --ranks 2 --tokens 64 --hidden 8 --ffn 16 --trace /nonexistent_hostir_dir/t
expect_early_error "does not exist" --ranks 2 --tokens 64 --hidden 8 --ffn 16 --json /nonexistent_hostir_dir/r.json

exit $((failures > 0))
