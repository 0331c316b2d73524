"""What the *_script.py files of tests/python, run on every rank of a launch,
share: the rank and world size from the launcher's environment, shard() for a
tensor of a FusionDefinition, and the sequence-parallel MLP block (Mlp, from
examples/python_mlp.py) with its single-process torch reference."""

import os
import pathlib
import sys

import torch

import hostir

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
from python_mlp import Mlp  # noqa: E402

__all__ = ["Mlp", "shard", "torch_mlp", "world"]


def world():
    """(rank, world size) as `hostir launch`, torchrun or mpirun set them; (0, 1)
    outside a launch."""
    for rank, size in (("RANK", "WORLD_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
        if rank in os.environ:
            return int(os.environ[rank]), int(os.environ[size])
    return 0, 1


def shard(fd, tensor, mesh, axis):
    """Puts `tensor` on `mesh`, its `axis` split into one slice per device (DIDx)."""
    fd.sched.set_device_mesh(tensor, mesh)
    fd.sched.split(tensor, axis, len(mesh), inner_split=False)
    fd.sched.parallelize(tensor, axis, hostir.ParallelType.DIDx)


def torch_mlp(x, w1, w2):
    """Mlp's math in torch: linear(gelu(linear(x, w1)), w2)."""
    f = torch.nn.functional
    return f.linear(f.gelu(f.linear(x, w1)), w2)
