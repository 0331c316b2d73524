#!/usr/bin/env python3
"""A transformer MLP block from Python: define, schedule, run, inspect, cache.

    /usr/bin/python3 examples/python_mlp.py            # one process
    build/tools/hostir launch -n 2 -- /usr/bin/python3 examples/python_mlp.py --sharded
    /usr/bin/python3 -m hostir.torchrun --standalone --nproc_per_node=2 \
        examples/python_mlp.py --sharded
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29600 mpirun -np 2 -x MASTER_ADDR -x MASTER_PORT \
        /usr/bin/python3 examples/python_mlp.py --sharded

One process: y = linear(gelu(linear(x, w1)), w2), the first GEMM's rows
pipelined over 4 chunks on rotating streams. With --sharded on N ranks: the
sequence-parallel version (x sharded on tokens, w1/w2 on the hidden FFN
axis), the allgather of x overlapped chunk by chunk with the first GEMM and
the result reduce-scattered back onto the tokens.
"""

import argparse

import torch

import hostir
import hostir.distributed as dist

DIDx = hostir.ParallelType.DIDx


class Mlp(hostir.FusionDefinition):
    """The block as a subclass: definition() records the ops, schedule() the
    annotations. Two instances with equal arguments share one cached fusion."""

    def __init__(self, chunks, devices=0):
        super().__init__()
        self.chunks, self.devices = chunks, devices

    def definition(self):
        self.x = self.define_tensor(shape=[-1, -1], contiguity=[True, True])
        self.w1 = self.define_tensor(shape=[-1, -1], contiguity=[True, True])
        self.w2 = self.define_tensor(shape=[-1, -1], contiguity=[True, True])
        self.h = self.ops.linear(self.x, self.w1)
        self.y = self.ops.linear(self.ops.gelu(self.h), self.w2)
        self.add_output(self.y)

    def shard(self, tensor, axis):
        mesh = hostir.DeviceMesh(list(range(self.devices)))
        self.sched.set_device_mesh(tensor, mesh)
        self.sched.split(tensor, axis, self.devices, inner_split=False)
        self.sched.parallelize(tensor, axis, DIDx)

    def schedule(self):
        if self.devices:
            self.shard(self.x, 0)
            self.shard(self.w1, 0)
            self.shard(self.w2, 1)
            self.shard(self.h, 1)
            self.shard(self.y, 0)
        if self.chunks > 1:
            self.sched.split(self.h, 0, self.chunks, inner_split=False)
            self.sched.parallelize(self.h, 0, hostir.ParallelType.Stream)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sharded", action="store_true")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--ffn", type=int, default=256)
    args = parser.parse_args()
    # From the launcher's environment: hostir launch, torchrun, mpirun or srun.
    rank, devices = dist.rank(), dist.world_size()

    torch.manual_seed(0)  # every rank draws the same full tensors
    x = torch.randn(args.tokens, args.hidden)
    w1 = torch.randn(args.ffn, args.hidden) / args.hidden**0.5
    w2 = torch.randn(args.hidden, args.ffn) / args.ffn**0.5
    expected = torch.nn.functional.linear(torch.nn.functional.gelu(x @ w1.t()), w2)

    fd = Mlp(chunks=4, devices=devices if args.sharded else 0)
    if args.sharded:
        inputs = dist.shard_inputs(fd, [x, w1, w2])  # this rank's shard of each
        expected = expected.chunk(devices, 0)[rank]
    else:
        inputs = [x, w1, w2]
    if rank == 0:
        print("# the definition, as a script that recreates it:")
        print(fd)
        print("# the host program:")
        print(fd.host_ir(inputs))
    (y,) = fd.execute(inputs)
    error = (y - expected).abs().max().item()
    print(f"[rank {rank}] max |y - torch| = {error:.2e}, output sharding "
          f"{fd.last_output_shardings[0]}")
    assert error < 1e-3

    again = Mlp(chunks=4, devices=devices if args.sharded else 0)
    again.execute(inputs)
    if rank == 0:
        print(f"second definition: cache hit {again.cache_hit}, same fusion id "
              f"{again.id() == fd.id()}; cache {hostir.FusionCache.get().stats()}")


if __name__ == "__main__":
    main()
