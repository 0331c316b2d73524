#!/usr/bin/env bash
# Issue 36's targets, measured: the un-annotated block (`--chunks none`, the
# automatic stream splits choose) against hostir's hand-annotated chunk
# counts and the unchunked program, interleaved in one run per job, on 2
# ranks over a veth pair shaped with tc tbf (500 Mbit/s and 1 Gbit/s), and on
# loopback at small sizes (where the pass must decline).
#   sudo benchmarks/overlap/automatic_splits.sh [BUILD_DIR] [OUT_DIR]
# RUNS (default 5) timed runs per program. Creates only its own namespaces
# (hostir_ns0/1, 10.213.0.1-2) and removes them on exit.
set -euo pipefail
build=${1:-build}
out=${2:-/tmp/hostir_automatic_splits}
runs=${RUNS:-5}
mkdir -p "$out"
link_ns=(hostir_ns0 hostir_ns1)
link_dev=(hostir_veth0 hostir_veth1)
link_addr=(10.213.0.1 10.213.0.2)
source "$(dirname "$0")/../shaped_link.sh"
trap shaped_link_down EXIT
shaped_link_up

shaped_job() {  # RATE JOB LOG [flags...]
  local rate=$1 job=$2 log=$3
  shift 3
  shaped_link_rate "$rate"
  local pids=() i
  for i in 0 1; do
    ip netns exec "${link_ns[$i]}" env RANK=$i WORLD_SIZE=2 LOCAL_RANK=$i LOCAL_WORLD_SIZE=2 \
      MASTER_ADDR="${link_addr[0]}" MASTER_PORT=29614 GLOO_SOCKET_IFNAME="${link_dev[$i]}" \
      "$build/tools/hostir" "$job" --link "veth shaped to $rate (tc tbf)" "$@" \
      >"$log.rank$i" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
}

summary() {  # LOG
  grep -E "^  (automatic|pipelined|unchunked)|^pipelined, |^not pipelined: allgather|planning took|^machine" "$1.rank0" |
    cut -c1-160
}

sizes=(--tokens 4096 --hidden 1024 --ffn 4096)
for rate in 500mbit 1gbit; do
  for job in sp-mlp sp-layer; do
    log="$out/${job}_$rate"
    echo "== $job, $rate, ${sizes[*]}, $runs runs"
    shaped_job "$rate" "$job" "$log" "${sizes[@]}" --chunks none,4,8,16 --runs "$runs" --json "$log.json"
    summary "$log"
  done
done
for job in sp-mlp sp-layer; do
  log="$out/${job}_loopback"
  echo "== $job, loopback, --tokens 256 --hidden 256 --ffn 1024, $((4 * runs)) runs"
  "$build/tools/hostir" "$job" --ranks 2 --tokens 256 --hidden 256 --ffn 1024 --chunks none \
    --runs $((4 * runs)) 2>&1 | sed -n 's/^\[rank 0\] //p' >"$log.rank0"
  summary "$log"
done
