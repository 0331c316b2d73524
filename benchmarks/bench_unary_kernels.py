#!/usr/bin/python3
"""A compiled transcendental against ATen's, 1 thread on both sides.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/bench_unary_kernels.py [OP...]

For each OP (default: erf exp tanh) hostir runs neg(OP(x)) as one compiled
kernel and torch runs torch.neg(torch.OP(x)), then each runs OP(x) alone (a
lone transcendental runs through ATen in hostir, docs/kernels.md: the line
says which engine ran); x is 4M float32 values from randn. The runs are
interleaved; medians of 9 are printed with their ratio, in the process's
CPU time (steadier than wall time on a shared machine; both sides run on 1
thread, so it is their work). For sin and cos the
largest error in ulps against torch's float64 op is printed too, per range
of |x|, for hostir's and for torch's float32 op.
"""

import statistics
import sys
import time

import torch

import hostir


def definition(op, fused):
    with hostir.FusionDefinition() as fd:
        t = fd.define_tensor(1)
        y = getattr(fd.ops, op)(t)
        fd.add_output(fd.ops.neg(y) if fused else y)
    return fd


def ulps(actual, truth):
    # The error in units in the last place of float32, at the truth's float32.
    rounded = truth.float().double().abs()
    exponent = torch.frexp(rounded)[1].double() - 1
    exponent = torch.where(rounded > 0, exponent.clamp(min=-126), torch.tensor(-126.0).double())
    return ((actual.double() - truth).abs() / torch.pow(2.0, exponent - 23)).max().item()


def accuracy(op):
    torch.manual_seed(0)
    fd = definition(op, False)
    for bound in (1.0, 100.0, 1e4, 1e8, 1073741760.0):
        x = ((torch.rand(1 << 20, dtype=torch.float64) * 2 - 1) * bound).float()
        truth = getattr(torch, op)(x.double())
        (ours,) = fd.execute([x])
        theirs = getattr(torch, op)(x)
        print(f"  {op} |x| < {bound:g}: hostir {ulps(ours, truth):.3f} ulp, "
              f"torch float32 {ulps(theirs, truth):.3f} ulp")


def main(ops):
    torch.set_num_threads(1)
    x = torch.randn(4_000_000)
    for op in ops:
        reference = getattr(torch, op, None) or getattr(torch.nn.functional, op)
        for fused in (True, False):
            fd = definition(op, fused)
            theirs_fn = (lambda: torch.neg(reference(x))) if fused else (lambda: reference(x))
            (out,) = fd.execute([x])
            torch.testing.assert_close(out, theirs_fn(), rtol=2e-6, atol=2e-6)
            ours, theirs = [], []
            for _ in range(9):
                start = time.process_time()
                fd.execute([x])
                ours.append(time.process_time() - start)
                start = time.process_time()
                theirs_fn()
                theirs.append(time.process_time() - start)
            a, b = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
            engine = "compiled" if "compiled kernel" in fd.execution() else "ATen"
            name = f"neg({op}(x))" if fused else f"{op}(x) alone"
            print(f"{name}, 4M float32, 1 thread: hostir ({engine}) {a:.1f} ms, "
                  f"torch {b:.1f} ms, ratio {a / b:.2f}")
        if op in ("sin", "cos"):
            accuracy(op)


if __name__ == "__main__":
    main(sys.argv[1:] or ["erf", "exp", "tanh"])
