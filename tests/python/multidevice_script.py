"""Run by test_multidevice.py on every rank, under `hostir launch`, torchrun or
mpirun: a sharded fusion and the Stream-pipelined allgather + linear, each
rank checking its shards against single-process torch. Prints
"rank R of D: OK" at the end."""

import sys

import torch

import hostir
from sharding_helpers import shard, world

DIDx = hostir.ParallelType.DIDx


def sharded_pointwise_and_allreduce(rank, d):
    mesh = hostir.DeviceMesh(list(range(d)))
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.sched.set_device_mesh(x, mesh)
        fd.sched.parallelize(x, 0, DIDx)
        y = fd.ops.relu(x) * 2.0
        fd.sched.set_device_mesh(y, mesh)
        fd.sched.parallelize(y, 0, DIDx)
        z = fd.ops.sum(y, [0])  # over the sharded axis: Allreduce
        fd.sched.set_device_mesh(z, mesh)
        fd.add_output(y)
        fd.add_output(z)
    full = torch.randn(4 * d, 6)
    local = full.chunk(d, 0)[rank].contiguous()
    y_local, z_out = fd.execute([local])
    torch.testing.assert_close(y_local, torch.relu(local) * 2.0)
    torch.testing.assert_close(z_out, (torch.relu(full) * 2.0).sum(0))
    y_sharding, z_sharding = fd.last_output_shardings
    assert y_sharding.mesh == mesh and y_sharding.axes == {DIDx: 0}, y_sharding
    assert z_sharding.mesh == mesh and z_sharding.axes == {}, z_sharding
    assert d == 1 or "Allreduce" in fd.host_ir([local])
    # A second execute reuses the lowered program.
    fd.execute([local])
    assert fd._cdef.num_lowerings() == 1


def pipelined_allgather_linear(rank, d, chunks=4, streams=2):
    mesh = hostir.DeviceMesh(list(range(d)))
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        shard(fd, x, mesh, 0)  # x [S, H] sharded on tokens
        shard(fd, w, mesh, 0)  # w [F, H] sharded on F
        h = fd.ops.linear(x, w)  # needs all of x: allgather, chunk by chunk
        shard(fd, h, mesh, 1)
        fd.sched.split(h, 0, chunks, inner_split=False)
        fd.sched.parallelize(h, 0, hostir.ParallelType.Stream)
        fd.add_output(h)
    S, H, F = 8 * d * chunks // 2, 16, 8 * d
    full_x, full_w = torch.randn(S, H), torch.randn(F, H)
    x_local = full_x.chunk(d, 0)[rank].contiguous()
    w_local = full_w.chunk(d, 0)[rank].contiguous()
    (h_local,) = fd.execute([x_local, w_local], number_of_streams=streams)
    expected = torch.nn.functional.linear(full_x, full_w).chunk(d, 1)[rank]
    torch.testing.assert_close(h_local, expected)
    program = fd.host_ir([x_local, w_local], number_of_streams=streams)
    assert "FOR StreamIdx" in program, program
    assert d == 1 or "Allgather" in program, program
    (sharding,) = fd.last_output_shardings
    assert sharding.axes == {DIDx: 1}, sharding


def reshapes_with_minus_one(rank, d):
    """x [S, 2, 4] sharded on S viewed [-1, 8]: the -1 axis is S, so the
    reshape runs on each rank's rows, no collective, for S the ranks divide
    or not. Viewed [-1, 4] the -1 axis is 2S, not S: x is gathered, the output
    whole on every rank."""
    mesh = hostir.DeviceMesh(list(range(d)))
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 2, 4], contiguity=[True, True, True])
        shard(fd, x, mesh, 0)
        fd.add_output(fd.ops.relu(fd.ops.reshape(x, [-1, 8])))
        fd.add_output(fd.ops.relu(fd.ops.reshape(x, [-1, 4])))
    for rows in (4 * d, 4 * d - 1):
        full = torch.randn(rows, 2, 4)
        local = full.chunk(d, 0)[rank].contiguous()
        kept, gathered = fd.execute([local])
        torch.testing.assert_close(kept, torch.relu(full.reshape(-1, 8)).chunk(d, 0)[rank])
        torch.testing.assert_close(gathered, torch.relu(full.reshape(-1, 4)))
        kept_sharding, gathered_sharding = fd.last_output_shardings
        assert kept_sharding.axes == {DIDx: 0}, kept_sharding
        assert gathered_sharding.axes == {}, gathered_sharding
    program = fd.host_ir([local])
    # One Allgather, for the [-1, 4] view; none for the [-1, 8] one.
    assert program.count("Allgather") == 1 and "Scatter" not in program, program
    # Symbolic inner extents, the sizes written from x's own: (S*i1*i2)/(i1*i2) is S.
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True])
        shard(fd, x, mesh, 0)
        inner = fd.ops.size(x, 1) * fd.ops.size(x, 2)
        fd.add_output(fd.ops.relu(fd.ops.reshape(x, [-1, inner])))
    full = torch.randn(4 * d - 1, 3, 2)
    local = full.chunk(d, 0)[rank].contiguous()
    (kept,) = fd.execute([local])
    torch.testing.assert_close(kept, torch.relu(full.reshape(-1, 6)).chunk(d, 0)[rank])
    program = fd.host_ir([local])
    assert "Allgather" not in program and "Scatter" not in program, program


def main():
    rank, d = world()
    torch.manual_seed(1234)  # every rank draws the same full tensors
    sharded_pointwise_and_allreduce(rank, d)
    pipelined_allgather_linear(rank, d)
    reshapes_with_minus_one(rank, d)
    print(f"rank {rank} of {d}: OK", flush=True)


if __name__ == "__main__":
    sys.exit(main())
