"""Issue 37's sweep beyond the MLP forward, run on every rank of a launch:
the sequence-parallel MLP block's training step and the transformer layer
(examples/transformer_layer.py) forward and training step, one definition
per chunk count, fed token counts the ranks need not divide (torch.chunk's
pieces: the first ranks hold ceil(tokens / ranks) rows, the last fewer or
none), against single-process torch. Small widths keep it fast; the large
token counts run at one chunk count each. Prints "rank R of N: OK, C cases".
"""

import torch

from autograd_layer_script import torch_layer
from hostir import distributed as dist
from hostir.autograd import Differentiable
from sharding_helpers import Mlp, torch_mlp, world
from transformer_layer import TransformerLayer, draw_layer, fusion_inputs

CHUNKS = (1, 3, 7, 16)
MLP_TOKENS = (1, 2, 7, 1000)
# The MLP step's chunk counts: 1 leaves the split to hostir's automatic
# stream splits (whose GEMM-rate probe once drew from torch's generator on
# the ranks that had rows, so the ranks drew different tensors for the next
# length and the w1 grads looked wrong), the others are written by hand.
MLP_STEP_CHUNKS = (1, 3, 7, 16)
LAYER_TOKENS = (1, 2, 7, 100)
# The long sequences, at one chunk count: 4095 and 4097 tokens.
LARGE = {1: (4095, 7), 2: (4095, 3), 3: (4097, 7), 4: (4097, 16)}  # (tokens, chunks)


def rows_of(rank, ranks, tensor):
    """This rank's torch.chunk rows of `tensor` (empty past the last piece)."""
    c = -(-tensor.shape[0] // ranks)
    return tensor[min(rank * c, tensor.shape[0]):min((rank + 1) * c, tensor.shape[0])]


def check(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)}, want {tuple(want.shape)}"
    if want.numel() == 0:
        return
    scale = max(want.abs().max().item(), 1e-30)
    diff = (got - want).abs().max().item()
    assert diff <= 1e-4 * scale, f"{what}: off by {diff} (max |want| {scale})"


def training_step(fd, step, full, reference, rank, ranks, what):
    """Forward + hostir's backward (`step`, fd's Differentiable: one per
    definition, whatever the length) on this rank's shards of `full`,
    checked against torch autograd through `reference` on the whole."""
    leaves = [t.clone().requires_grad_() for t in full]
    out = reference(*leaves)
    out_grad = torch.randn(out.shape)
    (out * out_grad).sum().backward()
    mine = [t.requires_grad_() for t in dist.shard_inputs(fd, full)]
    y = step(*mine)
    check(y.detach(), rows_of(rank, ranks, out.detach()), what + ": forward")
    y.backward(rows_of(rank, ranks, out_grad).contiguous())
    expected = dist.shard_inputs(fd, [t.grad for t in leaves])
    for i, (got, want) in enumerate(zip(mine, expected)):
        check(got.grad, want, f"{what}: grad {i}")


def cases(tokens, chunks, ranks):
    large, large_chunks = LARGE[ranks]
    return list(tokens) + ([large] if chunks == large_chunks else [])


def main():
    rank, ranks = world()
    torch.manual_seed(0)
    count = 0
    hidden, ffn = 8, 8 * ranks
    w1, w2 = torch.randn(ffn, hidden) * 0.3, torch.randn(hidden, ffn) * 0.3
    for chunks in MLP_STEP_CHUNKS:
        fd = Mlp(chunks, devices=ranks)
        step = Differentiable(fd)
        for tokens in cases(MLP_TOKENS, chunks, ranks):
            what = f"rank {rank}: MLP step, {tokens} tokens, {chunks} chunks"
            full = [torch.randn(tokens, hidden), w1, w2]
            training_step(fd, step, full, torch_mlp, rank, ranks, what)
            count += 1

    heads = ranks
    head_dim = 4

    class Sizes:
        hidden, ffn = heads * head_dim, 8 * ranks

    for chunks in CHUNKS:
        fd = TransformerLayer(head_dim, ranks, chunks)
        step = Differentiable(fd)
        for tokens in cases(LAYER_TOKENS, chunks, ranks):
            Sizes.tokens = tokens
            full = fusion_inputs(draw_layer(Sizes), heads)
            what = f"rank {rank}: layer, {tokens} tokens, {chunks} chunks"
            (y,) = fd.execute(dist.shard_inputs(fd, full))
            check(y, rows_of(rank, ranks, torch_layer(head_dim, *full)), what + ": forward")
            training_step(fd, step, full, lambda *t: torch_layer(head_dim, *t), rank, ranks,
                          what + ": step")
            count += 2
    print(f"rank {rank} of {ranks}: OK, {count} cases", flush=True)


if __name__ == "__main__":
    main()
