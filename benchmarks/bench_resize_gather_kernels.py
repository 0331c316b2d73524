#!/usr/bin/python3
"""pad, cat, index_select and take_along_axis compiled into one kernel with
the pointwise op after them, against torch's two eager ops, 1 thread on
both sides.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/bench_resize_gather_kernels.py

x is a [2048, 2048] float32 tensor from randn; each case computes
relu(OP(...)) (hostir: one segment, checked to be a compiled kernel; torch:
OP then relu). The runs are interleaved; medians of 9 are printed with
their ratio.
"""

import statistics
import time

import torch
import torch.nn.functional as F

import hostir

N = 2048


def definition(build, inputs):
    with hostir.FusionDefinition() as fd:
        tensors = [fd.define_tensor(t.dim(), dtype=t.dtype) for t in inputs]
        fd.add_output(fd.ops.relu(build(fd, *tensors)))
    return fd


def cases():
    x, y = torch.randn(N, N), torch.randn(N, N)
    rows = torch.randint(N, (N,))
    along = torch.randint(N, (N, N))
    return [
        ("pad", [x], lambda fd, t: fd.ops.pad(t, [3, 5, 2, 1]),
         lambda t: F.pad(t, [3, 5, 2, 1])),
        ("cat", [x, y], lambda fd, a, b: fd.ops.cat([a, b], 0), lambda a, b: torch.cat([a, b], 0)),
        ("index_select", [x, rows], lambda fd, t, i: fd.ops.index_select(t, i, 0),
         lambda t, i: torch.index_select(t, 0, i)),
        ("take_along_axis", [x, along], lambda fd, t, i: fd.ops.take_along_axis(t, i, 1),
         lambda t, i: torch.gather(t, 1, i)),
    ]


def main():
    torch.set_num_threads(1)
    for name, inputs, build, reference in cases():
        fd = definition(build, inputs)
        (out,) = fd.execute(inputs)
        torch.testing.assert_close(out, torch.relu(reference(*inputs)))
        engines = fd.execution()
        assert "ATen" not in engines, engines
        ours, theirs = [], []
        for _ in range(9):
            start = time.perf_counter()
            fd.execute(inputs)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            torch.relu(reference(*inputs))
            theirs.append(time.perf_counter() - start)
        a, b = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
        print(f"relu({name}), [{N}, {N}] float32, 1 thread: hostir {a:.2f} ms (one kernel), "
              f"torch {b:.2f} ms, ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
