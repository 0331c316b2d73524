#!/usr/bin/env bash
# The main job (sp-mlp) on 2 ranks placed in two network namespaces joined by
# a veth pair shaped with tc tbf, to emulate an interconnect slower than
# loopback: there, overlapping the allgather with the GEMM pays off.
#   sudo benchmarks/shaped_network_sp_mlp.sh [BUILD_DIR] [sp-mlp flags...]
#   RATE=2gbit (default 1gbit) sets the link rate.
# Creates only its own namespaces (hostir_ns0/1, addresses 10.213.0.1-2) and
# removes them on exit.
set -euo pipefail
build=${1:-build}
shift || true
rate=${RATE:-1gbit}
ns=(hostir_ns0 hostir_ns1)
dev=(hostir_veth0 hostir_veth1)
addr=(10.213.0.1 10.213.0.2)

cleanup() {
  for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup
for i in 0 1; do ip netns add "${ns[$i]}"; done
ip link add "${dev[0]}" type veth peer name "${dev[1]}"
for i in 0 1; do
  ip link set "${dev[$i]}" netns "${ns[$i]}"
  ip -n "${ns[$i]}" addr add "${addr[$i]}/24" dev "${dev[$i]}"
  ip -n "${ns[$i]}" link set "${dev[$i]}" up
  ip -n "${ns[$i]}" link set lo up
  ip netns exec "${ns[$i]}" tc qdisc add dev "${dev[$i]}" root tbf rate "$rate" burst 512kbit \
    latency 100ms
done

pids=()
for i in 0 1; do
  # Both ranks share this machine's cores: LOCAL_WORLD_SIZE=2 sizes each
  # rank's thread budget to its half.
  ip netns exec "${ns[$i]}" env RANK=$i WORLD_SIZE=2 LOCAL_RANK=$i LOCAL_WORLD_SIZE=2 \
    MASTER_ADDR="${addr[0]}" MASTER_PORT=29613 GLOO_SOCKET_IFNAME="${dev[$i]}" \
    "$build/tools/hostir" sp-mlp --link "veth shaped to $rate (tc tbf)" "$@" 2>&1 |
    sed "s/^/[rank $i] /" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
