"""A compiled pointwise kernel (tanh(x) * x + exp(-x), 4096 x 4096 float32)
against ATen's ops on the same thread count (HOSTIR_INTRAOP_THREADS, and
torch.set_num_threads for ATen), ATen writing into buffers made once (its
ops otherwise pay fresh 64 MiB allocations' page faults each call): median
of 21 warm runs each, interleaved. docs/performance.md, "Kernels' parallel
loops": run it at 1 and 2 threads."""

import os
import time

import torch

import hostir

threads = int(os.environ.get("HOSTIR_INTRAOP_THREADS", "1"))
torch.set_num_threads(threads)
cache = hostir.FusionCache()
with hostir.FusionDefinition(cache) as fd:
    x = fd.define_tensor(2)
    fd.add_output(fd.ops.add(fd.ops.mul(fd.ops.tanh(x), x), fd.ops.exp(fd.ops.neg(x))))
x = torch.randn(4096, 4096)
a, b = torch.empty_like(x), torch.empty_like(x)


def aten():
    torch.mul(torch.tanh(x, out=a), x, out=a)
    torch.exp(torch.neg(x, out=b), out=b)
    return torch.add(a, b, out=a)


assert torch.allclose(fd.execute([x])[0], aten(), rtol=1e-5, atol=1e-5)
hostir_ms, aten_ms = [], []
for _ in range(21):
    for run, times in ((lambda: fd.execute([x]), hostir_ms), (aten, aten_ms)):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
h, t = sorted(hostir_ms)[10], sorted(aten_ms)[10]
print(f"threads {threads}: hostir {h:.1f} ms, ATen {t:.1f} ms, ratio {h / t:.2f}")
