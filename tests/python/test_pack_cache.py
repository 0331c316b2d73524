"""A weight written between two runs is read new by the second (issue 38,
item 1): the packed-weight cache of the oneDNN GEMMs (docs/kernels.md,
"GEMMs") compares the weight's bits with those it packed, so no write a user
can make serves the old packing: through `.data`, in place under
torch.no_grad(), through a numpy alias or a tensor made on the same memory
(from_blob), an optimizer's step on a hostir.autograd.Module's weight, or a
collective on 2 ranks.
On a machine where oneDNN keeps weights plain (avx2) nothing is packed and
these hold trivially."""

import os
import pathlib
import subprocess
import sys

import pytest
import torch

import hostir
from conftest import build_dir
from hostir.autograd import Module


def _linear(cache):
    with hostir.FusionDefinition(cache) as fd:
        x, w = fd.define_tensor(2), fd.define_tensor(2)
        fd.add_output(fd.ops.linear(x, w))
    return fd


def _write_through_data(w, new):
    w.data.copy_(new)


def _write_in_place_without_grad(w, new):
    with torch.no_grad():
        w.copy_(new)


def _write_through_numpy(w, new):
    w.detach().numpy()[...] = new.numpy()


def _write_through_a_tensor_on_the_same_memory(w, new):
    torch.from_numpy(w.detach().numpy()).copy_(new)  # from_blob: its own version counter


WRITES = [_write_through_data, _write_in_place_without_grad, _write_through_numpy,
          _write_through_a_tensor_on_the_same_memory]


@pytest.mark.parametrize("write", WRITES, ids=lambda write: write.__name__[1:])
def test_a_written_weight_is_read_new_by_the_next_run(cache, write):
    fd = _linear(cache)
    # [64, 128] x [128, 128]^T: a shape oneDNN packs on avx512.
    x, w = torch.randn(64, 128), torch.randn(128, 128)
    torch.testing.assert_close(fd.execute([x, w])[0], torch.nn.functional.linear(x, w))
    new = torch.randn(128, 128)
    write(w, new)
    assert torch.equal(w, new)
    torch.testing.assert_close(fd.execute([x, w])[0], torch.nn.functional.linear(x, new))


def test_the_weight_of_a_tensor_on_the_same_memory_sees_writes_to_the_original(cache):
    fd = _linear(cache)
    x, w = torch.randn(64, 128), torch.randn(128, 128)
    alias = torch.from_numpy(w.numpy())
    fd.execute([x, alias])
    w.mul_(2)
    torch.testing.assert_close(fd.execute([x, alias])[0], torch.nn.functional.linear(x, w))


@pytest.mark.parametrize("optimizer", [torch.optim.SGD, torch.optim.AdamW])
def test_an_optimizer_step_is_seen_by_the_next_forward(cache, optimizer):
    fd = _linear(cache)
    w = torch.randn(128, 128)
    module = Module(fd, {"w": (1, w)})
    step = optimizer(module.parameters(), lr=0.1)
    x = torch.randn(64, 128)
    for _ in range(3):
        step.zero_grad()
        module(x).square().mean().backward()
        step.step()
        torch.testing.assert_close(module(x), torch.nn.functional.linear(x, module.w.detach()))


def test_a_collective_writing_into_the_weight_is_seen_by_the_next_run():
    # 2 ranks: a sharded sum's Allreduce lands in the weight (the program's
    # output buffer) between two runs of a linear on it. It bumps the
    # weight's version today (the result is copied into the buffer), so this
    # pins the path; a collective writing the memory directly is
    # PackCacheTest.ARawWriteIsSeen.
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, OMP_NUM_THREADS="1", HOSTIR_COMM_TIMEOUT_S="60")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1]), str(here)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run(
        [str(build_dir() / "tools" / "hostir"), "launch", "-n", "2", "--", sys.executable,
         str(here / "pack_cache_collective_script.py")],
        env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "rank 0 of 2: OK" in output and "rank 1 of 2: OK" in output, output
