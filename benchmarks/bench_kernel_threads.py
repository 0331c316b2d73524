"""A compiled pointwise kernel (tanh(x) * x + exp(-x), 4096 x 4096 float32)
at the thread count HOSTIR_INTRAOP_THREADS gives: median of 21 warm runs, ms.
docs/performance.md, "Kernels' parallel loops": run it at 1 and 2 threads."""
import time, torch, hostir
cache = hostir.FusionCache()
with hostir.FusionDefinition(cache) as fd:
    x = fd.define_tensor(2)
    fd.add_output(fd.ops.add(fd.ops.mul(fd.ops.tanh(x), x), fd.ops.exp(fd.ops.neg(x))))
x = torch.randn(4096, 4096)
fd.execute([x])
ts=[]
for _ in range(21):
    t=time.perf_counter(); fd.execute([x]); ts.append(time.perf_counter()-t)
print(sorted(ts)[10]*1e3)
