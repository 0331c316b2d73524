"""The transformer layer of examples/transformer_layer.py (sequence + tensor
parallel) differentiated by hostir on every rank of a launch: each rank's
grads of its shards of every input (x, both layer norms, the per-head
projections, the MLP weights) against single-process torch autograd on the
same layer written with torch ops. `python3 autograd_layer_script.py CHUNKS`;
prints "rank R of N: OK"."""

import math
import os
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))

from transformer_layer import TransformerLayer, draw_layer, fusion_inputs  # noqa: E402

from hostir import distributed as dist  # noqa: E402
from hostir.autograd import Differentiable  # noqa: E402


def torch_layer(head_dim, x, ln1_w, ln1_b, wq, wk, wv, wo, ln2_w, ln2_b, w1, w2):
    """The fusion's math with torch ops, on its input layout (per-head
    projections [heads, H, hd], wo [heads, hd, H])."""
    f = torch.nn.functional
    xn = f.layer_norm(x, [x.shape[1]], ln1_w, ln1_b, 1e-5)
    q, k, v = xn @ wq, xn @ wk, xn @ wv
    scores = (q @ k.permute(0, 2, 1)) * (1.0 / math.sqrt(head_dim))
    tokens = x.shape[0]
    mask = torch.ones(tokens, tokens, dtype=torch.bool).tril()
    probs = torch.softmax(torch.where(mask, scores, float("-inf")), -1)
    h = x + ((probs @ v) @ wo).sum(0)
    m = f.linear(f.layer_norm(h, [h.shape[1]], ln2_w, ln2_b, 1e-5), w1)
    return h + f.linear(f.gelu(m), w2)


def main():
    chunks = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    ranks = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))

    class Sizes:
        tokens, hidden, ffn = 16 * ranks * chunks, 32, 64 * ranks

    heads = 2 * ranks
    head_dim = Sizes.hidden // heads
    full = fusion_inputs(draw_layer(Sizes), heads)
    leaves = [t.clone().requires_grad_() for t in full]
    out_grad = torch.randn(Sizes.tokens, Sizes.hidden)
    (torch_layer(head_dim, *leaves) * out_grad).sum().backward()

    fd = TransformerLayer(head_dim, ranks, chunks)
    layer = Differentiable(fd)
    mine = [t.requires_grad_() for t in dist.shard_inputs(fd, full)]
    layer(*mine).backward(out_grad.chunk(ranks, 0)[rank].contiguous())
    expected = dist.shard_inputs(fd, [t.grad for t in leaves])
    for i, (got, want) in enumerate(zip(mine, expected)):
        diff = (got.grad - want).abs().max().item()
        assert diff <= 1e-4 * want.abs().max().item(), f"rank {rank}: grad {i} off by {diff}"
    print(f"rank {rank} of {ranks}: OK")


if __name__ == "__main__":
    main()
