#!/usr/bin/env bash
# Issue 36: `hostir lower --explain sp-mlp|sp-layer` lowers the block as
# written (no Stream split) and says, per collective the automatic overlap
# pass looked at, whether it can be pipelined, on which axis, and why not;
# the chunk count and predicted time wait for the sizes of a first run,
# which it says, naming the command that prints them. An example without
# collectives is an error naming it and the valid ones.
# Usage: cli_lower_explain_test.sh HOSTIR_BINARY
source "${0%/*}/cli_helpers.sh"

out=$("$hostir" lower --explain sp-mlp 2>&1) || fail "sp-mlp: exit status $?"
grep -q "^%HostIrContainer" <<<"$out" || fail "sp-mlp: want the host program printed"
grep -q "FOR StreamIdx" <<<"$out" && fail "sp-mlp: want the program as written, no stream loop"
grep -q "^overlap (insert_stream_splits), rank 0:$" <<<"$out" || fail "sp-mlp: want the overlap section"
grep -qE "^not pipelined: allgather of T0_g_float.*'s rows into linear" <<<"$out" ||
  fail "sp-mlp: want the allgather of x on its rows"
grep -q "^    no sizes known yet: the executor decides at the first run$" <<<"$out" ||
  fail "sp-mlp: want why the allgather has no chunk count yet"
grep -qE "^    the tail of the allgather of T0_g_float.*: reduce-scattered chunk by chunk" <<<"$out" ||
  fail "sp-mlp: want the reduce-scatter's reason"
grep -q "hostir sp-mlp --chunks none --explain\` prints them" <<<"$out" ||
  fail "sp-mlp: want the command that measures"

out=$("$hostir" lower --explain sp-layer --device 1 2>&1) || fail "sp-layer: exit status $?"
grep -q "^overlap (insert_stream_splits), rank 1:$" <<<"$out" || fail "sp-layer: want rank 1's section"
[[ $(grep -c "^not pipelined: allgather of .*'s rows into" <<<"$out") == 2 ]] ||
  fail "sp-layer: want the attention's and the MLP's allgathers"
[[ $(grep -c "^    the tail of the allgather of " <<<"$out") == 2 ]] ||
  fail "sp-layer: want both tails with their reasons"

out=$("$hostir" lower --explain mlp 2>&1) && fail "mlp: want a failure"
grep -q "hostir lower --explain: 'mlp' has no collectives to explain; give sp-mlp or sp-layer" <<<"$out" ||
  fail "mlp: want the error; got: $out"

# Plain `hostir lower` is unchanged by the flag's existence.
"$hostir" lower mlp >/dev/null 2>&1 || fail "plain hostir lower mlp fails"

finish "ok: hostir lower --explain says per collective what the automatic overlap pass can do"
