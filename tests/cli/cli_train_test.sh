#!/usr/bin/env bash
# Issue 35: `hostir sp-mlp --train` and `hostir sp-layer --train` on 2 local
# ranks: every program's step (the forward, then hostir's backward program)
# gives every rank the grads of every input within 1e-4 of single-process
# autograd; rank 0 prints the backward host program (with the backward's
# allgathers and reduce-scatters, inserted by the sharding passes) and the
# step's time per program; --json says train and holds each program's step
# times; the compute alone and the communication alone are each step's own
# (its collectives with its compute skipped), and the pipelined step is read
# against the bound they give; the backward's communication alone is timed
# with the bytes rank 0 sends (the MLP's: dy and x re-gathered, dx
# reduce-scattered, each half a [tokens, hidden] float tensor).
# Usage: cli_train_test.sh HOSTIR_BINARY
source "${0%/*}/cli_helpers.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

check_run() {
  local name=$1 output=$2 json=$3 programs=$4 backward_bytes=${5:-}
  local checks
  checks=$(grep -Ec "check .* step's grads of every input against single-process autograd: max \|diff\| / max \|grad\| = [0-9.e+-]+ OK$" <<<"$output")
  [[ $checks == $((2 * programs)) ]] || fail "$name: want $((2 * programs)) OK grad checks (2 ranks x $programs programs), got $checks"
  grep -q "MISMATCH" <<<"$output" && fail "$name: a grad check failed"
  grep -q '^\[rank 0\] == backward host program, pipelined (2 chunks):$' <<<"$output" ||
    fail "$name: want the backward host program printed"
  local backward
  backward=$(sed -n '/== backward host program/,/} \/\/ %HostIrContainer/p' <<<"$output")
  grep -q "type=Allgather" <<<"$backward" || fail "$name: want an Allgather in the backward"
  grep -q "type=ReduceScatter" <<<"$backward" || fail "$name: want a ReduceScatter in the backward"
  grep -q "FOR StreamIdx" <<<"$backward" || fail "$name: want a stream loop in the backward"
  grep -q '^\[rank 0\] time of one training step, forward + backward' <<<"$output" ||
    fail "$name: want the step's time table"
  grep -Eq '^\[rank 0\]   compute only \(hostir\), 2 chunks +[0-9.]+ ms$' <<<"$output" ||
    fail "$name: want the step's own compute alone"
  grep -Eq '^\[rank 0\]   communication only, 2 chunks +[0-9.]+ ms$' <<<"$output" ||
    fail "$name: want the step's own communication alone"
  grep -Eq '^\[rank 0\]   backward communication, 2 chunks +[0-9.]+ ms   [0-9.]+ MiB sent by this rank$' \
    <<<"$output" || fail "$name: want the backward's communication alone and its bytes"
  grep -Eq '^\[rank 0\]   (fraction of the ideal gain, pipelined \(2 chunks\)|pipelined \(2 chunks\) ran)' \
    <<<"$output" || fail "$name: want the pipelined step read against its bound"
  grep -q '^\[rank 0\] PASSED$' <<<"$output" || fail "$name: want PASSED"
  /usr/bin/python3 - "$json" "$programs" "$backward_bytes" <<'PY' || fail "$name: --json"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["config"]["train"] is True, report["config"]
steps = [p for p in report["programs"] if p["name"] in ("pipelined", "unchunked")]
assert len(steps) == int(sys.argv[2]), steps
assert all(p["check"] and p["median_ms"] > 0 and len(p["runs_ms"]) == 2 for p in steps), steps
assert any(p["name"] == "compute-only" for p in report["programs"]), report["programs"]
assert any(p["name"] == "comm-only" and p.get("chunks") == 2 for p in report["programs"]), report
assert all("bound_ms" in p for p in steps if p["name"] == "pipelined"), steps
backward = [p for p in report["programs"]
            if p["name"] == "comm-only-backward" and p.get("chunks") == 2]
assert len(backward) == 1 and backward[0]["median_ms"] > 0, report["programs"]
want = int(sys.argv[3]) if sys.argv[3] else None
assert backward[0]["sent_bytes"] == want if want else backward[0]["sent_bytes"] > 0, backward
PY
}

output=$(timeout 600 "$hostir" sp-mlp --ranks 2 --tokens 128 --hidden 64 --ffn 256 --chunks 2 \
  --train --baselines --runs 2 --json "$dir/mlp.json" 2>&1)
status=$?
[[ $status == 0 ]] || fail "sp-mlp --train exited with $status"
check_run sp-mlp "$output" "$dir/mlp.json" 2 $((3 * 64 * 64 * 4))

output=$(timeout 600 "$hostir" sp-layer --ranks 2 --tokens 64 --hidden 64 --heads 4 --ffn 128 \
  --chunks 2 --train --baselines --runs 2 --json "$dir/layer.json" 2>&1)
status=$?
[[ $status == 0 ]] || fail "sp-layer --train exited with $status"
check_run sp-layer "$output" "$dir/layer.json" 2

# --save gathered: the forward keeps x gathered (filled by its pipelined
# allgather's chunks: still one allgather there), so the backward gathers
# dy alone; the grads still match, with uneven shards (127 tokens) too.
output=$(timeout 600 "$hostir" sp-mlp --ranks 2 --tokens 127 --hidden 64 --ffn 256 --chunks 2 \
  --train --save gathered --runs 1 2>&1)
status=$?
[[ $status == 0 ]] || fail "sp-mlp --train --save gathered exited with $status"
checks=$(grep -Ec "check .* step's grads of every input against single-process autograd: .* OK$" <<<"$output")
[[ $checks == 4 ]] || fail "--save gathered: want 4 OK grad checks, got $checks"
forward=$(sed -n '/== host program, pipelined (2 chunks)/,/} \/\/ %HostIrContainer/p' <<<"$output")
backward=$(sed -n '/== backward host program/,/} \/\/ %HostIrContainer/p' <<<"$output")
[[ $(grep -c "type=Allgather" <<<"$forward") == 1 ]] ||
  fail "--save gathered: want the forward's one (pipelined) allgather"
[[ $(grep -c "type=Allgather" <<<"$backward") == 1 ]] ||
  fail "--save gathered: want one allgather (dy's) in the backward"
output=$("$hostir" sp-mlp --train --save everything 2>&1) &&
  fail "--save everything: want a refusal"
grep -q -- "--save: everything not in {gemm_outputs,gathered}" <<<"$output" ||
  fail "--save everything: want an error naming --save and its values, got: $output"

finish "cli.train: OK"
