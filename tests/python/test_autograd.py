"""hostir.autograd: hostir's backward programs inside torch autograd, against
torch's own grads (float32, float64, gradcheck)."""

import pytest
import torch

import hostir
from hostir.autograd import Differentiable, Module

F = hostir.DataType.Float
D = hostir.DataType.Double


def mlp_definition(cache, dtype=F):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=dtype)
        w1 = fd.define_tensor(2, dtype=dtype)
        w2 = fd.define_tensor(2, dtype=dtype)
        fd.add_output(fd.ops.linear(fd.ops.gelu(fd.ops.linear(x, w1)), w2))
    return fd


def torch_mlp(x, w1, w2):
    return torch.nn.functional.linear(torch.nn.functional.gelu(torch.nn.functional.linear(x, w1)),
                                      w2)


@pytest.mark.parametrize("save", ["gemm_outputs", "nothing"])
def test_backward_matches_torch(cache, save):
    f = Differentiable(mlp_definition(cache), save=save)
    leaves = [torch.randn(8, 6), torch.randn(12, 6), torch.randn(6, 12)]
    ours = [t.clone().requires_grad_() for t in leaves]
    theirs = [t.clone().requires_grad_() for t in leaves]
    out = f(*ours)
    assert out.requires_grad and out.grad_fn is not None
    expected = torch_mlp(*theirs)
    torch.testing.assert_close(out, expected)
    g = torch.randn_like(expected)
    (out * g).sum().backward()
    (expected * g).sum().backward()
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine.grad, reference.grad, rtol=1e-4, atol=1e-5)


def test_steps_at_sizes_the_buffer_pool_reuses(cache):
    # Outputs of 1 MiB and more come from the executor's buffer pool. torch
    # attaches a grad_fn to a Function's outputs; the pool used to hand that
    # tensor to the next step, whose `out=` ops refused it ("functions with
    # out=... arguments don't support automatic differentiation").
    f = Differentiable(mlp_definition(cache))
    leaves = [torch.randn(1024, 512), torch.randn(512, 512) * 0.05, torch.randn(512, 512) * 0.05]
    theirs = [t.clone().requires_grad_() for t in leaves]
    torch_mlp(*theirs).square().sum().backward()
    for _ in range(3):
        ours = [t.clone().requires_grad_() for t in leaves]
        f(*ours).square().sum().backward()
        for mine, reference in zip(ours, theirs):
            scale = reference.grad.abs().max().item()
            torch.testing.assert_close(mine.grad, reference.grad, rtol=0, atol=1e-4 * scale)


def test_gradcheck_in_float64(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=D)
        w = fd.define_tensor(2, dtype=D)
        b = fd.define_tensor(1, dtype=D)
        h = fd.ops.tanh(fd.ops.linear(x, w, b))
        fd.add_output(fd.ops.softmax(h, -1))
        fd.add_output(fd.ops.layer_norm(h, 1))
    f = Differentiable(fd)
    inputs = [torch.randn(4, 5, dtype=torch.float64, requires_grad=True),
              torch.randn(3, 5, dtype=torch.float64, requires_grad=True),
              torch.randn(3, dtype=torch.float64, requires_grad=True)]
    assert torch.autograd.gradcheck(f, inputs)


def test_fmod_passes_gradcheck_in_float64(cache):
    # fmod had no gradient rule before; the divisor is broadcast (summed back).
    with hostir.FusionDefinition(cache) as fd:
        a = fd.define_tensor(2, dtype=D)
        b = fd.define_tensor(1, dtype=D)
        fd.add_output(fd.ops.fmod(a, b))
    f = Differentiable(fd)
    torch.manual_seed(3)
    a = (torch.randn(4, 5, dtype=torch.float64) * 4).requires_grad_()
    b = (torch.rand(5, dtype=torch.float64) + 0.5).requires_grad_()
    assert torch.autograd.gradcheck(f, [a, b])


def test_grads_accumulate_and_an_optimizer_step_is_seen(cache):
    torch.manual_seed(1)
    x = torch.randn(8, 6)
    w1, w2 = torch.randn(12, 6) * 0.3, torch.randn(6, 12) * 0.3
    module = Module(mlp_definition(cache), {"w1": (1, w1), "w2": (2, w2)})
    reference = [torch.nn.Parameter(w1.clone()), torch.nn.Parameter(w2.clone())]
    assert [name for name, _ in module.named_parameters()] == ["w1", "w2"]

    # Two backwards without zeroing: .grad holds their sum, as torch's does.
    for _ in range(2):
        module(x).square().sum().backward()
        torch_mlp(x, *reference).square().sum().backward()
    torch.testing.assert_close(module.w1.grad, reference[0].grad, rtol=1e-4, atol=1e-5)

    ours = torch.optim.AdamW(module.parameters(), lr=0.05)
    theirs = torch.optim.AdamW(reference, lr=0.05)
    for _ in range(5):
        for optimizer, loss in ((ours, lambda: module(x).square().mean()),
                                (theirs, lambda: torch_mlp(x, *reference).square().mean())):
            optimizer.zero_grad()
            loss().backward()
            optimizer.step()
    torch.testing.assert_close(module.w1, reference[0], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(module(x), torch_mlp(x, *reference), rtol=1e-4, atol=1e-5)


def test_only_the_chosen_outputs_and_inputs(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        w = fd.define_tensor(2)
        y = fd.ops.matmul(x, w)
        fd.add_output(y)
        fd.add_output(fd.ops.exp(y))
    f = Differentiable(fd, outputs=[0], inputs=[1])
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 5, requires_grad=True)
    y, e = f(x, w)
    assert not e.requires_grad  # not differentiated
    y.sum().backward()
    assert x.grad is None  # no grad asked for x
    torch.testing.assert_close(w.grad, x.detach().t() @ torch.ones(3, 5))


def test_backward_programs_print(cache):
    f = Differentiable(mlp_definition(cache))
    assert "linear" in f.forward_host_ir
    # The backward reads the saved first linear: matmuls, no linear.
    assert "matmul" in f.backward_fusion_ir and "linear" not in f.backward_fusion_ir
    assert f.saved_outputs == [1]


def test_errors_name_the_cause(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        fd.add_output(fd.ops.exp(fd.ops.nextafter(x, 0.0)))
    with pytest.raises(hostir.Error, match="no gradient rule for .*nextafter"):
        Differentiable(fd)
    with pytest.raises(hostir.Error, match="save='all' is not a policy"):
        Differentiable(mlp_definition(hostir.FusionCache()), save="all")
    f = Differentiable(mlp_definition(hostir.FusionCache()))
    with pytest.raises(hostir.Error, match="3 inputs but 2 were given"):
        f(torch.randn(2, 2), torch.randn(2, 2))
    with pytest.raises(hostir.Error, match="both name input 1"):
        Module(mlp_definition(hostir.FusionCache()),
               {"a": (1, torch.randn(2, 2)), "b": (1, torch.randn(2, 2))})


# --- sharded: the backward's collectives come from the sharding passes ------

def _launch(ranks, *args, script="autograd_sharded_script.py"):
    import os
    import pathlib
    import subprocess
    import sys

    from conftest import build_dir

    here = pathlib.Path(__file__).resolve().parent
    script = here / script
    env = dict(os.environ, HOSTIR_COMM_TIMEOUT_S="60", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1]), str(here)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    command = [sys.executable, str(script), *args]
    if ranks > 1:
        command = [str(build_dir() / "tools" / "hostir"), "launch", "-n", str(ranks), "--"] + command
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for rank in range(ranks):
        assert f"rank {rank} of {ranks}: OK" in output, output


@pytest.mark.parametrize("ranks,chunks", [(1, 1), (2, 1), (2, 2), (4, 2)])
def test_sharded_mlp_grads_and_adamw_steps_match_torch(ranks, chunks):
    _launch(ranks, "--chunks", str(chunks))


@pytest.mark.parametrize("ranks,chunks", [(1, 3), (2, 1), (2, 3)])
def test_one_definition_trains_on_lengths_that_change_every_call(ranks, chunks):
    # Issue 37 item 4: 12 token counts, one lowering per program, no kernel
    # compiled after the first length, every call's grads checked.
    _launch(ranks, "--chunks", str(chunks), script="changing_lengths_script.py")


@pytest.mark.parametrize("ranks,chunks", [(1, 3), (2, 2)])
def test_one_layer_definition_trains_on_lengths_that_change_every_call(ranks, chunks):
    # Issue 37 item 4 for the transformer layer: the same checks as the MLP
    # block's above (one lowering of each program, no kernel after the first
    # length, every call's output and grads).
    _launch(ranks, "--program", "layer", "--chunks", str(chunks),
            script="changing_lengths_script.py")


@pytest.mark.parametrize("ranks,chunks", [(1, 1), (2, 2), (4, 1)])
def test_sharded_transformer_layer_grads_match_torch(ranks, chunks):
    _launch(ranks, str(chunks), script="autograd_layer_script.py")
