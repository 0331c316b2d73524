#!/usr/bin/env bash
# Issue 40: `hostir lower` prints the program that runs. It runs the
# Executor's pipeline (presegmentation included: presegmentAndLower), so its
# host program equals the one `hostir run` runs, on every example; on
# stream_three_sets presegmentation changes it (propagate_stream_axes makes
# the unmarked middle set stream-parallel: one loop, not two with the set
# between), which a lowering without presegmentation would print.
# Usage: cli_lower_test.sh HOSTIR_BINARY SOURCE_DIR
set -uo pipefail
hostir=$1

program() {  # the %HostIrContainer block of a command's output
  sed -n '/^%HostIrContainer/,/^} \/\/ %HostIrContainer/p'
}

status=0
for example in $("$hostir" list | awk '{print $1}'); do
  lowered=$("$hostir" lower "$example" | program) || { echo "FAIL: hostir lower $example"; exit 1; }
  ran=$("$hostir" run "$example" -n 1 | program) || { echo "FAIL: hostir run $example"; exit 1; }
  if [[ -z "$lowered" ]]; then
    echo "FAIL: hostir lower $example printed no host program"
    status=1
  elif [[ "$lowered" != "$ran" ]]; then
    echo "FAIL: hostir lower $example is not the program hostir run runs:"
    diff <(echo "$lowered") <(echo "$ran")
    status=1
  fi
done
[[ $status == 0 ]] && echo "ok: hostir lower prints the program hostir run runs, every example"

# stream_three_sets: one stream loop (presegmentation propagated the Stream
# axis to the middle set), the middle set inside it.
loops=$("$hostir" lower stream_three_sets | program | grep -c '^  FOR StreamIdx in ')
if [[ "$loops" != 1 ]]; then
  echo "FAIL: hostir lower stream_three_sets has $loops stream loops, expected 1 (presegmentation skipped?)"
  "$hostir" lower stream_three_sets
  status=1
else
  echo "ok: hostir lower stream_three_sets runs presegmentation (one loop)"
fi
# The segments: list names the HostUnits the program posts, not one a pass
# absorbed (mlp: the ReLU's unit, folded into the linear's GEMM with
# post-ops).
listed=$("$hostir" lower mlp | sed -n '/^segments:/,$p' | grep -o '^  HostUnit [0-9]*' | sort)
posted=$("$hostir" lower mlp | grep -o 'PostOnStream (HostUnit [0-9]*' | sed 's/PostOnStream (/  /' | sort -u)
if [[ -z "$listed" || "$listed" != "$posted" ]]; then
  echo "FAIL: hostir lower mlp lists segments [$listed] but posts [$posted]"
  status=1
else
  echo "ok: hostir lower lists the segments the program posts"
fi
exit $status
