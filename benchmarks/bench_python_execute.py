#!/usr/bin/env python3
"""hostir's Python execute overhead on a cache hit, against plain ATen.

A 10-op pointwise fusion of small tensors (default [32, 32] float) is run
(a) as the same 10 torch ops called from Python, (b) with fd.execute on a
cached, already-lowered fusion, (c) the C++ execute call alone (what (b) costs
without the Python wrapper), (d) re-recording the definition (a cache hit)
and executing it, as a training loop that rebuilds its definition each step
would. Prints the median time per call of each and the ratios to (a).

    /usr/bin/python3 benchmarks/bench_python_execute.py [--size 32] [--reps 2000]
        [--streams 1] [--runs 7]
(with PYTHONPATH=<build>/python unless `./hostir.sh build` installed hostir).
"""

import argparse
import statistics
import time

import torch

import hostir


def aten_block(x, y):
    a = torch.add(x, y)
    b = torch.mul(a, 2.0)
    c = torch.relu(b)
    d = torch.sub(c, y)
    e = torch.neg(d)
    f = torch.tanh(e)
    g = torch.mul(f, x)
    h = torch.add(g, 1.0)
    i = torch.sigmoid(h)
    return torch.abs(i)


def define(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        y = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        a = fd.ops.add(x, y)
        b = fd.ops.mul(a, 2.0)
        c = fd.ops.relu(b)
        d = fd.ops.sub(c, y)
        e = fd.ops.neg(d)
        f = fd.ops.tanh(e)
        g = fd.ops.mul(f, x)
        h = fd.ops.add(g, 1.0)
        i = fd.ops.sigmoid(h)
        fd.add_output(fd.ops.abs(i))
    return fd


def per_call_us(function, reps, runs):
    for _ in range(max(reps // 10, 10)):
        function()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(reps):
            function()
        samples.append((time.perf_counter() - start) / reps * 1e6)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--streams", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    x, y = torch.randn(args.size, args.size), torch.randn(args.size, args.size)
    cache = hostir.FusionCache()
    fd = define(cache)
    (out,) = fd.execute([x, y], number_of_streams=args.streams)
    torch.testing.assert_close(out, aten_block(x, y))
    inputs = [x, y]

    aten = per_call_us(lambda: aten_block(x, y), args.reps, args.runs)
    execute = per_call_us(lambda: fd.execute(inputs, number_of_streams=args.streams), args.reps,
                          args.runs)
    cdef = fd._cdef  # the C++ call alone: what the Python layer adds is the difference
    direct = per_call_us(lambda: cdef.execute(inputs, [], args.streams), args.reps, args.runs)
    redefine = per_call_us(
        lambda: define(cache).execute(inputs, number_of_streams=args.streams),
        max(args.reps // 4, 1), args.runs)
    assert fd._cdef.num_lowerings() == 1

    print(f"10-op pointwise fusion, [{args.size}, {args.size}] float, "
          f"{args.streams} stream(s), {args.threads} intra-op thread(s), "
          f"median of {args.runs} x {args.reps} calls")
    print(f"  ATen ops from Python          {aten:8.1f} us/call")
    print(f"  fd.execute (cache hit)        {execute:8.1f} us/call   ratio {execute / aten:.2f}x")
    print(f"  C++ execute alone (_C)        {direct:8.1f} us/call   ratio {direct / aten:.2f}x")
    print(f"  define (hit) + fd.execute     {redefine:8.1f} us/call   ratio {redefine / aten:.2f}x")


if __name__ == "__main__":
    main()
