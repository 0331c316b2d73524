#!/usr/bin/env bash
# Issue 35: one training step (forward + backward) of hostir against the
# hand-written torch.distributed steps (torch_sp_mlp_train.py,
# torch_sp_layer_train.py: Megatron-style blocking, Megatron's async, the
# whole-step pipeline), interleaved round by round, 2 ranks, 1 intra-op
# thread per rank on both sides, then a median table (train_step_report.py).
# Usage: benchmarks/overlap/train_step.sh BUILD_DIR OUT_DIR [ROUNDS] [mlp|layer|both]
# RATE=500mbit (as root) runs both sides' ranks in two network namespaces
# joined by a veth pair shaped with tc tbf (benchmarks/shaped_link.sh);
# unset: loopback.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$1
out=$2
rounds=${3:-2}
which=${4:-both}
rate=${RATE:-loopback}
mkdir -p "$out"
export OMP_NUM_THREADS=1
# OpenBLAS unpinned on an AVX-512 CPU, Haswell on the AVX2 leg (blas_kernels.sh).
source benchmarks/blas_kernels.sh
blas_kernels_match_the_leg
source benchmarks/rank_malloc.sh
rank_malloc_for_both_sides "$build/tools/hostir"
# The torch steps measure their peak memory with hostir.memory, as hostir's.
export PYTHONPATH="$(cd "$build" && pwd)/python${PYTHONPATH:+:$PYTHONPATH}"

link_ns=(hostir_train_ns0 hostir_train_ns1)
link_dev=(hostir_train0 hostir_train1)
link_addr=(10.214.0.1 10.214.0.2)
if [[ $rate != loopback ]]; then
  source benchmarks/shaped_link.sh
  trap shaped_link_down EXIT
  shaped_link_up
  shaped_link_rate "$rate"
fi
port=29800

# ranks NAME CMD...: CMD as rank 0 and rank 1 (in the namespaces when the
# link is shaped), each rank's output in $out/NAME.rankN.log; fails if either
# rank fails.
ranks() {
  local name=$1 i status=0 pids=()
  shift
  port=$((port + 1))
  for i in 0 1; do
    local master=127.0.0.1 ifname=lo prefix=()
    if [[ $rate != loopback ]]; then
      master=${link_addr[0]} ifname=${link_dev[$i]}
      prefix=(ip netns exec "${link_ns[$i]}")
    fi
    "${prefix[@]}" env RANK=$i WORLD_SIZE=2 LOCAL_RANK=$i LOCAL_WORLD_SIZE=2 MASTER_ADDR="$master" \
      MASTER_PORT=$port GLOO_SOCKET_IFNAME="$ifname" timeout -k 10 1800 "$@" \
      >"$out/$name.rank$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || status=1; done
  return $status
}

link="loopback"
[[ $rate != loopback ]] && link="veth shaped to $rate (tc tbf)"
for round in $(seq 1 "$rounds"); do
  if [[ $which != layer ]]; then
    ranks "hostir_mlp.$round" "$build/tools/hostir" sp-mlp --tokens 4096 --hidden 1024 \
      --ffn 4096 --chunks 4,8 --train --baselines --runs 3 --link "$link" \
      --json "$out/hostir_mlp.$round.json"
    ranks "torch_mlp.$round" /usr/bin/python3 benchmarks/overlap/torch_sp_mlp_train.py \
      --chunks 4,8 --runs 3 --comm-only --json "$out/torch_mlp.$round.json"
  fi
  if [[ $which != mlp ]]; then
    ranks "hostir_layer.$round" "$build/tools/hostir" sp-layer --tokens 2048 --hidden 1024 \
      --heads 16 --ffn 4096 --chunks 2,4 --train --baselines --runs 3 --link "$link" \
      --json "$out/hostir_layer.$round.json"
    ranks "torch_layer.$round" /usr/bin/python3 benchmarks/overlap/torch_sp_layer_train.py \
      --chunks 2,4 --runs 3 --json "$out/torch_layer.$round.json"
  fi
  echo "round $round done"
done
/usr/bin/python3 benchmarks/overlap/train_step_report.py "$out" --rate "$rate"
