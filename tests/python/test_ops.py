"""Every op builder of hostir/ir/arith.h from Python, against torch."""

import pytest
import torch

import hostir

F = hostir.DataType.Float


def run(cache, build, inputs, **kwargs):
    with hostir.FusionDefinition(cache) as fd:
        build(fd)
    return fd, fd.execute(inputs, **kwargs)


UNARY = {
    "set": lambda t: t.clone(),
    "neg": torch.neg,
    "abs": torch.abs,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "gelu": torch.nn.functional.gelu,
    "gelu_derivative": lambda t: torch.ops.aten.gelu_backward(torch.ones_like(t), t),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(cache, name):
    x = torch.rand(4, 6) + 0.1
    if name in ("neg", "abs", "relu", "gelu", "gelu_derivative", "tanh", "set", "sigmoid"):
        x = torch.randn(4, 6)

    def build(fd):
        t = fd.define_tensor(2)
        fd.add_output(getattr(fd.ops, name)(t))

    _, (out,) = run(cache, build, [x])
    torch.testing.assert_close(out, UNARY[name](x))


BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_tensor_tensor_broadcast(cache, name):
    a, b = torch.randn(3, 5), torch.randn(1, 5) + 3.0

    def build(fd):
        ta = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=F)
        tb = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=F)
        fd.add_output(getattr(fd.ops, name)(ta, tb))

    _, (out,) = run(cache, build, [a, b])
    torch.testing.assert_close(out, BINARY[name](a, b))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary_with_python_numbers(cache, name):
    a = torch.randn(4, 3)

    def build(fd):
        t = fd.define_tensor(2)
        fd.add_output(getattr(fd.ops, name)(t, 2.5))
        fd.add_output(getattr(fd.ops, name)(3, t))

    _, (left, right) = run(cache, build, [a])
    torch.testing.assert_close(left, BINARY[name](a, 2.5))
    torch.testing.assert_close(right, BINARY[name](torch.full_like(a, 3.0), a))


def test_python_operators(cache):
    a, b = torch.randn(2, 3), torch.randn(2, 3)

    def build(fd):
        x, y = fd.define_tensor(2), fd.define_tensor(2)
        fd.add_output((x + y) * 2.0 - y / 4.0)
        fd.add_output(-x)
        fd.add_output(1.0 - x)
        fd.add_output(abs(y))

    _, outs = run(cache, build, [a, b])
    torch.testing.assert_close(outs[0], (a + b) * 2.0 - b / 4.0)
    torch.testing.assert_close(outs[1], -a)
    torch.testing.assert_close(outs[2], 1.0 - a)
    torch.testing.assert_close(outs[3], b.abs())


def test_symbolic_scalar_input(cache):
    a = torch.randn(5)

    def build(fd):
        t = fd.define_tensor(1)
        s = fd.define_scalar(dtype=hostir.DataType.Double)
        fd.add_output(t * s)

    fd, (out,) = run(cache, build, [a, 1.5])
    torch.testing.assert_close(out, a * 1.5)
    (out,) = fd.execute([a, -2.0])
    torch.testing.assert_close(out, a * -2.0)


@pytest.mark.parametrize("name", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("keep_dim", [False, True])
def test_reductions(cache, name, keep_dim):
    a = torch.rand(3, 4, 5) + 0.5

    def build(fd):
        t = fd.define_tensor(3)
        fd.add_output(getattr(fd.ops, name)(t, axes=[0, 2], keep_dim=keep_dim))

    _, (out,) = run(cache, build, [a])
    if name == "sum":
        expected = a.sum(dim=[0, 2], keepdim=keep_dim)
    elif name == "prod":
        expected = a.prod(dim=2, keepdim=keep_dim).prod(dim=0, keepdim=keep_dim)
    else:
        reduce = torch.amax if name == "max" else torch.amin
        expected = reduce(a, dim=[0, 2], keepdim=keep_dim)
    torch.testing.assert_close(out, expected)


def test_broadcast(cache):
    a, b = torch.randn(3), torch.randn(4, 3)

    def build(fd):
        t, u = fd.define_tensor(1), fd.define_tensor(2)
        bt = fd.ops.broadcast(t, is_broadcast_dim=[True, False])
        fd.add_output(bt + u)

    _, (out,) = run(cache, build, [a, b])
    torch.testing.assert_close(out, a.unsqueeze(0) + b)


@pytest.mark.parametrize("shapes", [((4, 8), (8, 3)), ((2, 4, 8), (8, 5)), ((8,), (8, 2))])
def test_matmul(cache, shapes):
    a, b = torch.randn(*shapes[0]), torch.randn(*shapes[1])

    def build(fd):
        x, y = fd.define_tensor(len(shapes[0])), fd.define_tensor(len(shapes[1]))
        fd.add_output(fd.ops.matmul(x, y))
        fd.add_output(x @ y)

    _, (out, out2) = run(cache, build, [a, b])
    torch.testing.assert_close(out, torch.matmul(a, b))
    torch.testing.assert_close(out2, torch.matmul(a, b))


@pytest.mark.parametrize("with_bias", [False, True])
def test_linear(cache, with_bias):
    x, w, bias = torch.randn(4, 8), torch.randn(6, 8), torch.randn(6)

    def build(fd):
        tx, tw = fd.define_tensor(2), fd.define_tensor(2)
        tb = fd.define_tensor(1) if with_bias else None
        fd.add_output(fd.ops.linear(tx, tw, bias=tb))

    inputs = [x, w, bias] if with_bias else [x, w]
    _, (out,) = run(cache, build, inputs)
    torch.testing.assert_close(out, torch.nn.functional.linear(x, w, bias if with_bias else None))


def test_select_slice_permute_reshape(cache):
    a = torch.randn(4, 6, 2)

    def build(fd):
        t = fd.define_tensor(3)
        fd.add_output(fd.ops.select(t, dim=1, index=2))
        fd.add_output(fd.ops.slice(t, dim=1, start=1, stop=5))
        fd.add_output(fd.ops.permute(t, dims=[2, 0, 1]))
        fd.add_output(fd.ops.reshape(t, new_sizes=[4, -1]))

    _, outs = run(cache, build, [a])
    torch.testing.assert_close(outs[0], a.select(1, 2))
    torch.testing.assert_close(outs[1], a[:, 1:5])
    torch.testing.assert_close(outs[2], a.permute(2, 0, 1))
    torch.testing.assert_close(outs[3], a.reshape(4, -1))


def test_select_with_scalar_input_index(cache):
    a = torch.randn(5, 3)

    def build(fd):
        t = fd.define_tensor(2)
        i = fd.define_scalar(dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.select(t, 0, i))

    fd, (out,) = run(cache, build, [a, 3])
    torch.testing.assert_close(out, a[3])


def test_full_zeros_ones_from_extents(cache):
    a = torch.randn(6, 4)

    def build(fd):
        t = fd.define_tensor(2)
        rows, cols = t.size(0), fd.ops.size(t, 1)
        fd.add_output(fd.ops.full([rows, cols], 2.5, dtype=F) + t)
        fd.add_output(fd.ops.zeros([rows], dtype=hostir.DataType.Int64))
        fd.add_output(fd.ops.ones([cols, 3], dtype=F))
        half = fd.ops.ceil_div(rows, 4)
        fd.add_output(fd.ops.full([half], 1.0, dtype=F))
        fd.add_output(fd.ops.full([fd.ops.mod(rows, 4)], 7.0, dtype=F))

    _, outs = run(cache, build, [a])
    torch.testing.assert_close(outs[0], a + 2.5)
    torch.testing.assert_close(outs[1], torch.zeros(6, dtype=torch.int64))
    torch.testing.assert_close(outs[2], torch.ones(4, 3))
    torch.testing.assert_close(outs[3], torch.ones(2))
    torch.testing.assert_close(outs[4], torch.full((2,), 7.0))


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32, torch.int64, torch.float16])
def test_cast(cache, dtype):
    a = torch.randn(3, 4) * 10

    def build(fd):
        t = fd.define_tensor(2)
        fd.add_output(fd.ops.cast(t, dtype))

    _, (out,) = run(cache, build, [a])
    torch.testing.assert_close(out, a.to(dtype))


def test_integer_and_bool_inputs(cache):
    a = torch.arange(12, dtype=torch.int64).reshape(3, 4)

    def build(fd):
        t = fd.define_tensor(2, dtype=hostir.DataType.Int64)
        fd.add_output(t * 2)
        fd.add_output(fd.ops.sum(t, [1]))
        fd.add_output(fd.ops.exp(t))

    _, outs = run(cache, build, [a])
    torch.testing.assert_close(outs[0], a * 2)
    torch.testing.assert_close(outs[1], a.sum(1))
    torch.testing.assert_close(outs[2], torch.exp(a))


def test_define_tensor_forms(cache):
    t = torch.randn(4, 1, 6)
    with hostir.FusionDefinition(cache) as fd:
        a = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True], dtype=F)
        b = fd.define_tensor(sizes=[4, 1, 6], strides=[6, 6, 1])
        c = fd.from_pytorch(t)
        d = fd.from_pytorch(t, static_sizes=True)
        fd.add_output(a + b + c + d)
    records = [r.args for r in fd.records[:4]]
    assert records[0] == {"shape": [-1, 1, -1], "contiguity": [True, None, True], "dtype": "Float"}
    # sizes/strides and from_pytorch give the same canonical record.
    assert records[1] == records[0] and records[2] == records[0]
    assert records[3]["shape"] == [4, 1, 6]
    (out,) = fd.execute([t, t, t, t])
    torch.testing.assert_close(out, 4 * t)
    # A transposed layout is not contiguous: no contiguity requirement.
    with hostir.FusionDefinition(cache) as fd2:
        x = fd2.from_pytorch(torch.randn(3, 5).t())
        fd2.add_output(fd2.ops.relu(x))
    assert fd2.records[0].args["contiguity"] == [False, False]
    u = torch.randn(3, 5).t()
    torch.testing.assert_close(fd2.execute([u])[0], u.relu())


def test_preallocated_outputs(cache):
    a, b = torch.randn(4, 5), torch.randn(5, 3)
    with hostir.FusionDefinition(cache) as fd:
        x, y = fd.define_tensor(2), fd.define_tensor(2)
        fd.add_output(fd.ops.matmul(x, y))
        fd.add_output(fd.ops.relu(x))
    out0, out1 = torch.empty(4, 3), torch.empty(4, 5)
    results = fd.execute([a, b], output=[out0, out1])
    torch.testing.assert_close(out0, a @ b)
    torch.testing.assert_close(out1, a.relu())
    assert results[0].data_ptr() == out0.data_ptr()
    assert results[1].data_ptr() == out1.data_ptr()
    with pytest.raises(hostir.Error, match="has sizes"):
        fd.execute([a, b], output=[torch.empty(2, 2), out1])


@pytest.mark.parametrize("streams", [1, 2, 4])
def test_stream_parallel_schedule(cache, streams):
    a, w = torch.randn(16, 8), torch.randn(8, 4)
    with hostir.FusionDefinition(cache) as fd:
        x, y = fd.define_tensor(2), fd.define_tensor(2)
        out = fd.ops.relu(fd.ops.matmul(x, y))
        fd.add_output(out)
        fd.sched.split(out, 0, 4, inner_split=False)
        fd.sched.parallelize(out, 0, hostir.ParallelType.Stream)
    (result,) = fd.execute([a, w], number_of_streams=streams)
    torch.testing.assert_close(result, torch.relu(a @ w))
    assert "FOR StreamIdx" in fd.host_ir([a, w], number_of_streams=streams)


def test_merge_schedule(cache):
    a = torch.randn(4, 6)
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        y = fd.ops.exp(x)
        fd.add_output(y)
        fd.sched.merge(y, 0)
    # The loop domain of the output is one merged axis of extent i0 * i1.
    assert "( i0 * i1 )" in fd.fusion_ir()
    torch.testing.assert_close(fd.execute([a])[0], a.exp())
    assert fd.records[-1].kind == "sched.merge"
