#!/usr/bin/env bash
# Issue 20, item 6: `hostir sp-mlp` (and `hostir sp-layer`, issue 19) checks
# its arguments before any rank starts: the error is printed once (not once
# per rank) and no rank runs; an output file's folder is checked before the
# run, not after it.
# Usage: cli_sp_mlp_args_test.sh HOSTIR_BINARY
set -uo pipefail
hostir=$1
failures=0

expect_early_error() {
  local command=$1 want=$2
  shift 2
  local output status count
  output=$("$hostir" "$command" "$@" 2>&1)
  status=$?
  count=$(grep -c -- "$want" <<<"$output")
  if [[ $status -eq 0 ]] || [[ $count -ne 1 ]] || grep -q "^\[rank" <<<"$output"; then
    echo "FAIL: hostir $command $*: exit $status, '$want' printed $count times (want once, no rank output):"
    echo "$output" | tail -5
    failures=$((failures + 1))
  else
    echo "ok: hostir $command $* -> $(grep -m1 -- "$want" <<<"$output")"
  fi
}

expect_early_error sp-mlp "--ffn (32) must divide by the number of ranks (3)" --ranks 3 --tokens 64 --hidden 8 --ffn 32
expect_early_error sp-mlp "does not exist" --ranks 2 --tokens 64 --hidden 8 --ffn 16 --trace /nonexistent_hostir_dir/t
expect_early_error sp-mlp "does not exist" --ranks 2 --tokens 64 --hidden 8 --ffn 16 --json /nonexistent_hostir_dir/r.json
expect_early_error sp-layer "--heads (6) must divide by the number of ranks (4)" --ranks 4 --tokens 64 --hidden 24 --heads 6 --ffn 16
expect_early_error sp-layer "--heads (4) must divide by the number of ranks (3)" --ranks 3 --tokens 63 --hidden 24 --heads 4 --ffn 48
expect_early_error sp-layer "--hidden (20) must divide by --heads (8)" --ranks 2 --tokens 64 --hidden 20 --heads 8 --ffn 16
expect_early_error sp-layer "does not exist" --ranks 2 --tokens 64 --hidden 8 --heads 2 --ffn 16 --json /nonexistent_hostir_dir/r.json

exit $((failures > 0))
