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
link_ns=(hostir_ns0 hostir_ns1)
link_dev=(hostir_veth0 hostir_veth1)
link_addr=(10.213.0.1 10.213.0.2)
source "$(dirname "$0")/shaped_link.sh"
# --baselines' `compute only (ATen)` runs OpenBLAS: unpinned on an AVX-512 CPU,
# Haswell on the AVX2 leg (blas_kernels.sh).
source "$(dirname "$0")/blas_kernels.sh"
blas_kernels_match_the_leg
source "$(dirname "$0")/rank_malloc.sh"
rank_malloc_for_both_sides "$build/tools/hostir"
trap shaped_link_down EXIT
shaped_link_up
shaped_link_rate "$rate"

pids=()
for i in 0 1; do
  # Both ranks share this machine's cores: LOCAL_WORLD_SIZE=2 sizes each
  # rank's thread budget to its half.
  ip netns exec "${link_ns[$i]}" env RANK=$i WORLD_SIZE=2 LOCAL_RANK=$i LOCAL_WORLD_SIZE=2 \
    MASTER_ADDR="${link_addr[0]}" MASTER_PORT=29613 GLOO_SOCKET_IFNAME="${link_dev[$i]}" \
    "$build/tools/hostir" sp-mlp --link "veth shaped to $rate (tc tbf)" "$@" 2>&1 |
    sed "s/^/[rank $i] /" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
