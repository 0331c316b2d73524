#!/usr/bin/env bash
# Issue 11, item 8: numbers on the `hostir` command line. Every misuse ends
# with a non-zero exit and a message naming the flag and the value, never a
# crash, a truncation or a bare "stoi". Usage: cli_numbers_test.sh HOSTIR_BINARY
set -uo pipefail
hostir=$1
failures=0

# expect_error "what it must say" args...
expect_error() {
  local needle=$1
  shift
  local output status
  output=$("$hostir" "$@" 2>&1)
  status=$?
  if [[ $status -eq 0 || $status -ge 128 ]]; then
    echo "FAIL: hostir $* exited with $status (want an error exit, not 0 or a signal)"
    echo "$output" | tail -5
    failures=$((failures + 1))
  elif ! grep -q -- "$needle" <<<"$output"; then
    echo "FAIL: hostir $*: the message lacks '$needle':"
    echo "$output" | tail -5
    failures=$((failures + 1))
  else
    echo "ok: hostir $* -> $(grep -m1 -- "$needle" <<<"$output")"
  fi
}

expect_error "runs: Value 4294967296" run stream_matmul -n 4294967296
expect_error "runs: Value abc" run stream_matmul -n abc
expect_error "runs: Value 0" run stream_matmul -n 0
expect_error "runs: Value -3" run stream_matmul -n -3
expect_error "runs" sp-mlp --runs 4294967296
expect_error "streams" sp-mlp --streams 4294967296
expect_error "streams" sp-mlp --streams abc
expect_error "streams" sp-mlp --streams 0
expect_error "tokens" sp-mlp --tokens -5
expect_error "ranks" sp-mlp --ranks 99999999999

# A valid number still works.
if ! "$hostir" run stream_two_sets -n 2 >/dev/null 2>&1; then
  echo "FAIL: hostir run stream_two_sets -n 2 failed"
  failures=$((failures + 1))
fi
exit $((failures > 0))
