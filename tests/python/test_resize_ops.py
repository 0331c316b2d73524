"""fd.ops.pad and fd.ops.cat (src/hostir/ir/resize_ops.h) and the gathers
index_select / take_along_axis / gather (gather_ops.h) against ATen per dtype,
their errors, their grads (and slice's, a pad) against torch autograd, and a
slice read by a later segment (a strided view, not contiguous memory)."""

import pytest
import torch
import torch.nn.functional as F

import hostir
from hostir.autograd import Differentiable

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
          torch.bool]


def make(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-50, 50, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_matches_aten(cache, dtype):
    x = make((2, 3, 4), dtype)
    fill = True if dtype == torch.bool else 7
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(3, dtype=dtype)
        width = fd.define_scalar(dtype=hostir.DataType.Int64)  # a run-time width
        fd.add_output(fd.ops.pad(t, [1, 2]))
        fd.add_output(fd.ops.pad(t, [0, 0, 2, 3, 1, 0], fill))
        fd.add_output(fd.ops.pad(t, [width, 1]))
        # pad inside a segment with pointwise ops around it
        fd.add_output(fd.ops.pad(fd.ops.abs(t), [1, 1]) if dtype != torch.bool
                      else fd.ops.pad(t, [1, 1]))
    out = fd.execute([x, 3])
    assert torch.equal(out[0], F.pad(x, [1, 2]))
    assert torch.equal(out[1], F.pad(x, [0, 0, 2, 3, 1, 0], value=fill))
    assert torch.equal(out[2], F.pad(x, [3, 1]))
    expected = F.pad(x.abs() if dtype != torch.bool else x, [1, 1])
    assert torch.equal(out[3], expected)
    assert all(o.dtype == dtype for o in out)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_matches_aten(cache, dtype):
    a, b, c = make((2, 3), dtype), make((4, 3), dtype), make((2, 5), dtype)
    with hostir.FusionDefinition(cache) as fd:
        ta = fd.define_tensor(2, dtype=dtype)
        tb = fd.define_tensor(2, dtype=dtype)
        tc = fd.define_tensor(2, dtype=dtype)
        fd.add_output(fd.ops.cat([ta, tb], 0))
        fd.add_output(fd.ops.cat([ta, tc, ta], dim=-1))
    out = fd.execute([a, b, c])
    assert torch.equal(out[0], torch.cat([a, b], 0))
    assert torch.equal(out[1], torch.cat([a, c, a], -1))


def test_cat_of_an_empty_tensor_and_pad_then_cat(cache):
    a, empty, b = torch.randn(2, 4), torch.randn(0, 4), torch.randn(3, 3)
    with hostir.FusionDefinition(cache) as fd:
        ta, te, tb = fd.define_tensor(2), fd.define_tensor(2), fd.define_tensor(2)
        fd.add_output(fd.ops.cat([ta, te], 0))
        fd.add_output(fd.ops.cat([fd.ops.pad(ta, [0, 0, 0, 8]), fd.ops.pad(tb, [0, 0, 0, 7])], 1))
    out = fd.execute([a, empty, b])
    assert torch.equal(out[0], a)
    assert torch.equal(out[1], torch.cat([F.pad(a, [0, 0, 0, 8]), F.pad(b, [0, 0, 0, 7])], 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_pad_of_a_tensor_with_an_empty_axis(cache, dtype):
    # ATen 1.13's constant_pad_nd refuses an empty axis even under widths
    # (0, 0), which hostir's pad gives every axis (the differential fuzzer
    # found it: seed 117).
    x = make((0, 3), dtype)
    fill = True if dtype == torch.bool else 5
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2, dtype=dtype)
        fd.add_output(fd.ops.pad(t, [1, 2], fill))
        fd.add_output(fd.ops.pad(t, [0, 0, 2, 1], fill))
    out = fd.execute([x])
    assert out[0].shape == (0, 6)
    assert torch.equal(out[1], F.pad(x, [0, 0, 2, 1], value=fill))
    assert out[1].shape == (3, 3)


@pytest.mark.parametrize("build, message", [
    (lambda fd, t: fd.ops.pad(t, [1, -1]), r"pad\(.*\): width -1 of axis 1 is negative; valid: >= 0"),
    (lambda fd, t: fd.ops.pad(t, [1, 1, 1, 1, 1, 1]), r"pad\(.*\): got 6 widths; give pairs"),
    (lambda fd, t: fd.ops.pad(t, [1]), r"pad\(.*\): got 1 widths; give pairs"),
    (lambda fd, t: fd.ops.pad(t, 2), r"pad: pad_widths must be a list"),
    (lambda fd, t: fd.ops.pad(t, [1, 1], True), r"pad\(.*\): a Bool pad value for a float tensor"),
    (lambda fd, t: fd.ops.cat([t, fd.ops.cast(t, hostir.DataType.Double)], 0),
     r"cat: .* has dtype double but .* has float; cast them to one dtype first"),
    (lambda fd, t: fd.ops.cat([t, fd.ops.sum(t, [0])], 0),
     r"cat: .* has rank 1 but .* has rank 2; every tensor needs the same rank"),
    (lambda fd, t: fd.ops.cat([t, t], 2), r"cat\(.*\): dim 2 is out of range for rank 2"),
    (lambda fd, t: fd.ops.cat([], 0), r"cat: tensors must be a non-empty list"),
])
def test_bad_input_names_the_op_and_what_is_valid(cache, build, message):
    with pytest.raises(hostir.Error, match=message):
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor([2, 3])
            fd.add_output(build(fd, t))


def test_cat_of_unequal_extents_is_refused(cache):
    with pytest.raises(hostir.Error, match=r"cat\(dim=0\): .* differ on axis 1; all axes but dim"):
        with hostir.FusionDefinition(cache) as fd:
            a, b = fd.define_tensor([2, 3]), fd.define_tensor([2, 4])
            fd.add_output(fd.ops.cat([a, b], 0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_gathers_match_aten(cache, dtype, index_dtype):
    x = make((4, 6), dtype)
    rows = torch.tensor([3, 0, 0, 2, 1], dtype=index_dtype)
    positions = torch.randint(0, 4, (3, 5)).to(index_dtype)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2, dtype=dtype)
        r = fd.define_tensor(1, dtype=index_dtype)
        p = fd.define_tensor(2, dtype=index_dtype)
        fd.add_output(fd.ops.index_select(t, r, 0))
        fd.add_output(fd.ops.index_select(t, r, dim=-1))
        fd.add_output(fd.ops.take_along_axis(t, p, 0))
        fd.add_output(fd.ops.gather(t, p, 1))
    out = fd.execute([x, rows, positions])
    assert torch.equal(out[0], torch.index_select(x, 0, rows.long()))
    assert torch.equal(out[1], torch.index_select(x, 1, rows.long()))
    assert torch.equal(out[2], torch.gather(x, 0, positions.long()))
    assert torch.equal(out[3], torch.gather(x, 1, positions.long()))


def test_index_select_with_a_0_dim_index(cache):
    x = torch.randn(8, 16)
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(2)
        i = fd.define_tensor(shape=[], contiguity=[], dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.index_select(t, i, 1))
    assert torch.equal(fd.execute([x, torch.tensor(2)])[0], torch.index_select(x, 1, torch.tensor(2)))


@pytest.mark.parametrize("build, message", [
    (lambda fd, t, i: fd.ops.index_select(t, fd.ops.cast(i, hostir.DataType.Float), 0),
     r"index_select\(.*\): the index has dtype float; give Int64 or Int32 indices"),
    (lambda fd, t, i: fd.ops.index_select(t, i, 0),
     r"index_select\(.*\): the index has rank 2; index_select takes a 1-D"),
    (lambda fd, t, i: fd.ops.take_along_axis(t, fd.ops.sum(i, [0]), 0),
     r"take_along_axis\(.*\): the index has rank 1 but the input has rank 2"),
    (lambda fd, t, i: fd.ops.gather(t, i, 3), r"take_along_axis\(.*\): dim 3 is out of range"),
    (lambda fd, t, i: fd.ops.take_along_axis(t, fd.ops.pad(i, [0, 5]), 0),
     r"on axis 1 the index has extent 8 but the input only 3"),
])
def test_bad_gathers_name_the_op_and_what_is_valid(cache, build, message):
    with pytest.raises(hostir.Error, match=message):
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor([2, 3])
            i = fd.define_tensor([2, 3], dtype=hostir.DataType.Int64)
            fd.add_output(build(fd, t, i))


def test_slice_then_reshape_reads_the_strided_view(cache):
    # Failed before: the slice's output was declared contiguous, so the
    # segment reshaping it refused the strided view the host made
    # ("declared contiguous (makeContigTensor) but got a tensor with strides").
    x = torch.randn(100).as_strided((2, 5, 10), (50, 10, 1))
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True])
        s = fd.ops.slice(t, start_indices=[0, 0, 0], end_indices=[1, 2, 4], strides=[1, 1, 1])
        fd.add_output(fd.ops.reshape(fd.ops.reshape(s, new_shape=[1, 8]), new_shape=[8]))
        fd.add_output(fd.ops.exp(fd.ops.select(t, 2, 3)))
    out = fd.execute([x])
    assert torch.equal(out[0], x[0:1, 0:2, 0:4].reshape(8))
    torch.testing.assert_close(out[1], x[:, :, 3].exp())


def grads_match_torch(fd, torch_fn, inputs):
    f = Differentiable(fd)
    ours = [t.clone().requires_grad_() for t in inputs]
    theirs = [t.clone().requires_grad_() for t in inputs]
    out, expected = f(*ours), torch_fn(*theirs)
    torch.testing.assert_close(out, expected)
    g = torch.randn_like(expected)
    (out * g).sum().backward()
    (expected * g).sum().backward()
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine.grad, reference.grad)


def test_slice_grad_is_a_pad(cache):
    # slice raised "no gradient rule" before.
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=hostir.DataType.Double)
        fd.add_output(fd.ops.exp(fd.ops.slice(fd.ops.slice(x, 0, 1, 3), 1, 2, 4)))
    grads_match_torch(fd, lambda x: x[1:3, 2:4].exp(), [torch.randn(4, 5, dtype=torch.float64)])


def test_slice_grad_with_run_time_bounds(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(1, dtype=hostir.DataType.Double)
        start = fd.define_scalar(dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.tanh(fd.ops.slice(x, 0, start, 6)))
    f = Differentiable(fd)
    for s in (2, -3):
        ours = torch.randn(7, dtype=torch.float64, requires_grad=True)
        theirs = ours.detach().clone().requires_grad_()
        f(ours, s).sum().backward()
        theirs[s:6].tanh().sum().backward()
        torch.testing.assert_close(ours.grad, theirs.grad)


def test_pad_and_cat_grads(cache):
    with hostir.FusionDefinition(cache) as fd:
        a = fd.define_tensor(2, dtype=hostir.DataType.Double)
        b = fd.define_tensor(2, dtype=hostir.DataType.Double)
        padded = fd.ops.pad(fd.ops.mul(a, a), [1, 2, 0, 3], 0.5)
        fd.add_output(fd.ops.tanh(fd.ops.cat([padded, b], 1)))
    grads_match_torch(
        fd, lambda a, b: torch.cat([F.pad(a * a, [1, 2, 0, 3], value=0.5), b], 1).tanh(),
        [torch.randn(2, 3, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)])


def test_pad_cat_and_gathers_join_the_segments_kernel(cache):
    # They ran through ATen before ("pad has no kernel lowering"): now each
    # segment, pointwise ops around them included, is a compiled kernel, and an index out of range is still torch's error (that call runs
    # through ATen, and the report says why).
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2, dtype=hostir.DataType.Float)
        index = fd.define_tensor(1, dtype=hostir.DataType.Int64)
        along = fd.define_tensor(2, dtype=hostir.DataType.Int64)
        padded = fd.ops.pad(fd.ops.abs(x), [1, 2], 0.5)
        joined = fd.ops.cat([padded, fd.ops.neg(padded)], 0)
        fd.add_output(fd.ops.mul(joined, 2.0))
        fd.add_output(fd.ops.add(fd.ops.index_select(x, index, 0), 1.0))
        fd.add_output(fd.ops.take_along_axis(fd.ops.exp(x), along, 1))
    x_in = torch.randn(4, 5)
    index_in = torch.tensor([3, 0, 3])
    along_in = torch.randint(0, 5, (4, 2))
    out = fd.execute([x_in, index_in, along_in])
    padded_ref = F.pad(x_in.abs(), [1, 2], value=0.5)
    torch.testing.assert_close(out[0], torch.cat([padded_ref, -padded_ref], 0) * 2.0)
    torch.testing.assert_close(out[1], x_in.index_select(0, index_in) + 1.0)
    torch.testing.assert_close(out[2], torch.gather(x_in.exp(), 1, along_in))
    report = fd.execution()
    assert "ATen" not in report, report
    assert report.count(": compiled kernel ") == report.count("HostUnit") > 0, report
    with pytest.raises(Exception, match="index"):
        fd.execute([x_in, torch.tensor([3, 4, 0]), along_in])
    assert "index_select's index T" in fd.execution() and "holds 4, outside [0, 4)" in fd.execution()
