#!/usr/bin/env bash
# Issue 36: overlap without annotations. `hostir sp-mlp|sp-layer --chunks
# none` builds the block without a Stream split; with HOSTIR_OVERLAP on for
# that program, insert_stream_splits pipelines the allgathers the cost model
# says pay, on every rank alike, and says why for every collective. The link
# is fixed with HOSTIR_LINK_MODEL so the decisions do not depend on the
# machine: a slow link (100 MB/s) chunks, a fast one (100 GB/s) does not.
# Usage: cli_overlap_test.sh HOSTIR_BINARY
source "${0%/*}/cli_helpers.sh"

run() {
  "$hostir" "$@" --ranks 2 --tokens 512 --hidden 256 --ffn 1024 --runs 1 2>&1
}

expect_checks() {
  local name=$1 output=$2 want=$3
  local ok
  ok=$(grep -Ec "check .* (OK)$" <<<"$output")
  [[ $ok == "$want" ]] || fail "$name: want $want OK checks, got $ok"
  grep -q "MISMATCH" <<<"$output" && fail "$name: a check failed"
  grep -q '^\[rank 0\] PASSED$' <<<"$output" || fail "$name: not PASSED"
}

# A slow link: the MLP's allgather + GEMM is pipelined; its reduce-scatter
# is listed with its reason; both ranks' results match ATen.
out=$(HOSTIR_LINK_MODEL=100:0 run sp-mlp --chunks none --explain)
expect_checks "sp-mlp, slow link" "$out" 4
grep -qE "^\[rank 0\] pipelined, (2|4|8|16) chunks on the rows: allgather of T0_g_float" <<<"$out" ||
  fail "sp-mlp, slow link: want the allgather of x pipelined; got:
$(grep 'rank 0' <<<"$out" | grep -E 'pipelined|planning')"
grep -qE "^\[rank 0\]     the tail of the allgather of T0_g_float.*: reduce-scattered chunk by chunk" <<<"$out" ||
  fail "sp-mlp, slow link: want the reduce-scatter's reason"
grep -qE "^\[rank 0\]   automatic \((2|4|8|16) chunks\) " <<<"$out" || fail "sp-mlp, slow link: want the automatic program's time row"
grep -qE "^\[rank 0\]   FOR StreamIdx in iStreamIdx" <<<"$out" || fail "sp-mlp, slow link: want a stream loop in the printed host program"
# --explain: a traced run per program says, per collective, how long the
# streams waited for it (once per chunk in a loop) and how much of that no
# compute hid, which can be no more than the wait.
grep -qE "^\[rank 0\] exposed communication, automatic \((2|4|8|16) chunks\): measured on one traced run of this rank: [0-9.]+ ms, compute [0-9.]+ ms; waits for collectives exposed \(no compute running\) [0-9.]+ ms$" <<<"$out" ||
  fail "sp-mlp --explain: want the automatic program's measured exposure"
grep -qE "^\[rank 0\]   Allgather of T[0-9]+ into T[0-9]+ \(Communication [0-9]+\): (2|4|8|16) waits, [0-9.]+ ms waited, [0-9.]+ ms exposed$" <<<"$out" ||
  fail "sp-mlp --explain: want the pipelined allgather's waits, one per chunk"
grep -qE "^\[rank 0\]   Allgather of T0 into T[0-9]+ \(Communication [0-9]+\): 1 wait, " <<<"$out" ||
  fail "sp-mlp --explain: want the unchunked program's one allgather wait"
exposures=$(grep -E "^\[rank 0\]   (Allgather|ReduceScatter) of .* ms waited, .* ms exposed$" <<<"$out" |
  sed -E 's/.*: [0-9]+ waits?, ([0-9.]+) ms waited, ([0-9.]+) ms exposed$/\1 \2/')
[[ $(wc -l <<<"$exposures") == 4 ]] || fail "sp-mlp --explain: want 4 collective lines, got: $exposures"
awk '$2 > $1 + 0.005 { exit 1 }' <<<"$exposures" || fail "sp-mlp --explain: exposed more than waited: $exposures"

# HOSTIR_DUMP=overlap: the plan as the pass makes it, and after each sharded
# program's second run what its collectives cost it.
out=$(HOSTIR_DUMP=overlap HOSTIR_LINK_MODEL=100:0 "$hostir" sp-mlp --ranks 2 --tokens 512 \
  --hidden 256 --ffn 1024 --runs 2 --chunks none 2>&1)
grep -q '^\[rank 0\] === automatic stream splits:$' <<<"$out" || fail "HOSTIR_DUMP=overlap: want the plan; got: $(tail -3 <<<"$out")"
grep -q '^\[rank 0\] === exposed communication:$' <<<"$out" || fail "HOSTIR_DUMP=overlap: want the measured exposure"
grep -qE '^\[rank 0\]   Allgather of T[0-9]+ into T[0-9]+ \(Communication [0-9]+\): ' <<<"$out" ||
  fail "HOSTIR_DUMP=overlap: want the allgather's exposure"

# A fast link: nothing pays; the program stays as written.
out=$(HOSTIR_LINK_MODEL=100000:0 run sp-mlp --chunks none)
expect_checks "sp-mlp, fast link" "$out" 4
grep -qE "^\[rank 0\] not pipelined: allgather of T0_g_float" <<<"$out" ||
  fail "sp-mlp, fast link: want the allgather left unchunked"
grep -qE "^\[rank 0\]     predicted .* with 1 chunk\(s\)" <<<"$out" || fail "sp-mlp, fast link: want the prediction"
grep -q "FOR StreamIdx in iStreamIdx" <<<"$out" && fail "sp-mlp, fast link: want no stream loop"

# The layer: the attention's gathered tokens (read by the Q, K and V
# projections) and the MLP's allgather, each pipelined. 1024 tokens: at 512
# the projections' GEMMs (about 1 ms) bound what chunking can hide near the
# 1 ms a chunked program must gain.
out=$(HOSTIR_LINK_MODEL=100:0 "$hostir" sp-layer --chunks none --ranks 2 --tokens 1024 --hidden 256 \
  --ffn 1024 --runs 1 2>&1)
expect_checks "sp-layer, slow link" "$out" 4
pipelined=$(grep -cE "^\[rank 0\] pipelined, [0-9]+ chunks on the rows: allgather of" <<<"$out")
[[ $pipelined == 2 ]] || fail "sp-layer, slow link: want 2 pipelined allgathers, got $pipelined"
grep -qE "^\[rank 0\] pipelined, [0-9]+ chunks on the rows: allgather of .* into matmul\(.*\), matmul\(.*\), matmul\(" <<<"$out" ||
  fail "sp-layer, slow link: want the three projections in one pipelined allgather"

# A training step: the backward's allgathers are planned too.
out=$(HOSTIR_LINK_MODEL=100:0 run sp-mlp --chunks none --train --explain)
expect_checks "sp-mlp --train" "$out" 4
grep -q "^\[rank 0\] automatic stream splits, backward:$" <<<"$out" || fail "sp-mlp --train: want the backward's report"
grep -qE "^\[rank 0\] exposed communication, unchunked, backward: measured on one traced run" <<<"$out" ||
  fail "sp-mlp --train --explain: want the backward's measured exposure"

# Turned off: the pass leaves the program as written.
out=$(HOSTIR_DISABLE_PASS=insert_stream_splits HOSTIR_LINK_MODEL=100:0 run sp-mlp --chunks none)
expect_checks "pass disabled" "$out" 4
grep -q "pipelined, " <<<"$out" && fail "pass disabled: want nothing pipelined"

# A malformed link model is an error naming the variable and the format.
out=$(HOSTIR_LINK_MODEL=fast run sp-mlp --chunks none)
grep -q "HOSTIR_LINK_MODEL=fast is not a link model (no colon); valid: MBPS:LATENCY_MS" <<<"$out" ||
  fail "bad link model: want the error; got: $(tail -3 <<<"$out")"

finish "ok: automatic stream splits chunk on a slow link, decline on a fast one, explain each collective, measure its exposure"
