#!/usr/bin/env bash
# Issue 19: `hostir sp-layer` end to end on 2 local ranks: every rank's
# output matches the single-process ATen reference (unchunked and with both
# halves in 2 Stream chunks), the printed host program holds the layer's
# collectives, each inside a chunk loop (attention: allgather, a
# reduce-scatter of each block pair's sums over the heads; MLP: allgather,
# reduce-scatter),
# each query chunk reads a prefix of the keys, and --json reports the
# programs and the heads; --chunks auto on a layer of 8 tokens.
# Usage: cli_sp_layer_test.sh HOSTIR_BINARY
source "${0%/*}/cli_helpers.sh"
json=$(mktemp --suffix=.json)
trap 'rm -f "$json"' EXIT

output=$("$hostir" sp-layer --ranks 2 --tokens 32 --hidden 16 --heads 4 --ffn 32 --chunks 2 \
  --runs 1 --json "$json" 2>&1)
status=$?
[[ $status -eq 0 ]] || fail "hostir sp-layer exited with $status"
for rank in 0 1; do
  [[ $(grep -c "^\[rank $rank\] check .* OK$" <<<"$output") -eq 2 ]] ||
    fail "rank $rank: want 2 checks OK (pipelined, unchunked)"
  grep -q "^\[rank $rank\] PASSED$" <<<"$output" || fail "rank $rank did not print PASSED"
done
program=$(sed -n '/== host program, pipelined (2 chunks):/,/^\[rank 0\] HostUnit/p' <<<"$output")
# A loop body's lines are indented 4 more than "[rank 0] ".
in_loop() { grep -c "^\[rank 0\]     Communication [0-9]* (type=$1" <<<"$program"; }
[[ $(in_loop Allgather) -eq 2 ]] || fail "want 2 Allgathers, each in a chunk loop"
[[ $(in_loop ReduceScatter) -eq 2 ]] ||
  fail "want 2 ReduceScatters (the attention's sums, the MLP's), each in a chunk loop"
# And after the query loop, the rows the last rank lacks (empty here: the
# shards are even), at the top level.
[[ $(grep -c "^\[rank 0\]   Communication [0-9]* (type=ReduceScatter" <<<"$program") -eq 1 ]] ||
  fail "want the attention's last rows reduce-scattered once after its loop"
[[ $(grep -c "Communication [0-9]* (type=" <<<"$program") -eq 5 ]] ||
  fail "want 5 collectives in the program"
grep -q "= slice( .*, 0, i[0-9]*, dim = 2 )" <<<"$program" ||
  fail "want a prefix of the keys (causal_key_ranges) in the query loop"
/usr/bin/python3 - "$json" <<'PY' || fail "--json report"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["config"]["heads"] == 4, report["config"]
names = [p["name"] for p in report["programs"]]
assert names == ["pipelined", "unchunked"], names
assert all(p["check"] for p in report["programs"]), report["programs"]
PY

# --chunks auto with fewer tokens than the largest chunk count its model
# prices (16): the layer's cost model must not divide by a tile of 0 rows.
auto_output=$("$hostir" sp-layer --ranks 2 --tokens 8 --hidden 16 --heads 2 --ffn 16 \
  --chunks auto --runs 1 2>&1)
status=$?
[[ $status -eq 0 ]] || fail "hostir sp-layer --tokens 8 --chunks auto exited with $status"
grep -q "^\[rank 0\] auto chunks: " <<<"$auto_output" ||
  fail "--tokens 8 --chunks auto: want the auto choice printed"
[[ $(grep -c "^\[rank [01]\] PASSED$" <<<"$auto_output") -eq 2 ]] ||
  fail "--tokens 8 --chunks auto: want both ranks PASSED"

if [[ $failures -gt 0 ]]; then
  echo "$output" | tail -40
  echo "$auto_output" | tail -20
  exit 1
fi
echo "ok: hostir sp-layer on 2 ranks"
