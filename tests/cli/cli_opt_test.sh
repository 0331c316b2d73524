#!/usr/bin/env bash
# Issue 40: `hostir opt` reads the textual host IR back: through the CLI,
# print -> parse -> print is the identity on every example's program and on
# both Megatron blocks for both ranks and on every lit test's input;
# --list-passes is the host IR stage of `hostir passes`, and each of those
# passes has a lit test (tests/lit/PASS.hir); a pass it cannot run, a file it
# cannot read and text it cannot parse are errors that say so.
# Usage: cli_opt_test.sh HOSTIR_BINARY SOURCE_DIR
set -uo pipefail
hostir=$1
source_dir=$2
status=0
fail() { echo "FAIL: $*"; status=1; }

round_trip() {  # ARGS...: the program `opt ARGS` prints, parsed and printed again
  local printed reprinted
  printed=$("$hostir" opt "$@") || { fail "hostir opt $*"; return; }
  reprinted=$("$hostir" opt --verify - <<<"$printed") || { fail "hostir opt - on opt $*"; return; }
  [[ "$printed" == "$reprinted" ]] || { fail "opt $* does not read back the same:"; diff <(echo "$printed") <(echo "$reprinted") | head; }
}
for example in $("$hostir" list | awk '{print $1}'); do
  round_trip --example "$example"
done
for block in sp-mlp sp-layer; do
  for device in 0 1; do
    round_trip --example "$block" --chunks 2 --device "$device"
  done
done
# A lit test's input is a printed program (its comments aside).
for input in "$source_dir"/tests/lit/*.hir; do
  program=$(grep -v '^//' "$input" | sed '/./,$!d')
  reprinted=$("$hostir" opt - <<<"$program") || { fail "hostir opt cannot read $input"; continue; }
  [[ "$program" == "$reprinted" ]] ||
    { fail "$input does not read back the same:"; diff <(echo "$program") <(echo "$reprinted") | head; }
done

listed=$("$hostir" opt --list-passes | awk '{print $1}')
table=$("$hostir" passes | awk '$2 == "host" && $3 == "IR" {print $5}')
[[ -n "$listed" && "$listed" == "$table" ]] ||
  { fail "opt --list-passes is not the host IR stage of hostir passes:"; diff <(echo "$listed") <(echo "$table"); }
for pass in $listed; do
  [[ -f "$source_dir/tests/lit/$pass.hir" ]] || fail "the pass $pass has no lit test tests/lit/$pass.hir"
done

expect_error() {  # EXPECTED-TEXT ARGS...: opt ARGS fails naming EXPECTED-TEXT
  local expected=$1 output
  shift
  if output=$("$hostir" opt "$@" </dev/null 2>&1); then
    fail "hostir opt $* succeeded; expected an error naming '$expected'"
  elif [[ "$output" != *"$expected"* ]]; then
    fail "hostir opt $*: expected '$expected' in: $output"
  fi
}
expect_error "--pass frobnicate names no pass; the host IR passes are: resharding_to_communication" \
  --pass frobnicate --example mlp
expect_error "--pass propagate_shardings is a presegmentation pass" --pass propagate_shardings --example mlp
expect_error "cannot read the host program /nonexistent.hir" /nonexistent.hir
expect_error "<stdin>:1:1: expected 'host_program', got end of input" -

[[ $status == 0 ]] && echo "ok: hostir opt reads back what it prints; every host IR pass has a lit test; its errors say what is wrong"
exit $status
