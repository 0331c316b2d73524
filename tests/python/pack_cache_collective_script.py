"""Run on every rank by test_pack_cache.py: a weight packed by one run, then
written by a collective (a sharded sum's Allreduce into the weight, given as
the program's output buffer), then read by the next run: the next run must
read the reduced bits. Prints "rank R of D: OK"."""

import torch

import hostir
import hostir.distributed as dist

rank = dist.init()
d = dist.world_size()
mesh = hostir.DeviceMesh(list(range(d)))

with hostir.FusionDefinition() as reduce_fd:
    parts = reduce_fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True])
    reduce_fd.sched.set_device_mesh(parts, mesh)
    reduce_fd.sched.parallelize(parts, 0, hostir.ParallelType.DIDx)
    total = reduce_fd.ops.sum(parts, [0])  # over the sharded axis: Allreduce
    reduce_fd.sched.set_device_mesh(total, mesh)
    reduce_fd.add_output(total)

with hostir.FusionDefinition() as linear_fd:
    x, weight = linear_fd.define_tensor(2), linear_fd.define_tensor(2)
    linear_fd.add_output(linear_fd.ops.linear(x, weight))

torch.manual_seed(0)  # every rank draws the same tensors
x, w = torch.randn(64, 128), torch.randn(128, 128)
parts = torch.randn(d, 128, 128)
torch.testing.assert_close(linear_fd.execute([x, w])[0], torch.nn.functional.linear(x, w))
reduce_fd.execute([parts[rank:rank + 1].contiguous()], output=[w])
torch.testing.assert_close(w, parts.sum(0))
torch.testing.assert_close(linear_fd.execute([x, w])[0], torch.nn.functional.linear(x, w))
print(f"rank {rank} of {d}: OK", flush=True)
