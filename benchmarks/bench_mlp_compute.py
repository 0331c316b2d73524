#!/usr/bin/env python3
"""The MLP block's compute, y = linear(gelu(linear(x, w1)), w2), on one rank:
hostir against the strongest torch programs of it, interleaved in one
process with the same intra-op threads.

(a) torch eager: F.linear -> F.gelu -> F.linear (OpenBLAS GEMMs);
(b) torch with its oneDNN path and weights converted ahead, as
    torch.utils.mkldnn.to_mkldnn does for a module: x converted once,
    both GEMMs and the GELU on oneDNN tensors, the result converted back;
(c) hostir (fd.execute of the unchunked block): oneDNN GEMMs on weights
    packed once, the GELU a post-op of the first GEMM (the gemm_epilogues
    pass);
(d) the same with that pass off (HOSTIR_DISABLE_PASS=gemm_epilogues while
    it is lowered): the GELU a pass of its own over the first GEMM's result.
Prints the median of each and the ratios to the faster torch program.

    /usr/bin/python3 benchmarks/bench_mlp_compute.py [--tokens 4096] [--hidden 1024]
        [--ffn 4096] [--runs 7] [--threads 1]
(with PYTHONPATH=<build>/python unless `./hostir.sh build` installed hostir).
"""

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F
from torch.utils import mkldnn as torch_mkldnn

import hostir


def define_block(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        w1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        w2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.linear(fd.ops.gelu(fd.ops.linear(x, w1)), w2))
    return fd


def onednn_program(w1, w2):
    """Both linears as torch.utils.mkldnn.to_mkldnn makes them (weights
    reordered once), chained on oneDNN tensors."""
    first = torch.nn.Linear(w1.shape[1], w1.shape[0], bias=False)
    second = torch.nn.Linear(w2.shape[1], w2.shape[0], bias=False)
    with torch.no_grad():
        first.weight.copy_(w1)
        second.weight.copy_(w2)
    first, second = torch_mkldnn.to_mkldnn(first), torch_mkldnn.to_mkldnn(second)

    def run(x):
        h = torch._C._nn.mkldnn_linear(x.to_mkldnn(), first.weight, first.bias)
        return torch._C._nn.mkldnn_linear(F.gelu(h), second.weight, second.bias).to_dense()

    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--ffn", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads, both sides")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x = torch.randn(args.tokens, args.hidden)
    w1 = torch.randn(args.ffn, args.hidden) / args.hidden**0.5
    w2 = torch.randn(args.hidden, args.ffn) / args.ffn**0.5

    fd = define_block(hostir.FusionCache())
    fd.execute([x, w1, w2])  # lowered with every pass
    os.environ["HOSTIR_DISABLE_PASS"] = "gemm_epilogues"
    fd_unfolded = define_block(hostir.FusionCache())
    fd_unfolded.execute([x, w1, w2])  # lowered without the fold
    del os.environ["HOSTIR_DISABLE_PASS"]
    onednn = onednn_program(w1, w2)
    programs = {
        "torch eager (OpenBLAS)": lambda: F.linear(F.gelu(F.linear(x, w1)), w2),
        "torch oneDNN, weights ahead": lambda: onednn(x),
        "hostir fd.execute": lambda: fd.execute([x, w1, w2])[0],
        "hostir, gemm_epilogues off": lambda: fd_unfolded.execute([x, w1, w2])[0],
    }
    reference = programs["torch eager (OpenBLAS)"]()
    for name, program in programs.items():
        diff = (program() - reference).abs().max().item()
        print(f"{name}: max |diff| against torch eager = {diff:.3g}")

    samples = {name: [] for name in programs}
    for _ in range(args.runs):  # a, b, c, a, b, c, ...
        for name, program in programs.items():
            start = time.perf_counter()
            program()
            samples[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(times) * 1e3 for name, times in samples.items()}
    best_torch = min(medians["torch eager (OpenBLAS)"], medians["torch oneDNN, weights ahead"])
    print(
        f"MLP block compute, x[{args.tokens}, {args.hidden}], w1[{args.ffn}, {args.hidden}], "
        f"w2[{args.hidden}, {args.ffn}], {args.threads} intra-op thread(s) both sides, "
        f"median of {args.runs} interleaved runs:"
    )
    for name, median in medians.items():
        print(f"  {name:30s} {median:8.1f} ms   {median / best_torch:5.2f} x the faster torch")


if __name__ == "__main__":
    main()
