#!/usr/bin/python3
"""A GELU's backward: hostir's one op against its composition and ATen's.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/bench_gelu_backward.py [ROWS COLS]

What differentiating `gelu(x)` gives, dx = g * d gelu(x) / dx, on x and g of
ROWS x COLS float32 (default 4096 x 2048: the MLP training step's `h` on one
of 2 ranks), three ways, each into a preallocated output:
  one op      hostir `mul(g, gelu_derivative(x))` as one compiled kernel
              (gelu's erf, docs/kernels.md), what the backward runs now;
  composed    hostir `mul(g, 0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) / sqrt(2 pi))`
              as one compiled kernel (the erf op is correctly rounded),
              what the backward ran before;
  ATen        `torch.ops.aten.gelu_backward(g, x)` into the output (what
              torch autograd runs).
Then the derivative alone (what the backward's lone `gelu'(h)` segment
computes, the product with g coming later): hostir's `gelu_derivative(x)`
kernel against ATen's `gelu_backward` with a grad of ones, contiguous (what
hostir's ATen fallback passes) and expanded from one element.
Interleaved, 1 thread on every side, medians of 9 in the process's CPU
time; the largest difference from ATen's float64 result is printed too.
"""

import math
import statistics
import sys
import time

import torch

import hostir


def one_op():
    with hostir.FusionDefinition() as fd:
        x, g = fd.define_tensor(2), fd.define_tensor(2)
        fd.add_output(fd.ops.mul(g, fd.ops.gelu_derivative(x)))
    return fd


def composed():
    with hostir.FusionDefinition() as fd:
        x, g = fd.define_tensor(2), fd.define_tensor(2)
        cdf = fd.ops.mul(fd.ops.add(fd.ops.erf(fd.ops.mul(x, math.sqrt(0.5))), 1.0), 0.5)
        pdf = fd.ops.mul(fd.ops.exp(fd.ops.mul(fd.ops.mul(x, x), -0.5)),
                         1.0 / math.sqrt(2.0 * math.pi))
        fd.add_output(fd.ops.mul(g, fd.ops.add(cdf, fd.ops.mul(x, pdf))))
    return fd


def derivative_alone():
    with hostir.FusionDefinition() as fd:
        fd.add_output(fd.ops.gelu_derivative(fd.define_tensor(2)))
    return fd


def main(argv):
    rows, cols = (int(argv[0]), int(argv[1])) if len(argv) == 2 else (4096, 2048)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, g = torch.randn(rows, cols), torch.randn(rows, cols)
    out = torch.empty(rows, cols)
    truth = torch.ops.aten.gelu_backward(g.double(), x.double())
    sides = {}
    for name, fd in (("one op", one_op()), ("composed", composed())):
        sides[name] = lambda fd=fd: fd.execute([x, g], output=[out])
    sides["ATen"] = lambda: torch.ops.aten.gelu_backward.grad_input(g, x, grad_input=out)
    alone = derivative_alone()
    ones, one = torch.ones(rows, cols), torch.ones(()).expand(rows, cols)
    sides["alone"] = lambda: alone.execute([x], output=[out])
    sides["ATen ones"] = lambda: torch.ops.aten.gelu_backward.grad_input(ones, x, grad_input=out)
    sides["ATen one"] = lambda: torch.ops.aten.gelu_backward.grad_input(one, x, grad_input=out)
    truths = {name: truth for name in sides}
    for name in ("alone", "ATen ones", "ATen one"):
        truths[name] = torch.ops.aten.gelu_backward(torch.ones_like(x).double(), x.double())
    times = {name: [] for name in sides}
    errors = {}
    for name, run in sides.items():
        run()
        errors[name] = (out.double() - truths[name]).abs().max().item()
    for _ in range(9):
        for name, run in sides.items():
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    aten = statistics.median(times["ATen"])
    print(f"GELU backward on [{rows}, {cols}] float32, 1 thread, medians of 9 (CPU time):")
    for name in sides:
        if name == "alone":
            print("gelu'(x) alone (ATen ones: a contiguous grad of ones; ATen one: one expanded):")
        median = statistics.median(times[name])
        print(f"  {name:9s} {median * 1e3:8.2f} ms  {median / aten:5.2f}x ATen  "
              f"max |diff| from float64 {errors[name]:.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
