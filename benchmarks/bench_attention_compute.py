#!/usr/bin/env python3
"""One rank's causal attention compute in the transformer layer, hostir
against torch, interleaved in one process with the same intra-op threads:
scores = q kᵀ / sqrt(hd) over this rank's heads, a causal softmax, p v, the
out-projection per head and the sum over the heads (what `hostir sp-layer`
computes between the allgather and the reduce-scatter).

(a) torch, whole: the masked [heads, T, T] scores, as the serial layer;
(b) torch, in C query blocks, as the hand-written pipelined layer
    (torch_sp_layer.py): block b against its key prefix [0, (b+1)·T/C) only,
    only the diagonal block masked (in place), the out-projection one GEMM
    over the heads ([rows, heads·hd] @ [heads·hd, H]);
(c) hostir, whole (fd.execute of the unchunked fusion);
(d) hostir in C query chunks (q's tokens Stream-split), every pass on;
(e) (d) with HOSTIR_DISABLE_PASS=causal_key_ranges: every chunk against
    every key;
(f) (d) with HOSTIR_DISABLE_PASS=batched_matmul_sums: the out-projection per
    head and a sum over the heads;
(g) (d) with HOSTIR_GEMM=aten: every GEMM (q·kᵀ, p·v, the out-projection)
    through ATen (OpenBLAS) instead of oneDNN.
Prints the median of each and its ratio to (b).

--keep-probabilities: the fusions also return the probabilities [heads, T, T]
(as the training forward keeps them for the backward; torch's blocks keep
each block's, as autograd would), so causal_key_ranges writes each tile's
visible keys into that output and zeros past them.

    /usr/bin/python3 benchmarks/bench_attention_compute.py [--tokens 2048] [--heads 8]
        [--head-dim 64] [--hidden 1024] [--chunks 4] [--runs 9] [--threads 1]
        [--keep-probabilities]
(with PYTHONPATH=<build>/python unless `./hostir.sh build` installed hostir).
"""

import argparse
import math
import os
import statistics
import time

import torch

import hostir


def define_attention(cache, head_dim, chunks, keep):
    """q, k, v [heads, T, hd], wo [heads, hd, H] -> sum over heads of
    (softmax(causal(q kᵀ / sqrt(hd))) v) wo, [T, H] (and with `keep` the
    probabilities)."""
    with hostir.FusionDefinition(cache) as fd:
        q_in, k, v, wo = (fd.define_tensor(3) for _ in range(4))
        q = fd.ops.set(q_in)
        scores = (q @ fd.ops.permute(k, [0, 2, 1])) * (1.0 / math.sqrt(head_dim))
        tokens = fd.ops.size(q_in, 1)
        mask = fd.ops.causal_mask(tokens, tokens)
        probs = fd.ops.softmax(fd.ops.where(mask, scores, float("-inf")), -1)
        fd.add_output(fd.ops.sum((probs @ v) @ wo, [0]))
        if keep:
            fd.add_output(probs)
        if chunks > 1:
            fd.sched.split(q, 1, chunks, inner_split=False)
            fd.sched.parallelize(q, 1, hostir.ParallelType.Stream)
    return fd


def lowered(head_dim, chunks, inputs, keep, disabled=None, gemm=None):
    if disabled:
        os.environ["HOSTIR_DISABLE_PASS"] = disabled
    fd = define_attention(hostir.FusionCache(), head_dim, chunks, keep)
    fd.execute(inputs)  # lowered now, with the passes the environment leaves on
    os.environ.pop("HOSTIR_DISABLE_PASS", None)
    if gemm is None:
        return lambda: fd.execute(inputs)

    def run():  # HOSTIR_GEMM is read as each GEMM runs
        os.environ["HOSTIR_GEMM"] = gemm
        try:
            return fd.execute(inputs)
        finally:
            os.environ.pop("HOSTIR_GEMM", None)
    return run


def torch_whole(q, k, v, wo):
    tokens = q.shape[1]
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[2])
    future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
    probs = torch.softmax(scores.masked_fill(future, float("-inf")), -1)
    return [((probs @ v) @ wo).sum(0), probs]


def torch_blocks(q, k, v, wo, chunks):
    heads, tokens, head_dim = q.shape
    wo_merged = wo.reshape(heads * head_dim, -1)
    rows = tokens // chunks
    out = torch.empty(tokens, wo.shape[2])
    kept = []
    # Only the diagonal block of each block's scores holds future keys: it is
    # masked in place, as torch_sp_layer.py does.
    diagonal_future = torch.ones(rows, rows, dtype=torch.bool).triu(1)
    for block in range(chunks):
        start, stop = block * rows, (block + 1) * rows
        scores = q[:, start:stop] @ k[:, :stop].transpose(1, 2)
        scores.mul_(1.0 / math.sqrt(head_dim))
        scores[:, :, start:].masked_fill_(diagonal_future, float("-inf"))
        probs = torch.softmax(scores, -1)
        kept.append(probs)
        attention = (probs @ v[:, :stop]).transpose(0, 1).reshape(stop - start, -1)
        torch.matmul(attention, wo_merged, out=out[start:stop])
    return [out, kept]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=8, help="this rank's heads")
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--chunks", type=int, default=4)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads, both sides")
    parser.add_argument("--keep-probabilities", action="store_true",
                        help="hostir's fusions also return the probabilities")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shape = (args.heads, args.tokens, args.head_dim)
    q, k, v = torch.randn(shape), torch.randn(shape), torch.randn(shape)
    wo = torch.randn(args.heads, args.head_dim, args.hidden) / args.hidden**0.5
    inputs = [q, k, v, wo]
    keep = args.keep_probabilities
    c = args.chunks
    programs = {
        "torch, whole (masked [heads, T, T])": lambda: torch_whole(q, k, v, wo),
        f"torch, {c} query blocks (key prefixes, one out-projection GEMM)":
            lambda: torch_blocks(q, k, v, wo, c),
        "hostir, whole": lowered(args.head_dim, 1, inputs, keep),
        f"hostir, {c} query chunks": lowered(args.head_dim, c, inputs, keep),
        f"hostir, {c} query chunks, causal_key_ranges off":
            lowered(args.head_dim, c, inputs, keep, "causal_key_ranges"),
        f"hostir, {c} query chunks, batched_matmul_sums off":
            lowered(args.head_dim, c, inputs, keep, "batched_matmul_sums"),
        f"hostir, {c} query chunks, HOSTIR_GEMM=aten":
            lowered(args.head_dim, c, inputs, keep, gemm="aten"),
    }
    expected, expected_probs = torch_whole(q, k, v, wo)
    for name, run in programs.items():
        outputs = run()
        error = (outputs[0] - expected).abs().max().item()
        assert error < 1e-3, f"{name}: max |diff| {error}"
        if keep and name.startswith("hostir"):
            error = (outputs[1] - expected_probs).abs().max().item()
            assert error < 1e-5, f"{name}: probabilities' max |diff| {error}"
    times = {name: [] for name in programs}
    for _ in range(args.runs):  # interleaved: each round runs every program once
        for name, run in programs.items():
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) * 1e3)
    baseline = statistics.median(times[list(programs)[1]])
    print(f"attention compute: T={args.tokens}, {args.heads} heads of {args.head_dim}, "
          f"H={args.hidden}, {torch.get_num_threads()} intra-op thread(s) on both sides, "
          f"medians of {args.runs} interleaved runs"
          + (", hostir keeps the probabilities" if keep else ""))
    for name in programs:
        median = statistics.median(times[name])
        print(f"  {name:62s} {median:8.1f} ms   {median / baseline:5.2f} x torch blocks")


if __name__ == "__main__":
    main()
