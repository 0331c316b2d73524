"""Errors: hostir.Error (a RuntimeError) naming the tensor/op in IR notation,
ending with the repro script and the inputs."""

import pytest
import torch

import hostir


def test_error_class():
    assert issubclass(hostir.Error, RuntimeError)


def test_definition_error_names_op_and_tensors(cache):
    with pytest.raises(hostir.Error) as info:
        with hostir.FusionDefinition(cache) as fd:
            a = fd.define_tensor(shape=[4, 8])
            b = fd.define_tensor(shape=[6, 5])
            fd.ops.matmul(a, b)
    message = str(info.value)
    assert message.startswith("matmul(T0_g_float[iS0{4}, iS1{8}], T1_g_float[iS2{6}, iS3{5}])")
    assert "inner sizes differ" in message
    # Ends with the repro (what was recorded so far) and the inputs.
    assert "T1 = fd.define_tensor(shape=[6, 5]" in message
    assert message.rstrip().endswith("# inputs: none (raised while defining)")
    assert cache.num_fusions() == 0


def test_execution_error_has_repro_and_inputs(cache):
    with hostir.FusionDefinition(cache) as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.relu(a))
    with pytest.raises(hostir.Error) as info:
        fd.execute([torch.randn(3, 4, dtype=torch.float64)])
    message = str(info.value)
    assert "T0_g_float" in message and "expects dtype float" in message
    assert "with hostir.FusionDefinition() as fd:" in message
    assert "T1 = fd.ops.relu(T0)" in message
    assert "torch.testing.make_tensor((3, 4), dtype=torch.float64" in message
    assert message.rstrip().endswith("fd.execute(inputs)")


def test_wrong_input_count_and_contiguity(cache):
    with hostir.FusionDefinition(cache) as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.exp(a))
    with pytest.raises(hostir.Error, match="expects 1 inputs but got 2"):
        fd.execute([torch.randn(2, 2), torch.randn(2, 2)])
    with pytest.raises(hostir.Error, match="declared contiguous"):
        fd.execute([torch.randn(4, 3).t()])


def test_misuse_errors(cache):
    with hostir.FusionDefinition(cache) as fd:
        a = fd.define_tensor(1)
        fd.add_output(fd.ops.neg(a))
    with pytest.raises(hostir.Error, match="inside `with hostir.FusionDefinition"):
        fd.ops.relu(a)
    with hostir.FusionDefinition(cache) as other:
        b = other.define_tensor(1)
        with pytest.raises(hostir.Error, match="belongs to another FusionDefinition"):
            other.ops.add(a, b)
        other.add_output(b * 1.0)
    with pytest.raises(hostir.Error, match="no output"):
        with hostir.FusionDefinition(cache) as empty:
            empty.define_tensor(1)


def test_repro_recreates_the_definition(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True])
        w = fd.define_tensor(2)
        y = fd.ops.sum(fd.ops.gelu(x) * 0.5, axes=[1])
        z = fd.ops.linear(y, w)
        full = fd.ops.full([x.size(0), w.size(0)], 3.0)
        fd.add_output(z + full)
        fd.sched.split(z, 0, 2, inner_split=False)
        fd.sched.parallelize(z, 0, hostir.ParallelType.Stream)
    text = str(fd)
    assert "fd.ops.size(T0, dim=0)" in text
    assert "fd.sched.parallelize(T" in text and "hostir.ParallelType.Stream" in text
    # Running the printed script gives the same records: a cache hit.
    scope = {}
    exec(text.replace("hostir.FusionDefinition()", "hostir.FusionDefinition(cache)"),
         {"cache": cache}, scope)
    assert scope["fd"].cache_hit and scope["fd"].id() == fd.id()
    assert [r.key for r in scope["fd"].records] == [r.key for r in fd.records]


def test_subclass_style(cache):
    class Scaled(hostir.FusionDefinition):
        def __init__(self, scale, chunks):
            super().__init__(cache)
            self.scale, self.chunks = scale, chunks

        def definition(self):
            self.x = self.define_tensor(2)
            self.w = self.define_tensor(2)
            self.y = self.ops.matmul(self.x, self.w) * self.scale
            self.add_output(self.y)

        def schedule(self):
            if self.chunks:
                self.sched.split(self.y, 0, self.chunks, inner_split=False)
                self.sched.parallelize(self.y, 0, hostir.ParallelType.Stream)

    a, w = torch.randn(8, 4), torch.randn(4, 3)
    plain, chunked = Scaled(2.0, 0), Scaled(2.0, 4)
    torch.testing.assert_close(plain.execute([a, w])[0], a @ w * 2.0)
    torch.testing.assert_close(chunked.execute([a, w])[0], a @ w * 2.0)
    assert plain.id() != chunked.id()
    assert Scaled(2.0, 4).id() == chunked.id()
    assert "FOR StreamIdx" in chunked.host_ir([a, w])


def test_introspection(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        fd.add_output(fd.ops.sum(fd.ops.relu(x), [1]))
    ir = fd.fusion_ir()
    assert "T0_g_float[iS0{i0}, iS1{i1}]" in ir and "relu" in ir
    host = fd.host_ir([torch.randn(2, 3)])
    assert "HostIrContainer" in host
    assert isinstance(fd.id(), int)
    fd.execute([torch.randn(2, 3)])
    (sharding,) = fd.last_output_shardings
    assert sharding.mesh is None and sharding.axes == {}


def test_python_side_errors_name_values_in_ir_and_carry_the_repro(cache):
    with pytest.raises(hostir.Error) as info:
        with hostir.FusionDefinition(cache) as fd:
            x = fd.define_tensor(2)
            s = fd.define_scalar(2.0)
            fd.ops.permute(s, [0])  # (relu takes scalars too: nvFuser's ops do)
    message = str(info.value)
    # The constant scalar in IR notation.
    assert message.startswith("permute: expected a tensor of this definition, got 2.0\n")
    assert "S1 = fd.define_scalar(value=2.0" in message
    assert message.rstrip().endswith("# inputs: none (raised while defining)")
    with pytest.raises(hostir.Error, match=r"define_tensor: 2 sizes but 1 strides"):
        with hostir.FusionDefinition(cache) as fd:
            fd.define_tensor(sizes=[2, 3], strides=[1])
    del x
