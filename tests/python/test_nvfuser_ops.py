"""The ops nvFuser's frontend has that hostir added for its suite: sin, cos, signbit,
gcd, nextafter, the bitwise ops and shifts (UnaryOpType / BinaryOpType in
src/hostir/ir/ops.h), cumsum (scan_ops.h), scatter (scatter_ops.h), welford (a
composition), unary ops and casts on scalars, and reshape to sizes known only at
run time; each against torch on the same inputs, per dtype, with its grad where it
has one and its errors."""

import pytest
import torch

import hostir
from test_resize_ops import grads_match_torch

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64]


def make(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        x = torch.randn(shape).to(dtype)
        x.view(-1)[0] = -0.0  # signbit's case
        return x
    return torch.randint(-50, 50, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_sin_cos_signbit_match_torch(cache, dtype):
    x = make((3, 5), dtype)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2, dtype=dtype)
        fd.add_output(fd.ops.sin(t))
        fd.add_output(fd.ops.cos(t))
        fd.add_output(fd.ops.signbit(t))
        # inside a segment with pointwise ops around them
        fd.add_output(fd.ops.add(fd.ops.sin(fd.ops.mul(t, 2)), fd.ops.cos(t)))
    sin, cos, signbit, mixed = fd.execute([x])

    def torch_op(op, value):  # torch 1.13's CPU sin and cos lack Half: float, rounded
        return op(value.float()).half() if value.dtype == torch.float16 else op(value)

    torch.testing.assert_close(sin, torch_op(torch.sin, x))
    torch.testing.assert_close(cos, torch_op(torch.cos, x))
    assert signbit.dtype == torch.bool and torch.equal(signbit, torch.signbit(x))
    torch.testing.assert_close(mixed, torch_op(torch.sin, x * 2) + torch_op(torch.cos, x))


def test_sin_cos_grads_match_torch(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=hostir.DataType.Double)
        fd.add_output(fd.ops.mul(fd.ops.sin(x), fd.ops.cos(fd.ops.mul(x, x))))
    grads_match_torch(fd, lambda x: x.sin() * (x * x).cos(),
                      [torch.randn(3, 4, dtype=torch.float64)])


@pytest.mark.parametrize("dtype", INTS)
def test_integer_binary_ops_match_torch(cache, dtype):
    a = torch.randint(-1000, 1000, (64,), dtype=dtype)
    b = torch.randint(-1000, 1000, (64,), dtype=dtype)
    with hostir.FusionDefinition(cache) as fd:
        ta = fd.define_tensor(1, dtype=dtype)
        tb = fd.define_tensor(1, dtype=dtype)
        fd.add_output(fd.ops.gcd(ta, tb))
        fd.add_output(fd.ops.bitwise_and(ta, tb))
        fd.add_output(fd.ops.bitwise_or(ta, 12))
        fd.add_output(fd.ops.bitwise_xor(ta, tb))
    out = fd.execute([a, b])
    assert torch.equal(out[0], torch.gcd(a, b))
    assert torch.equal(out[1], a & b)
    assert torch.equal(out[2], a | 12)
    assert torch.equal(out[3], a ^ b)


@pytest.mark.parametrize("dtype", INTS)
def test_shifts_by_every_count(cache, dtype):
    width = torch.iinfo(dtype).bits
    a = torch.tensor([-1, -2**31, 2**30, -64463884, 5526216, 7], dtype=dtype).repeat(
        width + 4)
    counts = torch.arange(width + 4, dtype=dtype).repeat_interleave(6)
    with hostir.FusionDefinition(cache) as fd:
        ta = fd.define_tensor(1, dtype=dtype)
        tc = fd.define_tensor(1, dtype=dtype)
        fd.add_output(fd.ops.bitwise_right_shift(ta, tc))
        fd.add_output(fd.ops.logical_right_shift(ta, tc))
        fd.add_output(fd.ops.bitwise_left_shift(ta, tc))
    arithmetic, logical, left = fd.execute([a, counts])
    mask = (1 << width) - 1
    for i in range(a.numel()):
        value, count = int(a[i]), int(counts[i])
        unsigned = value & mask
        assert int(arithmetic[i]) == value >> min(count, width - 1)
        expected = (unsigned >> count) if count < width else 0
        expected -= (1 << width) if expected >> (width - 1) else 0  # back to signed
        assert int(logical[i]) == expected, (value, count)
        shifted = (unsigned << count) & mask if count < width else 0
        shifted -= (1 << width) if shifted >> (width - 1) else 0
        assert int(left[i]) == shifted, (value, count)


def test_nextafter_matches_torch_with_tensors_and_scalars(cache):
    a = torch.randn(8)
    b = torch.randn(8, dtype=torch.float64)
    with hostir.FusionDefinition(cache) as fd:
        ta = fd.define_tensor(1)
        tb = fd.define_tensor(1, dtype=hostir.DataType.Double)
        s = fd.define_scalar(-1.0, dtype=hostir.DataType.Double)
        fd.add_output(fd.ops.nextafter(ta, tb))
        fd.add_output(fd.ops.nextafter(ta, s))
        fd.add_output(fd.ops.nextafter(fd.ops.nextafter(s, 2.0), tb))
    out = fd.execute([a, b])
    torch.testing.assert_close(out[0], torch.nextafter(a.double(), b), rtol=0, atol=0)
    torch.testing.assert_close(out[1], torch.nextafter(a, torch.tensor(-1.0)), rtol=0, atol=0)
    up = torch.nextafter(torch.tensor(-1.0, dtype=torch.float64), torch.tensor(2.0).double())
    torch.testing.assert_close(out[2], torch.nextafter(up.expand(8), b), rtol=0, atol=0)


def nextafter_truth(a, b):
    """torch.nextafter in a and b's dtype, from the sorted list of every value of
    that dtype (half and bfloat16: all 65,536 bit patterns) in float64."""
    if a.dtype not in (torch.float16, torch.bfloat16):
        return torch.nextafter(a, b)
    values = torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(a.dtype)
    values = values.double()
    values = torch.unique(values[~values.isnan()])  # sorted; -0.0 and 0.0 are one
    x, y = a.double(), b.double()
    above = values[torch.searchsorted(values, x, right=True).clamp(max=len(values) - 1)]
    below = values[(torch.searchsorted(values, x) - 1).clamp(min=0)]
    step = torch.where(y > x, above, below)
    out = torch.where(x == y, y, step)
    return torch.where(x.isnan() | y.isnan(), x + y, out).to(a.dtype)


@pytest.mark.parametrize("kernels", ["compiled", "aten"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter_per_dtype_matches_every_neighbour(cache, monkeypatch, dtype, kernels):
    # Half and bfloat16 failed with ATen's '"nextafter_cpu" not implemented for
    # 'Half'': torch 1.13's CPU kernel lacks them; both paths step in their bits.
    monkeypatch.setenv("HOSTIR_KERNELS", kernels)
    info = torch.finfo(dtype)
    special = [0.0, -0.0, info.tiny, -info.tiny, info.max, -info.max, 1.0, -1.0,
               float("inf"), float("-inf"), float("nan")]
    a = torch.cat([torch.tensor(special).repeat_interleave(len(special)),
                   torch.randn(64) * 4]).to(dtype)
    b = torch.cat([torch.tensor(special).repeat(len(special)), torch.randn(64) * 4]).to(dtype)
    a[-8:] = b[-8:]  # equal operands give b
    a[-16:-8] = torch.tensor([6e-8, -6e-8, 1e-38, -1e-38] * 2).to(dtype)  # subnormals
    with hostir.FusionDefinition(cache) as fd:
        ta = fd.define_tensor(1, dtype=dtype)
        tb = fd.define_tensor(1, dtype=dtype)
        fd.add_output(fd.ops.nextafter(ta, tb))
        fd.add_output(fd.ops.nextafter(fd.ops.neg(ta), 0.1))  # a scalar in a's dtype
    out, toward = fd.execute([a, b])
    assert out.dtype == dtype and toward.dtype == dtype
    torch.testing.assert_close(out, nextafter_truth(a, b), rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(toward, nextafter_truth(-a, torch.full_like(a, 0.1)), rtol=0,
                               atol=0, equal_nan=True)
    assert ("ATen" in fd.execution()) == (kernels == "aten"), fd.execution()


def test_integer_ops_refuse_floats_and_have_no_grad(cache):
    with pytest.raises(hostir.Error, match="gcd.*takes integer operands"):
        with hostir.FusionDefinition(cache) as fd:
            fd.ops.gcd(fd.define_tensor(1), fd.define_tensor(1))
    with pytest.raises(hostir.Error, match="nextafter needs a floating-point"):
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor(1, dtype=hostir.DataType.Int64)
            fd.ops.nextafter(t, t)
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(1, dtype=hostir.DataType.Double)
        fd.add_output(fd.ops.nextafter(x, 0.0))
    with pytest.raises(hostir.Error, match="no gradient rule for .*nextafter"):
        hostir.autograd.Differentiable(fd)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_cumsum_matches_torch(cache, dtype):
    x = make((4, 6), dtype)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2, dtype=dtype)
        fd.add_output(fd.ops.cumsum(t, 0))
        fd.add_output(fd.ops.cumsum(t, dim=-1))
    first, last = fd.execute([x])
    for got, dim in ((first, 0), (last, -1)):
        # torch 1.13's CPU cumsum lacks Half: hostir sums it in float, rounded once
        expected = torch.cumsum(x.float(), dim).half() if dtype == torch.float16 else \
            torch.cumsum(x, dim)
        assert got.dtype == expected.dtype  # integers and bools sum in int64
        tolerance = dict(rtol=1e-2, atol=1e-2) if dtype == torch.bfloat16 else {}
        torch.testing.assert_close(got, expected, **tolerance)


def test_cumsum_grad_matches_torch(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(3, dtype=hostir.DataType.Double)
        fd.add_output(fd.ops.tanh(fd.ops.cumsum(fd.ops.mul(x, x), 1)))
    grads_match_torch(fd, lambda x: torch.cumsum(x * x, 1).tanh(),
                      [torch.randn(2, 5, 3, dtype=torch.float64)])


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_scatter_matches_torch(cache, dtype):
    x = make((6, 4), dtype)
    index = torch.stack([torch.randperm(6)[:3] for _ in range(4)], 1)  # distinct per column
    src = make((3, 4), dtype)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2, dtype=dtype)
        i = fd.define_tensor(2, dtype=hostir.DataType.Int64)
        s = fd.define_tensor(2, dtype=dtype)
        fd.add_output(fd.ops.scatter(t, i, s, 0))
        fd.add_output(fd.ops.scatter(t, i, 3, dim=0))
    out = fd.execute([x, index, src])
    assert torch.equal(out[0], torch.scatter(x, 0, index, src))
    assert torch.equal(out[1], torch.scatter(x, 0, index, 3))


def test_scatter_grads_match_torch(cache):
    index = torch.stack([torch.randperm(5)[:2] for _ in range(3)], 1)
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=hostir.DataType.Double)
        src = fd.define_tensor(2, dtype=hostir.DataType.Double)
        i = fd.define_tensor(2, dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.exp(fd.ops.scatter(x, i, fd.ops.mul(src, src), 0)))
    f = hostir.autograd.Differentiable(fd)
    x0, s0 = torch.randn(5, 3, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64)
    ours = [x0.clone().requires_grad_(), s0.clone().requires_grad_()]
    theirs = [x0.clone().requires_grad_(), s0.clone().requires_grad_()]
    out = f(ours[0], ours[1], index)
    expected = torch.scatter(theirs[0], 0, index, theirs[1] * theirs[1]).exp()
    torch.testing.assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine.grad, reference.grad)


def test_scatter_errors_name_the_op(cache):
    with pytest.raises(hostir.Error, match="scatter.*give Int64 or Int32 indices"):
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor(2)
            fd.ops.scatter(t, t, t, 0)
    with pytest.raises(hostir.Error, match="scatter.*cast src first"):
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor(2)
            fd.ops.scatter(t, fd.define_tensor(2, dtype=hostir.DataType.Int64),
                           fd.define_tensor(2, dtype=hostir.DataType.Double), 0)


def test_welford_is_var_mean_terms(cache):
    x = torch.randn(3, 7, 5, dtype=torch.float64)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(3, dtype=hostir.DataType.Double)
        avg, var_sum, n = fd.ops.welford(t, [0, -1])
        fd.add_output(avg)
        fd.add_output(var_sum)
        fd.add_output(n)
        fd.add_output(fd.ops.div(var_sum, n))
    avg, var_sum, n, var = fd.execute([x])
    expected_var, expected_mean = torch.var_mean(x, [0, 2], correction=0)
    torch.testing.assert_close(avg, expected_mean)
    torch.testing.assert_close(var, expected_var)
    torch.testing.assert_close(var_sum, expected_var * 15)
    assert n.dtype == torch.int64 and torch.equal(n, torch.full((7,), 15))


def test_unary_ops_and_casts_on_scalars(cache):
    # fd.ops.neg(scalar), abs, pow and cast on scalars raised "expected a tensor" before.
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(1)
        c = fd.define_scalar(-2.5)                          # a constant: folded
        s = fd.define_scalar(dtype=hostir.DataType.Double)  # an input: computed at run time
        width = fd.ops.cast(fd.ops.mul(s, 2), hostir.DataType.Int64)  # truncated
        scale = abs(c) ** -c + fd.ops.sin(s) - fd.ops.cast(-s, hostir.DataType.Int64)
        fd.add_output(fd.ops.pad(t, [width, 0]))
        fd.add_output(fd.ops.mul(t, scale))
        fd.add_output(fd.ops.mul(t, fd.ops.cast(fd.ops.signbit(-s), hostir.DataType.Double)))
    x = torch.randn(4)
    for value in (1.75, 2.6, -0.0):
        padded, scaled, signed = fd.execute([x, value])
        assert torch.equal(padded, torch.nn.functional.pad(x, [int(value * 2), 0]))
        scale = 2.5 ** 2.5 + torch.sin(torch.tensor(value, dtype=torch.float64)) - int(-value)
        torch.testing.assert_close(scaled, (x * scale).float())
        torch.testing.assert_close(signed, x * float(torch.signbit(torch.tensor(-value))))


def test_reshape_to_sizes_known_at_run_time(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        rows = fd.define_scalar(dtype=hostir.DataType.Int64)
        sizes = fd.define_vector(2)
        fd.add_output(fd.ops.reshape(x, [rows, -1]))
        fd.add_output(fd.ops.sum(fd.ops.reshape(fd.ops.exp(x), sizes), [0]))
    x = torch.randn(4, 6)
    for r, shape in ((2, [3, 8]), (8, (12, 2))):
        by_rows, summed = fd.execute([x, r, shape])
        assert torch.equal(by_rows, x.reshape(r, -1))
        torch.testing.assert_close(summed, x.exp().reshape(shape).sum(0))
    with pytest.raises(RuntimeError, match="invalid for input of size 24"):
        fd.execute([x, 5, [3, 8]])


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_fmod_matches_torch(cache, dtype):
    a = make((16,), dtype) * 3
    b = make((16,), dtype)
    b[b == 0] = 7  # an integer fmod by zero is an error, as torch's
    with hostir.FusionDefinition(cache) as fd:
        ta = fd.define_tensor(1, dtype=dtype)
        tb = fd.define_tensor(1, dtype=dtype)
        fd.add_output(fd.ops.fmod(ta, tb))
        fd.add_output(fd.ops.fmod(ta, -4))
    out = fd.execute([a, b])
    torch.testing.assert_close(out[0], torch.fmod(a, b))
    torch.testing.assert_close(out[1], torch.fmod(a, -4))


def test_scalar_comparisons_and_bitwise_ops_compute_a_size(cache):
    # nvFuser's frontend computes a reshape's sizes so (test_reshape_dynamic):
    # comparisons of scalars raised "needs a tensor operand" before.
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(3)
        n = fd.define_scalar(dtype=hostir.DataType.Int64)
        negative = fd.ops.ne(fd.ops.signbit(n), False)
        inexact = fd.ops.ne(fd.ops.fmod(192, n), 0)
        correction = fd.ops.cast(fd.ops.bitwise_and(negative, inexact), hostir.DataType.Int64)
        rows = fd.ops.sub(fd.ops.mul(192, fd.ops.reciprocal(n)), correction)  # a Double
        fd.add_output(fd.ops.reshape(t, fd.define_vector([n, rows])))
    x = torch.randn(4, 8, 6)
    for n in (32, 16):  # 192 * (1 / n) exact
        (out,) = fd.execute([x, n])
        assert torch.equal(out, x.reshape(n, 192 // n))
