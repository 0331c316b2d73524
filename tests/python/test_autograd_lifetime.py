"""A trained hostir.autograd program is freed once nothing refers to it.

torch gives a Function's outputs a grad_fn that holds the ctx, and the ctx
holds the program (its executors, their stream workers). If an executor
keeps a run's tensors after the run, an output keeps its own grad_fn alive
through C++, a cycle Python's collector cannot see: every step's program
then lived as long as the process. The gradient fuzzer ran out of threads
that way after ~4,000 programs (issue 38)."""

import gc
import os
import weakref

import torch

import hostir
from hostir.autograd import Differentiable

F = hostir.DataType.Float


def _threads():
    return len(os.listdir("/proc/self/task"))


def _train_one_step_and_forget(size):
    cache = hostir.FusionCache(max_fusions=4)
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=F)
        w1 = fd.define_tensor(2, dtype=F)
        w2 = fd.define_tensor(2, dtype=F)
        fd.add_output(fd.ops.linear(fd.ops.gelu(fd.ops.linear(x, w1)), w2))
    f = Differentiable(fd)
    leaves = [torch.randn(size, 64, requires_grad=True),
              torch.randn(128, 64, requires_grad=True),
              torch.randn(64, 128, requires_grad=True)]
    out = f(*leaves)
    out.sum().backward()
    assert all(t.grad is not None for t in leaves)
    return weakref.ref(f), weakref.ref(fd)


# 8 rows: outputs below the buffer pool's 1 MiB; 4096 rows: pooled outputs.
def test_a_program_trained_then_dropped_is_freed_with_its_threads():
    gc.collect()
    threads_before = _threads()
    refs = [_train_one_step_and_forget(size) for size in (8, 4096) for _ in range(3)]
    gc.collect()
    alive = [r for pair in refs for r in pair if r() is not None]
    assert not alive, f"{len(alive)} of {2 * len(refs)} programs/definitions still alive"
    # Each program's executors ran their streams on worker threads; freeing
    # the program joins them.
    assert _threads() <= threads_before
