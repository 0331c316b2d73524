#!/usr/bin/python3
"""A compiled transcendental against ATen's, 1 thread on both sides.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/bench_unary_kernels.py [OP...]

For each OP (default: erf exp tanh) hostir runs neg(OP(x)) as one compiled
kernel (a lone OP runs through ATen, so the neg keeps it compiled; sin and
cos run through ATen in any segment, docs/kernels.md) and torch
runs torch.neg(torch.OP(x)); x is 4M float32 values from randn. The runs are
interleaved; medians of 9 are printed with their ratio.
"""

import statistics
import sys
import time

import torch

import hostir


def compiled(op):
    with hostir.FusionDefinition() as fd:
        t = fd.define_tensor(1)
        fd.add_output(fd.ops.neg(getattr(fd.ops, op)(t)))
    return fd


def main(ops):
    torch.set_num_threads(1)
    x = torch.randn(4_000_000)
    for op in ops:
        fd, reference = compiled(op), getattr(torch, op)
        (out,) = fd.execute([x])
        torch.testing.assert_close(out, torch.neg(reference(x)), rtol=2e-6, atol=2e-6)
        ours, theirs = [], []
        for _ in range(9):
            start = time.perf_counter()
            fd.execute([x])
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            torch.neg(reference(x))
            theirs.append(time.perf_counter() - start)
        a, b = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
        print(f"neg({op}(x)), 4M float32, 1 thread: hostir {a:.1f} ms, torch {b:.1f} ms, "
              f"ratio {a / b:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["erf", "exp", "tanh"])
