"""The sequence-parallel MLP block trained through hostir.autograd on every
rank of a launch: x[S, H] sharded on tokens, w1[F, H] and w2[H, F] on the
inner width, h (and, with --chunks C, its tokens in C Stream chunks). Each
rank checks the grads of its shards against single-process torch autograd,
for each save policy, then takes AdamW steps through hostir.autograd.Module
and checks the updated shards; prints "rank R of N: OK"."""

import argparse
import re

import torch

from hostir import distributed as dist
from hostir.autograd import Differentiable, Module
from sharding_helpers import Mlp, torch_mlp, world


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1)
    args = parser.parse_args()
    rank, ranks = world()
    tokens, hidden, ffn = 8 * ranks * args.chunks, 16, 24 * ranks

    torch.manual_seed(0)
    full = [torch.randn(tokens, hidden), torch.randn(ffn, hidden) * 0.2,
            torch.randn(hidden, ffn) * 0.2]
    out_grad = torch.randn(tokens, hidden)
    leaves = [t.clone().requires_grad_() for t in full]
    (torch_mlp(*leaves) * out_grad).sum().backward()

    allgathers = {}
    for save in ("gemm_outputs", "gathered", "nothing"):
        fd = Mlp(args.chunks, devices=ranks)
        f = Differentiable(fd, save=save)
        mine = [t.requires_grad_() for t in dist.shard_inputs(fd, full)]
        y = f(*mine)
        y.backward(out_grad.chunk(ranks, 0)[rank].contiguous())
        expected = dist.shard_inputs(fd, [t.grad for t in leaves])
        for i, (got, want) in enumerate(zip(mine, expected)):
            scale = want.abs().max().item()
            diff = (got.grad - want).abs().max().item()
            assert diff <= 1e-4 * scale, f"rank {rank} save={save}: grad {i} off by {diff}"
        allgathers[save] = f.backward_host_ir.count("type=Allgather")
        if rank == 0 and save == "gemm_outputs":
            program = f.backward_host_ir
            assert "ReduceScatter" in program and "Allgather" in program, program
            if args.chunks > 1 and ranks > 1:
                # The forward's chunks carry to the grads: dy's allgather is
                # posted chunk by chunk in a loop (pipelined with the dgrad
                # GEMM, as the forward's allgather of x with its GEMM).
                in_loop = re.search(r"FOR StreamIdx[^\n]*\n(?:    .*\n)*?    Communication \d+ "
                                    r"\(type=Allgather", program)
                assert in_loop, program

    if ranks > 1:
        # save="gathered": the forward keeps x gathered, the backward
        # gathers only dy (one collective, or one per chunk in a loop).
        assert allgathers["gathered"] == allgathers["gemm_outputs"] - 1, allgathers

    # Three AdamW steps on the weights' shards against torch on the whole.
    fd = Mlp(args.chunks, devices=ranks)
    x, w1, w2 = dist.shard_inputs(fd, full)
    module = Module(fd, {"w1": (1, w1), "w2": (2, w2)})
    reference = [torch.nn.Parameter(full[1].clone()), torch.nn.Parameter(full[2].clone())]
    ours = torch.optim.AdamW(module.parameters(), lr=0.01)
    theirs = torch.optim.AdamW(reference, lr=0.01)
    for _ in range(3):
        ours.zero_grad()
        theirs.zero_grad()
        # The loss of this rank's rows; the sum over ranks is the whole loss,
        # and each weight shard's grad sums over every rank's rows inside
        # hostir's backward (its reduce-scatters and allgathers).
        module(x).square().sum().backward()
        torch_mlp(full[0], *reference).square().sum().backward()
        ours.step()
        theirs.step()
    expected = dist.shard_inputs(fd, [full[0], reference[0].detach(), reference[1].detach()])
    for name, want in (("w1", expected[1]), ("w2", expected[2])):
        diff = (getattr(module, name).detach() - want).abs().max().item()
        assert diff <= 1e-4, f"rank {rank}: {name} after 3 AdamW steps off by {diff}"
    print(f"rank {rank} of {ranks}: OK")


if __name__ == "__main__":
    main()
