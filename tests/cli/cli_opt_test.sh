#!/usr/bin/env bash
# Issue 40: `hostir opt` reads the textual host IR back: through the CLI,
# print -> parse -> print is the identity on every example's program and on
# both Megatron blocks for both ranks, on their fusions before each
# presegmentation pass, and on every lit test's input; --list-passes is the
# pass table of `hostir passes` (both stages), and each pass has a lit test
# (tests/lit/PASS.hir); a pass it cannot run on its input, a file it cannot
# read and text it cannot parse are errors that say so.
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
# A fusion before each presegmentation pass: the user's, then as each pass leaves it.
for pass in $("$hostir" passes | awk '$2 == "presegmentation" {print $4}'); do
  round_trip --example sp-layer --chunks 1 --stop-before "$pass"
  round_trip --example sp-mlp --chunks 2 --stop-before "$pass"
  round_trip --example mlp --stop-before "$pass"
done
# A lit test's input is a printed program (its comments aside).
for input in "$source_dir"/tests/lit/*.hir; do
  program=$(grep -v '^//' "$input" | sed '/./,$!d')
  reprinted=$("$hostir" opt - <<<"$program") || { fail "hostir opt cannot read $input"; continue; }
  [[ "$program" == "$reprinted" ]] ||
    { fail "$input does not read back the same:"; diff <(echo "$program") <(echo "$reprinted") | head; }
done

listed=$("$hostir" opt --list-passes | awk '{print $1}')
table=$("$hostir" passes | awk 'NR > 1 {print ($2 == "host" ? $5 : $4)}')
[[ $(wc -l <<<"$table") -ge 19 && "$listed" == "$table" ]] ||
  { fail "opt --list-passes is not the pass table of hostir passes:"; diff <(echo "$listed") <(echo "$table"); }
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
expect_error "--pass frobnicate names no pass; the passes are: validate_shardings, propagate_shardings" \
  --pass frobnicate --example mlp
expect_error "--pass propagate_shardings is a presegmentation pass: it runs on a fusion before segmentation, and the input is a host program" \
  --pass propagate_shardings --example mlp
expect_error "--pass buffer_shrinking is a host IR pass: it runs on a host program, and the input is a fusion" \
  --pass buffer_shrinking --example mlp --stop-before propagate_stream_axes
expect_error "cannot read the input /nonexistent.hir" /nonexistent.hir
expect_error "<stdin>:1:1: expected 'host_program', got end of input" -
# A text that starts with "fusion" is read as a fusion.
output=$("$hostir" opt - <<<"fusion vals" 2>&1) && fail "hostir opt read 'fusion vals'"
[[ "$output" == *"<stdin>:1:8: expected '{', got 'vals'"* ]] ||
  fail "hostir opt on 'fusion vals': expected \"<stdin>:1:8: expected '{', got 'vals'\" in: $output"

[[ $status == 0 ]] && echo "ok: hostir opt reads back what it prints (programs and fusions); every pass has a lit test; its errors say what is wrong"
exit $status
