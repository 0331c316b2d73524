"""One training step of the sequence-parallel MLP block (examples/python_mlp.py's
Mlp) through hostir.autograd, twice, on every rank of a launch, at the
chunk count and intra-op thread count given: prints each rank's grads'
digest ("rank R grads DIGEST") and "rank R of N: OK" when the two steps'
grads are bitwise equal (issue 38, item 5; docs/reliability.md, "Bitwise
reproducibility").

    hostir launch -n 2 -- python3 determinism_script.py --chunks 2 --threads 1
"""

import argparse
import hashlib

import torch

from hostir import distributed as dist
from hostir.autograd import Differentiable
from sharding_helpers import Mlp, world


def one_step(ranks, rank, chunks, full, out_grad):
    """This rank's grads of its shards after one forward and backward."""
    fd = Mlp(chunks, devices=ranks)
    f = Differentiable(fd)
    mine = [t.clone().requires_grad_() for t in dist.shard_inputs(fd, full)]
    f(*mine).backward(out_grad.chunk(ranks, 0)[rank].contiguous())
    return [t.grad for t in mine]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    rank, ranks = world()
    torch.set_num_threads(args.threads)
    # Sizes fixed whatever the chunk count, so runs of other chunk counts
    # compute the same grads; large enough that a GEMM's sums are split
    # among threads.
    tokens, hidden, ffn = 64 * ranks, 128, 256 * ranks
    generator = torch.Generator().manual_seed(0)
    full = [torch.randn(tokens, hidden, generator=generator),
            torch.randn(ffn, hidden, generator=generator) * 0.1,
            torch.randn(hidden, ffn, generator=generator) * 0.1]
    out_grad = torch.randn(tokens, hidden, generator=generator)
    first = one_step(ranks, rank, args.chunks, full, out_grad)
    second = one_step(ranks, rank, args.chunks, full, out_grad)
    for i, (a, b) in enumerate(zip(first, second)):
        assert torch.equal(a, b), (f"rank {rank}: grad {i} differs between two steps by "
                                   f"{(a - b).abs().max().item()}")
    digest = hashlib.sha256(b"".join(g.numpy().tobytes() for g in first)).hexdigest()[:16]
    print(f"rank {rank} grads {digest}", flush=True)
    print(f"rank {rank} of {ranks}: OK", flush=True)


if __name__ == "__main__":
    main()
