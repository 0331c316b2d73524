"""Run by test_distributed.py on every rank: hostir.distributed's helpers
(init, distribute_tensor/full_tensor, shard_for, gather_output, execute with
global tensors, a wrong shard's error). Prints "rank R of D: OK"."""

import torch

import hostir
import hostir.distributed as dist

DIDx = hostir.ParallelType.DIDx

rank = dist.init()
d = dist.world_size()
assert rank == dist.rank()
mesh = hostir.DeviceMesh(torch.arange(d))

torch.manual_seed(0)  # every rank holds the same whole tensors
full = torch.randn(4 * d, 6)
local = dist.distribute_tensor(full, mesh, [dist.Shard(0)])
torch.testing.assert_close(local, full.chunk(d, 0)[rank])
torch.testing.assert_close(dist.full_tensor(local, mesh, [dist.Shard(0)]), full)

with hostir.FusionDefinition() as fd:
    x = fd.define_tensor(shape=[4 * d, 6], contiguity=[True, True])
    fd.sched.set_device_mesh(x, mesh)
    fd.sched.split(x, 0, d, inner_split=False)
    fd.sched.parallelize(x, 0, DIDx)
    y = fd.ops.relu(x)
    fd.sched.set_device_mesh(y, mesh)
    fd.sched.split(y, 0, d, inner_split=False)
    fd.sched.parallelize(y, 0, DIDx)
    fd.add_output(y)

x_local = dist.shard_for(fd, 0, full)
(y_local,) = fd.execute([x_local])
torch.testing.assert_close(y_local, torch.relu(full).chunk(d, 0)[rank])
torch.testing.assert_close(dist.gather_output(fd, 0, y_local), torch.relu(full))
(y_full,) = fd.execute([full], global_tensors=True)
torch.testing.assert_close(y_full, torch.relu(full))
try:
    dist.shard_for(fd, 0, full[: 4])
except hostir.Error as error:
    assert "input 0" in str(error) and str((4 * d, 6)) in str(error), error
else:
    raise AssertionError("a tensor of the wrong global shape was accepted")
dist.barrier()
print(f"rank {rank} of {d}: OK", flush=True)
