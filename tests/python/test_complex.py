"""Complex dtypes (DataType.ComplexFloat / ComplexDouble, torch's complex64 /
complex128): constants, promotion as torch's, real / imag, and pointwise and
reduction ops, each against torch per dtype. Halide has no complex type, so
these segments run through ATen, and fd.execution() says why."""

import pytest
import torch

import hostir
from hostir import DataType

COMPLEX = [torch.complex64, torch.complex128]


def run(definition, inputs):
    with hostir.FusionDefinition() as fd:
        definition(fd)
    return fd, fd.execute(inputs)


def sample(dtype, *shape):
    torch.manual_seed(0)
    return torch.randn(*shape, dtype=dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_pointwise_ops_match_torch(dtype):
    x, y = sample(dtype, 3, 5), sample(dtype, 3, 5).flip(0)

    def definition(fd):
        a, b = fd.from_pytorch(x), fd.from_pytorch(y)
        fd.add_output(fd.ops.add(a, b))
        fd.add_output(fd.ops.sub(a, b))
        fd.add_output(fd.ops.mul(a, b))
        fd.add_output(fd.ops.div(a, b))
        fd.add_output(fd.ops.neg(a))
        fd.add_output(fd.ops.exp(a))
        fd.add_output(fd.ops.rsqrt(a))
        fd.add_output(fd.ops.sqrt(a))
        fd.add_output(fd.ops.tanh(a))

    _, outs = run(definition, [x, y])
    expected = [x + y, x - y, x * y, x / y, -x, torch.exp(x), torch.rsqrt(x), torch.sqrt(x),
                torch.tanh(x)]
    for out, want in zip(outs, expected):
        assert out.dtype == dtype
        torch.testing.assert_close(out, want)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_real_imag_abs_give_the_part_dtype(dtype):
    x = sample(dtype, 7)

    def definition(fd):
        a = fd.from_pytorch(x)
        fd.add_output(fd.ops.real(a))
        fd.add_output(fd.ops.imag(a))
        fd.add_output(fd.ops.abs(a))

    _, (re, im, mag) = run(definition, [x])
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    for out, want in ((re, torch.real(x)), (im, torch.imag(x)), (mag, torch.abs(x))):
        assert out.dtype == part
        assert out.is_contiguous()
        torch.testing.assert_close(out, want)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sum_keeps_the_complex_dtype(dtype):
    x = sample(dtype, 4, 33)

    def definition(fd):
        fd.add_output(fd.ops.sum(fd.from_pytorch(x), [-1]))

    _, (out,) = run(definition, [x])
    assert out.dtype == dtype
    torch.testing.assert_close(out, x.sum(-1))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_constant_times_tensor(dtype):
    x = sample(dtype, 6)

    def definition(fd):
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.mul(t, fd.define_scalar(complex(3.0, 0.5))))
        fd.add_output(fd.ops.add(t, 1 - 2j))  # a Python complex number

    _, (prod, total) = run(definition, [x])
    assert prod.dtype == dtype and total.dtype == dtype
    torch.testing.assert_close(prod, x * (3.0 + 0.5j))
    torch.testing.assert_close(total, x + (1 - 2j))


@pytest.mark.parametrize("real, expected", [(torch.float32, torch.complex64),
                                            (torch.float64, torch.complex128),
                                            (torch.int64, torch.complex64)])
def test_real_tensor_with_a_complex_number_promotes_as_torch(real, expected):
    x = torch.arange(5).to(real)

    def definition(fd):
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), 2.5j))

    _, (out,) = run(definition, [x])
    want = x * 2.5j
    assert out.dtype == want.dtype == expected
    torch.testing.assert_close(out, want)


@pytest.mark.parametrize("a, b", [(torch.complex64, torch.float64),
                                  (torch.complex64, torch.complex128),
                                  (torch.complex128, torch.float32),
                                  (torch.complex64, torch.int32)])
def test_tensor_promotion_matches_torch(a, b):
    x, y = sample(a, 4), torch.arange(4).to(b)

    def definition(fd):
        fd.add_output(fd.ops.add(fd.from_pytorch(x), fd.from_pytorch(y)))

    _, (out,) = run(definition, [x, y])
    assert out.dtype == torch.promote_types(a, b)
    torch.testing.assert_close(out, x + y)


def test_where_with_scalars_gives_their_dtype_as_nvfuser():
    cond = torch.tensor([True, False, True])

    def definition(fd):
        c = fd.from_pytorch(cond)
        fd.add_output(fd.ops.where(c, fd.define_scalar(3 + 1j), fd.define_scalar(5.0 + 0j)))
        fd.add_output(fd.ops.where(c, fd.define_scalar(3.0, DataType.ComplexFloat),
                                   fd.define_scalar(0.1 + 2j, DataType.ComplexFloat)))
        fd.add_output(fd.ops.where(c, fd.define_scalar(3.0), fd.define_scalar(5.0)))
        fd.add_output(fd.ops.where(c, fd.define_scalar(0.1, DataType.Float),
                                   fd.define_scalar(5.0, DataType.Float)))
        fd.add_output(fd.ops.where(c, fd.define_scalar(3, DataType.Int32),
                                   fd.define_scalar(5, DataType.Int32)))

    _, (cd, cf, d, f, i) = run(definition, [cond])
    assert (cd.dtype, cf.dtype, d.dtype, f.dtype, i.dtype) == (
        torch.complex128, torch.complex64, torch.float64, torch.float32, torch.int32)
    assert cd.tolist() == [3 + 1j, 5 + 0j, 3 + 1j]
    # A ComplexFloat / Float constant holds its value rounded to float.
    assert torch.equal(cf, torch.where(cond, torch.tensor(3.0 + 0j, dtype=torch.complex64),
                                       torch.tensor(0.1 + 2j, dtype=torch.complex64)))
    assert torch.equal(f, torch.where(cond, torch.tensor(0.1), torch.tensor(5.0)))
    assert i.tolist() == [3, 5, 3]


def test_complex_segments_run_through_aten_and_say_why():
    x = sample(torch.complex64, 8)

    def definition(fd):
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.mul(fd.ops.add(t, 1.0), t))

    fd, (out,) = run(definition, [x])
    torch.testing.assert_close(out, (x + 1.0) * x)
    report = fd.execution()
    assert "ATen: " in report and "Halide has no complex type" in report, report


def test_complex_scalar_input_and_cast():
    x = sample(torch.complex128, 5)

    def definition(fd):
        t = fd.from_pytorch(x)
        s = fd.define_scalar(dtype=DataType.ComplexDouble)
        fd.add_output(fd.ops.mul(t, s))
        fd.add_output(fd.ops.cast(t, DataType.ComplexFloat))

    _, (prod, narrow) = run(definition, [x, 2 - 1j])
    torch.testing.assert_close(prod, x * (2 - 1j))
    assert narrow.dtype == torch.complex64
    torch.testing.assert_close(narrow, x.to(torch.complex64))


def test_errors_name_the_op_and_what_is_valid():
    with pytest.raises(hostir.Error, match=r"real\(.*needs a complex operand"):
        with hostir.FusionDefinition() as fd:
            fd.ops.real(fd.define_tensor(1, dtype=DataType.Float))
    with pytest.raises(hostir.Error, match=r"relu\(.*not defined for a complex operand"):
        with hostir.FusionDefinition() as fd:
            fd.ops.relu(fd.define_tensor(1, dtype=DataType.ComplexFloat))
    with pytest.raises(hostir.Error, match=r"lt\(.*is complex .*needs real operands"):
        with hostir.FusionDefinition() as fd:
            x = fd.define_tensor(1, dtype=DataType.ComplexDouble)
            fd.ops.lt(x, x)
    with pytest.raises(hostir.Error, match=r"define_scalar: .*complex.*ComplexFloat"):
        with hostir.FusionDefinition() as fd:
            fd.define_scalar(1 + 2j, DataType.Float)


def test_printed_definition_with_a_complex_constant_reexecutes():
    x = sample(torch.complex64, 4)
    with hostir.FusionDefinition() as fd:
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), fd.define_scalar(complex(3.0, 0.5))))
    text = fd.repro()
    assert "complex(3.0, 0.5)" in text, text
    scope = {}
    exec(text, scope)
    (out,) = scope["fd"].execute([x])
    torch.testing.assert_close(out, x * (3.0 + 0.5j))


def test_scalar_inputs_take_complex_numbers_only_for_complex_dtypes():
    x = sample(torch.complex64, 3)
    with hostir.FusionDefinition() as fd:
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), fd.define_scalar(dtype=DataType.ComplexFloat)))
    for real in (2.0, 2):  # a real number is a complex one with no imaginary part
        torch.testing.assert_close(fd.execute([x, real])[0], x * 2)
    with hostir.FusionDefinition() as fd:
        fd.add_output(fd.ops.mul(fd.define_tensor(1), fd.define_scalar(dtype=DataType.Double)))
    with pytest.raises(hostir.Error, match=r"scalar value out of its dtype: .* has dtype double "
                                           r"but got complex .*give a real number"):
        fd.execute([torch.randn(3), 1j])
