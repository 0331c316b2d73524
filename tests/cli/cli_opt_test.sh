#!/usr/bin/env bash
# Issue 40: `hostir opt` reads the textual host IR back: through the CLI,
# print -> parse -> print is the identity on every example's program and on
# both Megatron blocks for both ranks, on their fusions before each
# presegmentation pass, and on every lit test's input; --stop-before and
# --stop-after P print the example as it stands there, in P's stage's form
# (the fusion or a rank's host program) under a comment saying which, and
# --stop-after P is --stop-before the next pass; --list-passes is the
# pass table of `hostir passes` (both stages), and each pass has a lit test
# (tests/lit/PASS.hir); a pass it cannot run on its input, a file it cannot
# read and text it cannot parse are errors that say so.
# Usage: cli_opt_test.sh HOSTIR_BINARY SOURCE_DIR
set -uo pipefail
hostir=$1
source_dir=$2
status=0
fail() { echo "FAIL: $*"; status=1; }
opt() { "$hostir" opt "$@"; }

round_trip() {  # ARGS...: the program `opt ARGS` prints (its comment lines aside), parsed and printed again
  local printed reprinted
  printed=$(opt "$@" | grep -v '^//') || { fail "hostir opt $*"; return; }
  reprinted=$(opt --verify - <<<"$printed") || { fail "hostir opt - on opt $*"; return; }
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
  round_trip --example mlp --stop-before "$pass"  # sp-mlp's: below, with the stop points
done
# --stop-before / --stop-after P: the example as it stands before / after P,
# in the form of P's stage (the fusion, or rank 0's host program), under a
# comment that says which; after P it is what the next pass of P's stage sees.
declare -A before_text=() stage_of=()
stop_at() {  # before|after PASS: sp-mlp stopped there, checked for its label and form
  local point=$1 pass=$2 stage=${stage_of[$2]} form=host_program where="the host program of rank 0" printed label
  [[ $stage == presegmentation ]] && form=fusion where="the fusion (no host program yet)"
  printed=$(opt --example sp-mlp --chunks 2 --stop-"$point" "$pass") ||
    { fail "hostir opt --example sp-mlp --stop-$point $pass"; return; }
  label="// hostir opt --example sp-mlp: $where $point ${stage/host-IR/host IR} pass $pass"
  [[ $(sed -n 1p <<<"$printed") == "$label" && $(sed -n 2p <<<"$printed") == "$form {" ]] ||
    fail "--stop-$point $pass does not print '$label' and then $form: $(head -2 <<<"$printed")"
  stopped_text=$(sed 1d <<<"$printed")
}
while read -r stage pass; do
  stage_of[$pass]=$stage
  stop_at before "$pass"
  before_text[$pass]=$stopped_text
  # It reads back: every fusion, and a few of the host programs.
  if [[ $stage == presegmentation || " resharding_to_communication causal_key_ranges recompute_scheduling " == *" $pass "* ]]; then
    [[ "$(opt --verify - <<<"$stopped_text")" == "$stopped_text" ]] ||
      fail "opt --example sp-mlp --stop-before $pass does not read back the same"
  fi
done < <(opt --list-passes | awk '{print $2, $1}')
for pair in insert_reshardings:reorder_sharded_axis buffer_shrinking:batched_rhs_gemms \
            collective_scheduling:recompute_scheduling; do
  stop_at after "${pair%%:*}"
  [[ "$stopped_text" == "${before_text[${pair#*:}]}" ]] ||
    fail "--example sp-mlp: --stop-after ${pair%%:*} is not --stop-before ${pair#*:}"
done
stop_at after recompute_scheduling
[[ "$stopped_text" == "$(opt --example sp-mlp --chunks 2)" ]] ||
  fail "--stop-after the last pass (recompute_scheduling) is not the whole lowering"
[[ $(opt --example mlp --stop-after resharding_to_communication | head -2) == \
   "// hostir opt --example mlp: the host program after host IR pass resharding_to_communication (which does not run on a single-device example)"$'\n'"host_program {" ]] ||
  fail "--stop-after a multi-device pass on a single-device example does not say it did not run"

# A lit test's input is a printed program (its comments aside).
for input in "$source_dir"/tests/lit/*.hir; do
  program=$(grep -v '^//' "$input" | sed '/./,$!d')
  reprinted=$(opt - <<<"$program") || { fail "hostir opt cannot read $input"; continue; }
  [[ "$program" == "$reprinted" ]] ||
    { fail "$input does not read back the same:"; diff <(echo "$program") <(echo "$reprinted") | head; }
done

listed=$(opt --list-passes | awk '{print $1}')
table=$("$hostir" passes | awk 'NR > 1 {print ($2 == "host" ? $5 : $4)}')
[[ $(wc -l <<<"$table") -ge 19 && "$listed" == "$table" ]] ||
  { fail "opt --list-passes is not the pass table of hostir passes:"; diff <(echo "$listed") <(echo "$table"); }
for pass in $listed; do
  [[ -f "$source_dir/tests/lit/$pass.hir" ]] || fail "the pass $pass has no lit test tests/lit/$pass.hir"
done

expect_error() {  # EXPECTED-TEXT ARGS...: opt ARGS fails naming EXPECTED-TEXT
  local expected=$1 output
  shift
  if output=$(opt "$@" </dev/null 2>&1); then
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
expect_error "--stop-before frobnicate names no pass; the passes are: validate_shardings, propagate_shardings" \
  --example mlp --stop-before frobnicate
expect_error "--stop-after frobnicate names no pass; the passes are: validate_shardings" \
  --example mlp --stop-after frobnicate
expect_error "--stop-before buffer_shrinking and --stop-after loop_host_units both given: give one stop point" \
  --example mlp --stop-before buffer_shrinking --stop-after loop_host_units
expect_error "--stop-after buffer_shrinking without --example: it stops the lowering of a built-in example" \
  --stop-after buffer_shrinking /nonexistent.hir
expect_error "cannot read the input /nonexistent.hir" /nonexistent.hir
expect_error "<stdin>:1:1: expected 'host_program', got end of input" -
# A text that starts with "fusion" is read as a fusion.
output=$(opt - <<<"fusion vals" 2>&1) && fail "hostir opt read 'fusion vals'"
[[ "$output" == *"<stdin>:1:8: expected '{', got 'vals'"* ]] ||
  fail "hostir opt on 'fusion vals': expected \"<stdin>:1:8: expected '{', got 'vals'\" in: $output"

[[ $status == 0 ]] && echo "ok: hostir opt reads back what it prints (programs and fusions); every pass has a lit test; its errors say what is wrong"
exit $status
