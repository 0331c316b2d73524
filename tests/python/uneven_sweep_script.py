"""Issue 37 item 1's sweep, run on every rank of a launch: the
sequence-parallel MLP block (examples/python_mlp.py's Mlp) forward, one
definition per chunk count, fed token counts the ranks need not divide
(torch.chunk's pieces: the first ranks hold ceil(tokens / ranks) rows, the
last fewer or none), against single-process torch. Prints
"rank R of N: OK, C cases"."""

import torch

from hostir import distributed as dist
from sharding_helpers import Mlp, torch_mlp, world

TOKENS = (1, 2, 7, 1000, 4095, 4097)
CHUNKS = (1, 3, 7, 16)


def main():
    rank, ranks = world()
    hidden, ffn = 8, 8 * ranks
    torch.manual_seed(0)
    w1, w2 = torch.randn(ffn, hidden) * 0.3, torch.randn(hidden, ffn) * 0.3
    cases = 0
    for chunks in CHUNKS:
        fd = Mlp(chunks, devices=ranks)
        for tokens in TOKENS:
            x = torch.randn(tokens, hidden)
            (y,) = fd.execute(dist.shard_inputs(fd, [x, w1, w2]))
            c = -(-tokens // ranks)
            want = torch_mlp(x, w1, w2)[min(rank * c, tokens):min((rank + 1) * c, tokens)]
            assert y.shape == want.shape, (
                f"rank {rank}: {tokens} tokens, {chunks} chunks: shape {tuple(y.shape)}, "
                f"want {tuple(want.shape)}")
            scale = max(want.abs().max().item(), 1e-30) if want.numel() else 1.0
            diff = (y - want).abs().max().item() if want.numel() else 0.0
            assert diff <= 1e-4 * scale, (
                f"rank {rank}: {tokens} tokens, {chunks} chunks: off by {diff} (max |want| {scale})")
            cases += 1
    print(f"rank {rank} of {ranks}: OK, {cases} cases", flush=True)


if __name__ == "__main__":
    main()
