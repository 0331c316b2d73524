#!/usr/bin/env bash
# Issue 37, items 2 and 3: `hostir sp-mlp` and `hostir sp-layer` with Stream
# chunk counts that do not divide each rank's token rows (chunks of
# ceilDiv(rows, chunks) rows, the last ones shorter, or empty when there are
# more chunks than rows), on 3 ranks (and 2), forward and --train, with
# --baselines' communication-only run of such chunks; every rank's check
# against single-process ATen / autograd passes; 3 and 6 heads on 3 ranks
# run (4 are refused before any rank starts: cli_sp_mlp_args_test.sh).
# Item 1: sp-mlp with --tokens the ranks do not divide (torch.chunk's
# pieces through the pipelined allgather + GEMM and its reduce-scatter
# tail), forward and --train, on 2 and 3 ranks, 1 token on 3 ranks (two
# ranks empty); the same for sp-layer.
# Usage: cli_uneven_chunks_test.sh HOSTIR_BINARY
source "${0%/*}/cli_helpers.sh"

# expect_checks RANKS CHECKS COMMAND ARGS...: exit 0, every rank prints
# CHECKS checks OK and PASSED.
expect_checks() {
  local ranks=$1 checks=$2 output status rank
  shift 2
  output=$("$hostir" "$@" --ranks "$ranks" --runs 1 2>&1)
  status=$?
  [[ $status -eq 0 ]] || fail "hostir $* --ranks $ranks exited with $status"
  for ((rank = 0; rank < ranks; ++rank)); do
    [[ $(grep -c "^\[rank $rank\] check .* OK$" <<<"$output") -eq $checks ]] ||
      fail "hostir $* --ranks $ranks: rank $rank: want $checks checks OK"
    grep -q "^\[rank $rank\] PASSED$" <<<"$output" ||
      fail "hostir $* --ranks $ranks: rank $rank did not print PASSED"
  done
  grep -q "FAIL\|rror" <<<"$output" && fail "hostir $* --ranks $ranks printed an error"
  echo "ok: hostir $* --ranks $ranks"
  last_output=$output
}

# 7 rows per rank in 3 chunks (3, 3, 1) and in 7; 2 rows per rank in 7 chunks
# (5 of them empty).
expect_checks 3 3 sp-mlp --tokens 21 --hidden 16 --ffn 48 --chunks 3,7
expect_checks 2 2 sp-mlp --tokens 4 --hidden 16 --ffn 32 --chunks 7
expect_checks 3 2 sp-mlp --tokens 21 --hidden 16 --ffn 48 --chunks 3 --train
expect_checks 2 2 sp-mlp --tokens 14 --hidden 16 --ffn 32 --chunks 3 --baselines
grep -q "communication only" <<<"$last_output" ||
  fail "--baselines: want the communication-only run of 3 chunks of 7 rows"
# The automatic stream splits on a slow link pipeline 255 rows per rank
# (which no count but 1 divides) in 2 to 16 chunks.
HOSTIR_LINK_MODEL=100:0 expect_checks 2 2 sp-mlp --tokens 510 --hidden 256 --ffn 1024 --chunks none
grep -qE "^\[rank 0\] pipelined, (2|4|8|16) chunks on the rows: allgather of T0_g_float" \
  <<<"$last_output" || fail "--chunks none, 255 rows per rank: want the allgather pipelined"
expect_checks 3 3 sp-layer --tokens 21 --hidden 24 --heads 3 --ffn 48 --chunks 3,7
expect_checks 3 2 sp-layer --tokens 15 --hidden 24 --heads 6 --ffn 48 --chunks 7 --train

# Item 1: tokens the ranks do not divide. 4,095 on 2 ranks (2,048 + 2,047),
# 4,097 on 3 (1,366 + 1,366 + 1,365), 1 on 3 (1 + 0 + 0).
expect_checks 2 3 sp-mlp --tokens 4095 --hidden 16 --ffn 32 --chunks 3,16
expect_checks 2 2 sp-mlp --tokens 4095 --hidden 16 --ffn 32 --chunks 7 --train
expect_checks 3 2 sp-mlp --tokens 4097 --hidden 16 --ffn 48 --chunks 7
expect_checks 3 2 sp-mlp --tokens 4097 --hidden 16 --ffn 48 --chunks 3 --train
expect_checks 3 2 sp-mlp --tokens 1 --hidden 16 --ffn 48 --chunks 3 --train
# The automatic stream splits pipeline uneven shards too (511 + 510 rows).
HOSTIR_LINK_MODEL=100:0 expect_checks 2 2 sp-mlp --tokens 1021 --hidden 256 --ffn 1024 --chunks none
grep -qE "^\[rank 0\] pipelined, (2|4|8|16) chunks on the rows: allgather of T0_g_float" \
  <<<"$last_output" || fail "--chunks none, 1,021 tokens: want the allgather pipelined"
# The transformer layer: the attention's sums reduce-scattered chunk by
# chunk onto uneven rows (the rows the last rank lacks after the loop),
# forward and --train, chunked and not (refused before).
expect_checks 2 3 sp-layer --tokens 4095 --hidden 32 --heads 2 --ffn 32 --chunks 3,16
expect_checks 2 2 sp-layer --tokens 4095 --hidden 32 --heads 2 --ffn 32 --chunks 7 --train
expect_checks 3 2 sp-layer --tokens 4097 --hidden 24 --heads 3 --ffn 48 --chunks 7
expect_checks 3 2 sp-layer --tokens 4097 --hidden 24 --heads 3 --ffn 48 --chunks 3 --train
expect_checks 3 2 sp-layer --tokens 1 --hidden 24 --heads 3 --ffn 48 --chunks 3 --train

finish
