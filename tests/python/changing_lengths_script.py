"""Issue 37 item 4, run on every rank of a launch: one definition fed a
different number of tokens at every call, forward and training step:
the sequence-parallel MLP block (examples/python_mlp.py's Mlp) or, with
--program layer, the transformer layer (examples/transformer_layer.py),
optionally in --chunks Stream chunks. Every call's output and grads are
checked against single-process torch; at the end the forward and the
backward program were each lowered once, and no kernel was compiled or
loaded after the first length (the kernels take their extents at run time:
one size class). Prints "rank R of N: OK, L lengths"."""

import argparse

import torch

import hostir
from autograd_layer_script import torch_layer
from hostir import distributed as dist
from hostir.autograd import Differentiable
from sharding_helpers import Mlp, torch_mlp, world
from transformer_layer import TransformerLayer, draw_layer, fusion_inputs


def kernels_made():
    """Kernels this process compiled or loaded from the disk cache."""
    stats = hostir._C.kernel_cache_stats()
    return stats["compiled"] + stats["loaded_from_disk"]


def check(rank, what, got, want):
    scale = max(want.abs().max().item(), 1e-30)
    diff = (got - want).abs().max().item()
    assert diff <= 1e-4 * scale, f"rank {rank}: {what} off by {diff} (max |want| {scale})"


def mlp_program(chunks, ranks):
    """(definition, its inputs for `tokens` tokens, the torch reference)."""
    hidden, ffn = 16, 24 * ranks
    torch.manual_seed(0)
    w1, w2 = torch.randn(ffn, hidden) * 0.2, torch.randn(hidden, ffn) * 0.2
    return (Mlp(chunks, devices=ranks), lambda tokens: [torch.randn(tokens, hidden), w1, w2],
            torch_mlp)


def layer_program(chunks, ranks):
    """The transformer layer: 2 heads of 8 per rank, its weights drawn once
    (draw_layer's seed), x drawn per length."""
    heads, head_dim = 2 * ranks, 8

    class Sizes:
        hidden, ffn, tokens = heads * head_dim, 16 * ranks, 1

    weights = fusion_inputs(draw_layer(Sizes), heads)[1:]
    return (TransformerLayer(head_dim, ranks, chunks),
            lambda tokens: [torch.randn(tokens, Sizes.hidden)] + weights,
            lambda *t: torch_layer(head_dim, *t))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", choices=("mlp", "layer"), default="mlp")
    parser.add_argument("--chunks", type=int, default=1)
    parser.add_argument("--lengths", type=int, default=12,
                        help="how many different token counts to feed")
    args = parser.parse_args()
    rank, ranks = world()
    # Token counts a rank count divides, not all of them multiples of the
    # chunk count, in an order that grows and shrinks.
    lengths = [ranks * (3 + (7 * i) % 29) for i in range(args.lengths)]
    assert len(set(lengths)) == len(lengths), lengths

    fd, draw, reference = (mlp_program if args.program == "mlp" else layer_program)(
        args.chunks, ranks)
    step = Differentiable(fd)
    kernels_after_first = None
    for tokens in lengths:
        full = [t.clone() for t in draw(tokens)]  # shards may be these very tensors
        torch.manual_seed(tokens)
        dy = torch.randn(tokens, full[0].shape[1])
        leaves = [t.clone().requires_grad_() for t in full]
        (reference(*leaves) * dy).sum().backward()

        mine = [t.requires_grad_() for t in dist.shard_inputs(fd, full)]
        y = step(*mine)
        want = reference(*full).chunk(ranks, 0)[rank]
        check(rank, f"{tokens} tokens: output", y.detach(), want)
        y.backward(dy.chunk(ranks, 0)[rank].contiguous())
        expected = dist.shard_inputs(fd, [t.grad for t in leaves])
        for i, (got, want) in enumerate(zip(mine, expected)):
            check(rank, f"{tokens} tokens: grad of input {i}", got.grad, want)
        if kernels_after_first is None:
            kernels_after_first = kernels_made()

    lowerings = (step._forward.num_lowerings(), step._backward.num_lowerings())
    assert lowerings == (1, 1), f"rank {rank}: lowered (forward, backward) {lowerings} times"
    made = kernels_made() - kernels_after_first
    assert made == 0, f"rank {rank}: {made} kernels compiled or loaded after the first length"
    print(f"rank {rank} of {ranks}: OK, {len(lengths)} lengths", flush=True)


if __name__ == "__main__":
    main()
