"""fd.ops.uniform and fd.ops.normal (src/hostir/ir/random_ops.h): their values per
dtype, their relation to torch's default generator, seeded draws, errors."""

import pytest
import torch

import hostir
from hostir.autograd import Differentiable

FLOATING = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def random_definition(cache, kind, a, b, shape, dtype, seeded=False):
    with hostir.FusionDefinition(cache) as fd:
        seed = offset = None
        if seeded:
            seed = fd.define_scalar(dtype=hostir.DataType.Int64)
            offset = fd.define_scalar(dtype=hostir.DataType.Int64)
        op = getattr(fd.ops, kind)
        fd.add_output(op(a, b, shape, dtype=dtype, rng_seed=seed, rng_offset=offset))
    return fd


@pytest.mark.parametrize("dtype", FLOATING)
def test_uniform_values_lie_in_the_range_with_its_mean(cache, dtype):
    fd = random_definition(cache, "uniform", -2.0, 3.0, [200, 500], dtype)
    out = fd.execute([])[0]
    assert out.dtype == dtype and out.shape == (200, 500)
    assert out.min() >= -2.0 and out.max() <= 3.0
    assert abs(out.double().mean().item() - 0.5) < 0.05
    assert out.float().unique().numel() > 100


@pytest.mark.parametrize("dtype", FLOATING)
def test_normal_has_its_mean_and_std(cache, dtype):
    fd = random_definition(cache, "normal", 3.7, 2.5, [200, 500], dtype)
    out = fd.execute([])[0].double()
    assert abs(out.mean().item() - 3.7) < 0.05 and abs(out.std().item() - 2.5) < 0.05


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_unseeded_draws_follow_torchs_default_generator(cache, kind):
    fd = random_definition(cache, kind, 0.5, 1.5, [4, 6], hostir.DataType.Double)
    torch.manual_seed(1234)
    first, second = fd.execute([])[0], fd.execute([])[0]
    assert not torch.equal(first, second)  # every run draws new values
    torch.manual_seed(1234)
    expected = getattr(torch.empty(4, 6, dtype=torch.float64), kind + "_")(0.5, 1.5)
    assert torch.equal(first, expected)


def test_seeded_draws_depend_on_seed_and_offset_only(cache):
    fd = random_definition(cache, "uniform", 0.0, 1.0, [8, 8], hostir.DataType.Float,
                           seeded=True)
    torch.manual_seed(1)
    a = fd.execute([7, 0])[0]
    torch.manual_seed(2)
    assert torch.equal(fd.execute([7, 0])[0], a)
    assert not torch.equal(fd.execute([7, 1])[0], a)
    assert not torch.equal(fd.execute([8, 0])[0], a)


def test_a_random_tensor_feeds_other_ops(cache):
    # dropout as nvFuser's nanoGPT test writes it
    x = torch.randn(64, 64)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2)
        u = fd.ops.uniform(0.0, 1.0, [t.size(0), t.size(1)])
        keep = fd.ops.cast(fd.ops.lt(u, 0.75), hostir.DataType.Float)
        fd.add_output(fd.ops.mul(fd.ops.mul(t, keep), 1 / 0.75))
    out = fd.execute([x])[0]
    kept = out != 0
    torch.testing.assert_close(out[kept], x[kept] / 0.75)
    assert 0.6 < kept.double().mean().item() < 0.9


@pytest.mark.parametrize("build, message", [
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], dtype=hostir.DataType.Int64),
     r"uniform: dtype int64 is not a floating dtype; use Float, Double, Half or BFloat16"),
    (lambda fd: fd.ops.normal(0.0, 1.0, [2], rng_seed=fd.define_scalar(3)),
     r"normal: give rng_seed and rng_offset together, or neither"),
    (lambda fd: fd.ops.uniform(0.0, 1.0, [-1]), r"uniform: size -1 is negative; valid: >= 0"),
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], rng_seed=fd.define_scalar(1.5),
                               rng_offset=fd.define_scalar(0)),
     r"uniform: rng_seed must be an integer scalar"),
])
def test_bad_input_names_the_op_and_what_is_valid(cache, build, message):
    with pytest.raises(hostir.Error, match=message):
        with hostir.FusionDefinition(cache) as fd:
            fd.add_output(build(fd))


def test_a_random_tensor_is_a_constant_to_the_grad(cache):
    # x * uniform(...): the grad of x is the drawn tensor (the rule was missing
    # before: "no gradient rule ... uniform").
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=hostir.DataType.Double)
        seed = fd.define_scalar(dtype=hostir.DataType.Int64)
        offset = fd.define_scalar(dtype=hostir.DataType.Int64)
        u = fd.ops.uniform(0.0, 1.0, [x.size(0), x.size(1)], dtype=hostir.DataType.Double,
                           rng_seed=seed, rng_offset=offset)
        fd.add_output(fd.ops.mul(x, u))
        fd.add_output(u)
    f = Differentiable(fd, outputs=[0])
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    y, drawn = f(x, 5, 0)
    y.sum().backward()
    torch.testing.assert_close(x.grad, drawn)
