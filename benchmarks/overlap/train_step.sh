#!/usr/bin/env bash
# Issue 35: one training step (forward + backward) of hostir against the
# hand-written torch.distributed steps (torch_sp_mlp_train.py,
# torch_sp_layer_train.py: Megatron-style blocking, Megatron's async, the
# whole-step pipeline), interleaved round by round, 2 ranks on loopback, 1
# intra-op thread per rank on both sides, then a median table
# (train_step_report.py).
# Usage: benchmarks/overlap/train_step.sh BUILD_DIR OUT_DIR [ROUNDS] [mlp|layer|both]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$1
out=$2
rounds=${3:-2}
which=${4:-both}
mkdir -p "$out"
export LOCAL_WORLD_SIZE=2 OMP_NUM_THREADS=1
for round in $(seq 1 "$rounds"); do
  if [[ $which != layer ]]; then
    "$build/tools/hostir" sp-mlp --ranks 2 --tokens 4096 --hidden 1024 --ffn 4096 --chunks 4,8 \
      --train --baselines --runs 3 --json "$out/hostir_mlp.$round.json" >"$out/hostir_mlp.$round.log" 2>&1
    /usr/bin/python3 benchmarks/overlap/torch_sp_mlp_train.py --chunks 4,8 --runs 3 \
      --json "$out/torch_mlp.$round.json" >"$out/torch_mlp.$round.log" 2>&1
  fi
  if [[ $which != mlp ]]; then
    "$build/tools/hostir" sp-layer --ranks 2 --tokens 2048 --hidden 1024 --heads 16 --ffn 4096 \
      --chunks 2,4 --train --baselines --runs 3 --json "$out/hostir_layer.$round.json" \
      >"$out/hostir_layer.$round.log" 2>&1
    /usr/bin/python3 benchmarks/overlap/torch_sp_layer_train.py --chunks 2,4 --runs 3 \
      --json "$out/torch_layer.$round.json" >"$out/torch_layer.$round.log" 2>&1
  fi
  echo "round $round done"
done
/usr/bin/python3 benchmarks/overlap/train_step_report.py "$out"
