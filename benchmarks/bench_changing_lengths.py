#!/usr/bin/env python3
"""Issue 37 item 4: what a new sequence length costs one definition.

    build/tools/hostir launch -n 2 -- /usr/bin/python3 benchmarks/bench_changing_lengths.py

The sequence-parallel MLP block of examples/python_mlp.py (x sharded on
tokens, the weights on the inner width, --chunks Stream chunks) or, with
--program layer, the transformer layer of examples/transformer_layer.py
(--heads heads of hidden / heads, causal attention), one training step
(hostir.autograd: forward + backward) per call. After a
warm-up at a length outside the sweep, each of --lengths token counts is
run once (the first call at that length) and then --repeats times again;
the ratio first / median(repeats) is what a change of length costs. Every
rank checks that the forward and backward were lowered once and that no
kernel was compiled or loaded during the sweep. Rank 0 prints the table and
the ratios' median, 90th percentile and maximum (target: call k <= 1.1x a
repeated call of the same length). 1 intra-op thread per rank.

With --engine torch, the same sweep times each rank's compute as plain torch
autograd instead (its shards of the weights on the whole tokens, forward +
backward, no communication: what a new length costs a process without
hostir, on the same machine).

With --memory, rank 0 also prints per length the minor page faults of the
first call and the median of the repeats' (getrusage), and at the end
glibc's heap (mallinfo2: memory from the system, heap and mappings; not
under jemalloc). The title line says which malloc the ranks run on:
`HOSTIR_MALLOC=jemalloc` before the launcher preloads jemalloc
(docs/streams.md, "Buffers across runs").
"""

import argparse
import ctypes
import os
import pathlib
import random
import resource
import statistics
import sys
import time

import torch

import hostir
from hostir import distributed as dist
from hostir.autograd import Differentiable

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
from python_mlp import Mlp  # noqa: E402
from transformer_layer import TransformerLayer, compute_only, draw_layer, fusion_inputs  # noqa: E402


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


def malloc_from_system_mib():
    """glibc's heap and its own mappings, in MiB (what malloc took from the system)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return (info.arena + info.hblkhd) / 2**20


def allocator():
    """The malloc the ranks run on: jemalloc when the launcher preloaded it
    (HOSTIR_MALLOC=jemalloc, docs/streams.md), else glibc's."""
    return "jemalloc" if "libjemalloc" in os.environ.get("LD_PRELOAD", "") else "glibc"


def kernels_made():
    stats = hostir._C.kernel_cache_stats()
    return stats["compiled"] + stats["loaded_from_disk"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--ffn", type=int, default=2048)
    parser.add_argument("--chunks", type=int, default=4)
    parser.add_argument("--program", choices=("mlp", "layer"), default="mlp")
    parser.add_argument("--heads", type=int, default=8, help="the layer's attention heads")
    parser.add_argument("--engine", choices=("hostir", "torch"), default="hostir",
                        help="torch: each rank's compute as plain torch autograd, no communication")
    parser.add_argument("--memory", action="store_true",
                        help="also print page faults per call and malloc's heap at the end")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rank, ranks = dist.init(), dist.world_size()
    torch.manual_seed(0)
    if args.program == "mlp":
        fd = Mlp(args.chunks, devices=ranks)
        weights = [torch.randn(args.ffn, args.hidden) * 0.05,
                   torch.randn(args.hidden, args.ffn) * 0.05]
        title = "the MLP block"
    else:
        fd = TransformerLayer(args.hidden // args.heads, ranks, args.chunks)
        sizes = argparse.Namespace(tokens=1, hidden=args.hidden, ffn=args.ffn)  # x drawn per call
        weights = fusion_inputs(draw_layer(sizes), args.heads)[1:]
        title = f"the transformer layer ({args.heads} heads)"
    step = Differentiable(fd)

    def torch_step(x, mine):
        """The rank's compute as plain torch: the whole tokens, its shards."""
        x_full = x.detach().requires_grad_()
        if args.program == "mlp":
            F = torch.nn.functional
            return F.linear(F.gelu(F.linear(x_full, mine[1])), mine[2])
        return compute_only(x_full, mine, args.hidden // args.heads)

    def run(tokens):
        x = torch.randn(tokens, args.hidden)
        dy = torch.randn(tokens, args.hidden)
        mine = [t.detach().requires_grad_() for t in dist.shard_inputs(fd, [x] + weights)]
        dist.barrier()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        if args.engine == "torch":
            torch_step(x, mine).backward(dy)
        else:
            step(*mine).backward(dy.chunk(ranks, 0)[rank].contiguous())
        dist.barrier()
        elapsed = (time.perf_counter() - start) * 1e3
        return elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults

    run(ranks * 700)  # warm-up: lowering, kernels, packed weights
    before = kernels_made()
    # Token counts the rank count divides, from 512 to 2048, in a random
    # order (the same on every rank), as batches of varying length come.
    lengths = random.Random(0).sample([ranks * n for n in range(256, 1025)], args.lengths)
    rows = []
    for tokens in lengths:
        first, first_faults = run(tokens)
        repeats = [run(tokens) for _ in range(args.repeats)]
        again = statistics.median(ms for ms, _ in repeats)
        faults = statistics.median(count for _, count in repeats)
        rows.append((tokens, first, again, first / again, first_faults, faults))
    made = kernels_made() - before
    if args.engine == "hostir":
        lowerings = (step._forward.num_lowerings(), step._backward.num_lowerings())
        assert lowerings == (1, 1), f"rank {rank}: lowered (forward, backward) {lowerings} times"
        assert made == 0, f"rank {rank}: {made} kernels compiled or loaded during the sweep"
    if rank == 0:
        what = (f"{args.chunks} chunks" if args.engine == "hostir" else
                "each rank's compute as plain torch autograd, no communication")
        print(f"one training step of {title} (hidden {args.hidden}, ffn {args.ffn}, {what}), "
              f"{ranks} ranks, 1 thread per rank, malloc: {allocator()}, "
              f"{len(lengths)} lengths; first call / median of {args.repeats} repeats")
        print(f"{'tokens':>7} {'first ms':>9} {'repeat ms':>9} {'ratio':>6}" +
              (f" {'faults first':>12} {'repeat':>7}" if args.memory else ""))
        for tokens, first, again, ratio, first_faults, faults in rows:
            print(f"{tokens:>7} {first:>9.1f} {again:>9.1f} {ratio:>6.3f}" +
                  (f" {first_faults:>12} {faults:>7.0f}" if args.memory else ""))
        ratios = sorted(row[3] for row in rows)
        p90 = ratios[min(len(ratios) - 1, int(0.9 * len(ratios)))]
        print(f"ratio: median {statistics.median(ratios):.3f}, 90th percentile {p90:.3f}, "
              f"max {ratios[-1]:.3f}" + (
                  f"; lowerings (forward, backward) {lowerings}; "
                  f"kernels compiled or loaded during the sweep: {made}"
                  if args.engine == "hostir" else ""))
        if args.memory:
            print(f"page faults per first call: mean {statistics.mean(r[4] for r in rows):.0f}, "
                  f"per repeat: mean {statistics.mean(r[5] for r in rows):.0f}; " + (
                      f"malloc's heap at the end {malloc_from_system_mib():.0f} MiB"
                      if allocator() == "glibc" else "jemalloc's heap not reported"))


if __name__ == "__main__":
    main()
