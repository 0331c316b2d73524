#!/usr/bin/env bash
# Issue 20, item 6: `--help` of every subcommand prints its usage and exits 0;
# an extra argument is an error naming it, a mistyped flag gets a "did you
# mean"; `hostir list` columns never touch.
# Usage: cli_help_test.sh HOSTIR_BINARY
set -uo pipefail
hostir=$1
failures=0

for command in "" list passes print lower run sp-mlp sp-layer targets trace launch; do
  # shellcheck disable=SC2086
  output=$("$hostir" $command --help 2>&1)
  status=$?
  if [[ $status -ne 0 ]]; then
    echo "FAIL: hostir $command --help exited with $status"
    echo "$output" | tail -3
    failures=$((failures + 1))
  elif ! grep -qi -- "usage" <<<"$output"; then
    echo "FAIL: hostir $command --help printed no usage:"
    echo "$output" | tail -3
    failures=$((failures + 1))
  else
    echo "ok: hostir $command --help"
  fi
done

for command in print lower; do
  output=$("$hostir" $command stream_matmul extra 2>&1)
  status=$?
  if [[ $status -eq 0 ]] || ! grep -q "extra" <<<"$output"; then
    echo "FAIL: hostir $command stream_matmul extra: exit $status, want an error naming 'extra':"
    echo "$output" | tail -3
    failures=$((failures + 1))
  else
    echo "ok: hostir $command stream_matmul extra -> $(grep -m1 extra <<<"$output")"
  fi
done

# A mistyped flag is refused with the nearest flag suggested.
for case in "sp-mlp --tokns 64|--tokens" "run stream_matmul --runz 3|--runs" \
            "targets --rank 2|--ranks"; do
  args=${case%|*}
  want=${case#*|}
  # shellcheck disable=SC2086
  output=$("$hostir" $args 2>&1)
  status=$?
  if [[ $status -eq 0 ]] || ! grep -q -- "did you mean $want?" <<<"$output"; then
    echo "FAIL: hostir $args: exit $status, want 'did you mean $want?':"
    echo "$output" | tail -3
    failures=$((failures + 1))
  else
    echo "ok: hostir $args -> $(grep -m1 'did you mean' <<<"$output")"
  fi
done

# `hostir list`: every name is followed by at least two spaces, and the first
# word is a name `hostir print` accepts.
while read -r line; do
  name=${line%% *}
  if [[ "$line" != "$name  "* ]] || ! "$hostir" print "$name" >/dev/null 2>&1; then
    echo "FAIL: hostir list line '$line': the name does not stand apart or is not printable"
    failures=$((failures + 1))
  fi
done < <("$hostir" list)
echo "checked hostir list"

exit $((failures > 0))
