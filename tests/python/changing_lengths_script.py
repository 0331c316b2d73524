"""Issue 37 item 4, run on every rank of a launch: one definition of the
sequence-parallel MLP block (examples/python_mlp.py's Mlp, optionally
in --chunks Stream chunks) fed a different number of tokens at every call,
forward and training step. Every call's output and grads are checked against
single-process torch; at the end the forward and the backward program were
each lowered once, and no kernel was compiled or loaded after the first
length (the
kernels take their extents at run time: one size class). Prints
"rank R of N: OK, L lengths"."""

import argparse

import torch

import hostir
from hostir import distributed as dist
from hostir.autograd import Differentiable
from sharding_helpers import Mlp, torch_mlp, world


def kernels_made():
    """Kernels this process compiled or loaded from the disk cache."""
    stats = hostir._C.kernel_cache_stats()
    return stats["compiled"] + stats["loaded_from_disk"]


def check(rank, what, got, want):
    scale = max(want.abs().max().item(), 1e-30)
    diff = (got - want).abs().max().item()
    assert diff <= 1e-4 * scale, f"rank {rank}: {what} off by {diff} (max |want| {scale})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1)
    parser.add_argument("--lengths", type=int, default=12,
                        help="how many different token counts to feed")
    args = parser.parse_args()
    rank, ranks = world()
    hidden, ffn = 16, 24 * ranks
    # Token counts a rank count divides, not all of them multiples of the
    # chunk count, in an order that grows and shrinks.
    lengths = [ranks * (3 + (7 * i) % 29) for i in range(args.lengths)]
    assert len(set(lengths)) == len(lengths), lengths

    fd = Mlp(args.chunks, devices=ranks)
    step = Differentiable(fd)
    torch.manual_seed(0)
    w1, w2 = torch.randn(ffn, hidden) * 0.2, torch.randn(hidden, ffn) * 0.2
    kernels_after_first = None
    for tokens in lengths:
        x, dy = torch.randn(tokens, hidden), torch.randn(tokens, hidden)
        leaves = [t.clone().requires_grad_() for t in (x, w1, w2)]
        (torch_mlp(*leaves) * dy).sum().backward()

        mine = [t.requires_grad_() for t in dist.shard_inputs(fd, [x, w1, w2])]
        y = step(*mine)
        check(rank, f"{tokens} tokens: output", y.detach(), torch_mlp(x, w1, w2).chunk(ranks, 0)[rank])
        y.backward(dy.chunk(ranks, 0)[rank].contiguous())
        expected = dist.shard_inputs(fd, [t.grad for t in leaves])
        for name, got, want in zip(("dx", "dw1", "dw2"), mine, expected):
            check(rank, f"{tokens} tokens: {name}", got.grad, want)
        if kernels_after_first is None:
            kernels_after_first = kernels_made()

    lowerings = (step._forward.num_lowerings(), step._backward.num_lowerings())
    assert lowerings == (1, 1), f"rank {rank}: lowered (forward, backward) {lowerings} times"
    made = kernels_made() - kernels_after_first
    assert made == 0, f"rank {rank}: {made} kernels compiled or loaded after the first length"
    print(f"rank {rank} of {ranks}: OK, {len(lengths)} lengths", flush=True)


if __name__ == "__main__":
    main()
