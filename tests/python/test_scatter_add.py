"""scatter_add and index_add (ScatterAddOp, scatter_ops.h: the gathers' grads)
against torch per dtype, and the grads of the ops whose rules came with them
(take_along_axis, index_select, scatter_add, index_add, the product reduction)
against torch autograd: gradcheck in float64 on small shapes, and the grads of
a float32 run."""

import pytest
import torch

import hostir
from hostir.autograd import Differentiable

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64]
D = hostir.DataType.Double


def make(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-50, 50, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_scatter_add_and_index_add_match_torch(cache, dtype, index_dtype):
    x = make((5, 4), dtype)
    src = make((4, 4), dtype)  # longer than the index: its last row unread
    index = torch.randint(0, 5, (3, 4)).to(index_dtype)  # repeats add up
    columns = torch.tensor([3, 0, 3], dtype=index_dtype)
    added = make((5, 3), dtype)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2, dtype=dtype)
        s = fd.define_tensor(2, dtype=dtype)
        i = fd.define_tensor(2, dtype=index_dtype)
        c = fd.define_tensor(1, dtype=index_dtype)
        a = fd.define_tensor(2, dtype=dtype)
        fd.add_output(fd.ops.scatter_add(t, i, s, 0))
        fd.add_output(fd.ops.index_add(t, c, a, dim=-1))
    out = fd.execute([x, src, index, columns, added])
    assert torch.equal(out[0], torch.scatter_add(x, 0, index.long(), src))
    assert torch.equal(out[1], torch.index_add(x, 1, columns.long(), added))
    # The printed definition re-executes to the same result.
    assert "fd.ops.scatter_add(" in repr(fd) and "fd.ops.index_add(" in repr(fd)


def double_inputs(*shapes):
    return [torch.randn(shape, dtype=torch.float64, requires_grad=True) for shape in shapes]


def test_gathers_pass_gradcheck(cache):
    # "no gradient rule for index_select" before.
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=D)
        rows = fd.define_tensor(2, dtype=hostir.DataType.Int64)
        cols = fd.define_tensor(1, dtype=hostir.DataType.Int32)
        fd.add_output(fd.ops.tanh(fd.ops.take_along_axis(fd.ops.mul(x, x), rows, 0)))
        fd.add_output(fd.ops.exp(fd.ops.index_select(x, cols, 1)))
        fd.add_output(fd.ops.gather(x, rows, 0))
    f = Differentiable(fd)
    rows = torch.randint(0, 4, (6, 3))  # repeats: their grads add up
    cols = torch.tensor([2, 0, 2, 2], dtype=torch.int32)
    (x,) = double_inputs((4, 3))
    assert torch.autograd.gradcheck(lambda x: f(x, rows, cols), [x])


def test_scatter_adds_pass_gradcheck(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=D)
        src = fd.define_tensor(2, dtype=D)
        added = fd.define_tensor(2, dtype=D)
        index = fd.define_tensor(2, dtype=hostir.DataType.Int64)
        cols = fd.define_tensor(1, dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.sin(fd.ops.scatter_add(x, index, fd.ops.mul(src, src), 0)))
        fd.add_output(fd.ops.mul(fd.ops.index_add(x, cols, added, 1), x))
    f = Differentiable(fd)
    index = torch.randint(0, 4, (2, 3))
    cols = torch.tensor([1, 1, 0, 2])
    # src has a row and a column more than the index: they get zero grads.
    inputs = double_inputs((4, 3), (3, 4), (4, 4))
    assert torch.autograd.gradcheck(lambda x, s, a: f(x, s, a, index, cols), inputs)


def test_prod_passes_gradcheck_with_zeros(cache):
    # "no gradient rule for ... (a product reduction)" before.
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=D)
        fd.add_output(fd.ops.prod(x, [1]))
        fd.add_output(fd.ops.prod(x, [0], keep_dim=True))
        fd.add_output(fd.ops.prod(x, [0, 1]))
    f = Differentiable(fd)
    (x,) = double_inputs((3, 4))
    with torch.no_grad():
        x[1, 2] = 0.0  # row 1: one zero
        x[2, 0] = x[2, 2] = 0.0  # row 2: two; column 2: two
    assert torch.autograd.gradcheck(f, [x])


def test_float32_grads_of_a_gather_and_a_product_match_torch(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        index = fd.define_tensor(2, dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.prod(fd.ops.take_along_axis(x, index, 1), [1]))
    f = Differentiable(fd)
    x0 = torch.randn(6, 5)
    x0[2, 1] = 0.0
    index = torch.randint(0, 5, (6, 3))
    ours, theirs = x0.clone().requires_grad_(), x0.clone().requires_grad_()
    out = f(ours, index)
    expected = torch.gather(theirs, 1, index).prod(1)
    torch.testing.assert_close(out, expected)
    g = torch.randn_like(expected)
    (out * g).sum().backward()
    (expected * g).sum().backward()
    torch.testing.assert_close(ours.grad, theirs.grad)


@pytest.mark.parametrize("build,message", [
    (lambda fd, t, i: fd.ops.scatter_add(t, t, t, 0), r"scatter_add.*give Int64 or Int32 indices"),
    (lambda fd, t, i: fd.ops.index_add(t, i, t, 0), r"index_add.*takes a 1-D \(or 0-D\) index"),
    (lambda fd, t, i: fd.ops.scatter_add(t, i, fd.define_tensor([4, 5], dtype=D), 0),
     r"scatter_add.*src has dtype double, the input float; cast src first"),
    (lambda fd, t, i: fd.ops.scatter_add(t, i, fd.define_tensor([1, 5]), 0),
     r"scatter_add.*on axis 0 the index has extent 2, src 1 and the input 4"),
    (lambda fd, t, i: fd.ops.index_add(t, fd.define_tensor([3], dtype=hostir.DataType.Int64),
                                       fd.define_tensor([2, 5]), 0),
     r"index_add.*on axis 0 src has extent 2 but needs 3 \(the number of indices\)"),
])
def test_bad_scatter_adds_name_the_op_and_what_is_valid(cache, build, message):
    with pytest.raises(hostir.Error, match=message):
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor([4, 5])
            i = fd.define_tensor([2, 5], dtype=hostir.DataType.Int64)
            build(fd, t, i)
