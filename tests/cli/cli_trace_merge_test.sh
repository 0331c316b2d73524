#!/usr/bin/env bash
# Issue 20, item 7: `hostir trace merge` makes one Chrome trace of every
# rank's: a 2-rank sp-mlp run traced per rank, merged, holds both ranks'
# lanes (pid = rank) and their events, and timeline.py draws it as one PNG;
# a file that is not a trace is an error naming it.
# Usage: cli_trace_merge_test.sh HOSTIR_BINARY
set -uo pipefail
hostir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$hostir" sp-mlp --tokens 64 --hidden 16 --ffn 32 --chunks 2 --runs 1 --trace "$work/t" \
  >"$work/run.log" 2>&1 || { echo "FAIL: the traced sp-mlp run"; tail -5 "$work/run.log"; exit 1; }
"$hostir" trace merge "$work/all.json" "$work"/t.rank0.json "$work"/t.rank1.json ||
  { echo "FAIL: hostir trace merge exited with $?"; exit 1; }
/usr/bin/python3 - "$work/all.json" <<'PY' || exit 1
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
spans = {e["pid"] for e in events if e.get("ph") == "X"}
assert names == {0: "rank 0", 1: "rank 1"}, names
assert spans == {0, 1}, spans
print("ok: merged trace has ranks", sorted(names), "with", len(events), "events")
PY

# One PNG of every rank from the merged file.
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/../../benchmarks/overlap/timeline.py" "$work/all.json" "$work/all.png" \
  >"$work/png.log" 2>&1 && [[ -s "$work/all.png" ]] && grep -q "lanes" "$work/png.log" ||
  { echo "FAIL: timeline.py on the merged trace"; cat "$work/png.log"; exit 1; }
echo "ok: $(cat "$work/png.log")"

echo '{"not": "a trace"}' >"$work/bad.json"
output=$("$hostir" trace merge "$work/out.json" "$work/bad.json" 2>&1)
if [[ $? -eq 0 ]] || ! grep -q "bad.json' is not a Chrome trace" <<<"$output"; then
  echo "FAIL: merging a non-trace: $output"
  exit 1
fi
echo "ok: a non-trace input -> $output"
