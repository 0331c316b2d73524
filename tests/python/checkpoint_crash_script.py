"""A checkpoint save that fails or dies half-way (test_checkpoint.py).

Every rank builds examples/train_gpt.py's sharded model, takes a step and
saves $CKPT (its bytes' sha256 goes to $CKPT.first.sha256), takes another
step, then saves again twice with rank 0's torch.save broken:

1. torch.save raises OSError (a full disk): every rank must raise
   hostir.Error, $CKPT must be unchanged and no temporary file left;
   prints "rank R: failed save raised: <message>".
2. torch.save writes half of the file, then rank 0 SIGKILLs itself: the
   test checks that $CKPT still holds the first save's bytes.
"""

import hashlib
import io
import os
import signal
import sys
import types

import torch

import hostir
import hostir.checkpoint
import hostir.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import train_gpt  # noqa: E402


def step(sharded, optimizer, batch, ranks):
    optimizer.zero_grad()
    sharded(batch).backward()
    replicated = sharded.replicated()
    for p, total in zip(replicated, train_gpt.sum_over_ranks(ranks, [p.grad for p in replicated])):
        p.grad.copy_(total)
    optimizer.step()


def sha256(path):
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def main():
    path = os.environ["CKPT"]
    rank, ranks = dist.rank(), dist.world_size()
    dist.init()
    torch.set_num_threads(1)
    args = types.SimpleNamespace(layers=1, hidden=32, heads=4, ffn=64, context=32, chunks=1,
                                 seed=0)
    sharded = train_gpt.ShardedGPT(train_gpt.draw_model(args, 76), args, rank, ranks)
    optimizer = torch.optim.AdamW(sharded.parameters(), lr=1e-2)
    stream = train_gpt.Batches(torch.randint(76, (4096,)), args.context, 1, args.seed)
    step(sharded, optimizer, next(stream), ranks)
    hostir.checkpoint.save(path, sharded, optimizer, extra={"step": 1})
    if rank == 0:
        with open(path + ".first.sha256", "w") as file:
            file.write(sha256(path))
    step(sharded, optimizer, next(stream), ranks)

    real_save = torch.save

    def disk_full(payload, file):
        raise OSError(28, "No space left on device")

    if rank == 0:
        torch.save = disk_full
    try:
        hostir.checkpoint.save(path, sharded, optimizer, extra={"step": 2})
        print(f"rank {rank}: the failed save did not raise", flush=True)
        sys.exit(1)
    except hostir.Error as error:
        print(f"rank {rank}: failed save raised: {error}", flush=True)
    torch.save = real_save
    if rank == 0:
        leftovers = [name for name in os.listdir(os.path.dirname(path)) if name.endswith(".tmp")]
        print(f"rank 0: after the failed save: unchanged "
              f"{sha256(path) == open(path + '.first.sha256').read()}, temporary files "
              f"{leftovers}", flush=True)

    def dies_half_way(payload, file):
        buffer = io.BytesIO()
        real_save(payload, buffer)
        data = buffer.getvalue()
        file.write(data[:len(data) // 2])
        file.flush()
        os.fsync(file.fileno())
        print("rank 0: killed half-way through the save", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    if rank == 0:
        torch.save = dies_half_way
    hostir.checkpoint.save(path, sharded, optimizer, extra={"step": 2})
    print(f"rank {rank}: the save that should have died returned", flush=True)


if __name__ == "__main__":
    main()
