"""Segments from Python: fd.segment() and fd.execute_segments(), read from
the program the definition compiles to (the one fd.host_ir() prints)."""

import re

import pytest
import torch

import hostir


def check_same_as_execute(fd, inputs):
    whole = fd.execute(inputs)
    pieces = fd.execute_segments(inputs)
    assert len(whole) == len(pieces)
    for a, b in zip(whole, pieces):
        torch.testing.assert_close(a, b)
    return pieces


def test_one_segment_gives_empty_list(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        fd.add_output(fd.ops.relu(fd.ops.exp(x)))
    assert fd.segment() == []
    check_same_as_execute(fd, [torch.randn(3, 4)])


def test_two_segments(cache):
    with hostir.FusionDefinition(cache) as fd:
        x, w = fd.define_tensor(2), fd.define_tensor(2)
        y = fd.ops.matmul(x, w)
        fd.add_output(fd.ops.gelu(y))
    segments = fd.segment([torch.randn(4, 3), torch.randn(3, 5)])
    assert len(segments) == 2
    first, second = segments
    # The matmul's output is an intermediate of the compiled program: named
    # as fd.host_ir() prints it.
    (y_name,) = first.segment_outputs
    assert first.segment_inputs == [0, 1] and re.fullmatch(r"T\d+", y_name)
    assert f"{y_name}_l_float" in fd.host_ir()
    assert second.segment_inputs == [y_name] and second.segment_outputs == fd.state.outputs
    assert "matmul" in first.fusion_ir() and "gelu" in second.fusion_ir()
    # The host program runs the matmul itself; the lone gelu runs through
    # ATen, and says why, as fd.host_ir() does.
    assert first.engine == "host_op" and second.engine == "aten"
    assert f"(ATen: {second.engine_detail})" in fd.host_ir()
    check_same_as_execute(fd, [torch.randn(4, 3), torch.randn(3, 5)])
    # The intermediate y was freed after its last use (segment 1).
    assert fd.last_freed == [(1, y_name)]


def define_many_segments(cache):
    with hostir.FusionDefinition(cache) as fd:
        x, y = fd.define_tensor(2), fd.define_tensor(2)
        a = x + y
        b = a * 2.0
        c = fd.ops.relu(b)
        d = fd.ops.sum(c, [1])
        e = fd.ops.sub(d, 1.0)
        f = fd.ops.matmul(c, fd.ops.permute(a, [1, 0]))
        fd.add_output(e)
        fd.add_output(f)
    return fd


def test_many_segments_and_freeing(cache):
    fd = define_many_segments(cache)
    segments = fd.segment()
    # The pointwise ops and the reduction compile into one kernel segment;
    # the matmul (a host-lowered op) is a segment of its own.
    assert len(segments) >= 2
    outs = check_same_as_execute(fd, [torch.randn(3, 4), torch.randn(3, 4)])
    xa, ya = torch.randn(3, 4), torch.randn(3, 4)
    outs = fd.execute_segments([xa, ya])
    ref_c = torch.relu((xa + ya) * 2.0)
    torch.testing.assert_close(outs[0], ref_c.sum(1) - 1.0)
    torch.testing.assert_close(outs[1], ref_c @ (xa + ya).t())
    freed = [key for _, key in fd.last_freed]
    # Every intermediate crossing segments (a name of the compiled program)
    # is freed, right after the last segment that reads it.
    crossing = {key for seg in segments for key in seg.segment_inputs if isinstance(key, str)}
    assert crossing and crossing == set(freed)
    last_reader = {}
    for number, seg in enumerate(segments):
        for key in seg.segment_inputs:
            last_reader[key] = number
    assert all(last_reader[key] == number for number, key in fd.last_freed)
    # The segments are read once per definition: an equal definition (a cache
    # hit) gives the same ones.
    again = define_many_segments(cache)
    assert again.id() == fd.id() and again.segment() == segments


def test_segment_needing_an_extent_no_tensor_input_carries(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        w = fd.define_tensor(2)
        filled = fd.ops.full([x.size(0), w.size(0)], 0.5)
        fd.add_output(filled)
        fd.add_output(fd.ops.linear(x, w))
    segments = fd.segment()
    needing = [s for s in segments if any(f < 0 for f in s.segment_inputs)]
    assert needing, [s.segment_inputs for s in segments]
    seg = needing[0]
    # It reads the extents of x (axis 0: fid -1) and w (axis 0: fid -3) as
    # scalar inputs and has no tensor input of its own.
    assert sorted(f for f in seg.segment_inputs if f < 0) == [-3, -1]
    assert all(isinstance(f, int) and f < 0 for f in seg.segment_inputs)
    xs, ws = torch.randn(5, 4), torch.randn(6, 4)
    outs = check_same_as_execute(fd, [xs, ws])
    torch.testing.assert_close(outs[0], torch.full((5, 6), 0.5))
    torch.testing.assert_close(outs[1], xs @ ws.t())


def test_segment_reading_an_extent_from_a_tensor_input(cache):
    # full's extents are x's and w's; the segment computing full + linear(x, w)
    # has only the linear's output as an input and reads them from its shape.
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        w = fd.define_tensor(2)
        filled = fd.ops.full([x.size(0), w.size(0)], 0.5)
        fd.add_output(filled)
        fd.add_output(fd.ops.linear(x, w) + filled)
    segments = fd.segment()
    assert len(segments) == 2
    second = segments[1]
    assert not any(isinstance(f, int) and f < 0 for f in second.segment_inputs)
    xs, ws = torch.randn(5, 4), torch.randn(6, 4)
    outs = check_same_as_execute(fd, [xs, ws])
    torch.testing.assert_close(outs[0], torch.full((5, 6), 0.5))
    torch.testing.assert_close(outs[1], xs @ ws.t() + 0.5)


def test_segments_are_the_compiled_programs(cache):
    # The compile stage's passes shape the program: gemm_epilogues makes the
    # linear, its bias and the gelu one GEMM with post-ops. Segments built
    # again from the records (before) were the segmenter's alone: three
    # (linear, gelu, matmul), none with an engine.
    with hostir.FusionDefinition(cache) as fd:
        x, w, b, v = (fd.define_tensor(2), fd.define_tensor(2), fd.define_tensor(1),
                      fd.define_tensor(2))
        fd.add_output(fd.ops.matmul(fd.ops.gelu(fd.ops.linear(x, w, b)), v))
    segments = fd.segment()
    program = fd.host_ir()
    steps = [line for line in program.split("} // %HostIrContainer")[0].splitlines()
             if line.startswith("  PostOnStream") or line.startswith("     = ")]
    assert len(segments) == len(steps) == 2
    assert [s.engine for s in segments] == ["gemm_post_ops", "host_op"]
    assert f"(GEMM with post-ops: {segments[0].engine_detail})" in program
    assert "linear" in segments[0].fusion_ir() and "gelu" in segments[0].fusion_ir()
    inputs = [torch.randn(4, 3), torch.randn(5, 3), torch.randn(5), torch.randn(5, 2)]
    (out,) = check_same_as_execute(fd, inputs)
    x_, w_, b_, v_ = inputs
    expected = torch.nn.functional.gelu(x_ @ w_.t() + b_) @ v_
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)


def test_a_kernel_segment_names_the_kernel_the_program_compiled(cache):
    with hostir.FusionDefinition(cache) as fd:
        x, w = fd.define_tensor(2), fd.define_tensor(2)
        y = fd.ops.matmul(x, w)
        fd.add_output(fd.ops.sum(fd.ops.relu(y) * 2.0, [1]))
    segments = fd.segment()
    kernels = [s for s in segments if s.engine == "kernel"]
    assert kernels, segments
    assert f"(compiled kernel {kernels[0].engine_detail})" in fd.host_ir()
    check_same_as_execute(fd, [torch.randn(4, 3), torch.randn(3, 5)])


def test_a_segment_reading_a_computed_extent_computes_it(cache):
    # full's extent x.size(0) * x.size(1) is a scalar the host program
    # computes; its segment reads the two extents and computes the product.
    with hostir.FusionDefinition(cache) as fd:
        x, w = fd.define_tensor(2), fd.define_tensor(2)
        rows = fd.ops.size(x, 0) * fd.ops.size(x, 1)
        fd.add_output(fd.ops.matmul(fd.ops.full([rows, 2], 1.0), w))
    segments = fd.segment()
    assert segments[0].segment_inputs == [-1, -2]
    ws = torch.randn(2, 5)
    (out,) = check_same_as_execute(fd, [torch.randn(3, 4), ws])
    torch.testing.assert_close(out, torch.ones(12, 2) @ ws)


def test_a_segment_runs_alone(cache):
    with hostir.FusionDefinition(cache) as fd:
        x, w = fd.define_tensor(2), fd.define_tensor(2)
        fd.add_output(fd.ops.gelu(fd.ops.matmul(x, w)))
    first, second = fd.segment()
    xs, ws = torch.randn(4, 3), torch.randn(3, 5)
    (y,) = first.execute([xs, ws])
    torch.testing.assert_close(y, xs @ ws)
    (out,) = second.execute([y])
    torch.testing.assert_close(out, torch.nn.functional.gelu(xs @ ws))
    assert "Segment(1, aten:" in repr(second)


def test_a_sharded_definition_is_not_segmented(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        fd.add_output(fd.ops.relu(x))
        fd.sched.set_device_mesh(x, hostir.DeviceMesh([0]))
    with pytest.raises(hostir.Error, match="^segment: fusions with a device mesh"):
        fd.segment()


def test_a_program_with_a_stream_loop_is_not_segmented(cache):
    class StreamSplit(hostir.FusionDefinition):
        def definition(self):
            x = self.define_tensor(2)
            h = self.ops.exp(x)
            self.add_output(self.ops.relu(h))
            self.sched.split(h, 0, 2)
            self.sched.parallelize(h, 0, hostir.ParallelType.Stream)

    fd = StreamSplit(cache)
    with pytest.raises(hostir.Error, match=r"^segment: step \d+ of the compiled program is "
                       r"GetCurrentStream, not a compute segment"):
        fd.segment()
    (out,) = fd.execute([torch.ones(4, 3)])
    torch.testing.assert_close(out, torch.exp(torch.ones(4, 3)))


def printed_steps(program):
    """(engine, detail) per compute step of a printed host program, in order:
    a posted HostUnit with the engine its header names, or an op the program
    runs itself."""
    body, units = program.split("} // %HostIrContainer")
    headers = dict(re.findall(r"^HostUnit (\d+) \((.*)\):$", units, re.MULTILINE))
    words = {"compiled kernel ": "kernel", "GEMM with post-ops: ": "gemm_post_ops",
             "ATen: ": "aten"}
    steps = []
    for line in body.splitlines():
        posted = re.match(r"^  PostOnStream \(HostUnit (\d+),", line)
        if posted:
            header = headers[posted.group(1)]
            prefix = next(p for p in words if header.startswith(p))
            steps.append((words[prefix], header[len(prefix):]))
        elif re.match(r"^     = (\w+)\(", line):
            steps.append(("host_op", None))
    return steps


def define_linear_gelu_matmul(fd):
    x, w, b, v = fd.define_tensor(2), fd.define_tensor(2), fd.define_tensor(1), fd.define_tensor(2)
    fd.add_output(fd.ops.matmul(fd.ops.gelu(fd.ops.linear(x, w, b)), v))


def define_attention(fd):
    q, k, v = fd.define_tensor(3), fd.define_tensor(3), fd.define_tensor(3)
    scores = (q @ fd.ops.permute(k, [0, 2, 1])) * 0.5
    mask = fd.ops.causal_mask(fd.ops.size(q, 1), fd.ops.size(k, 1))
    fd.add_output(fd.ops.softmax(fd.ops.where(mask, scores, float("-inf")), -1) @ v)


def define_mlp_with_norm(fd):
    x, w1, w2 = fd.define_tensor(2), fd.define_tensor(2), fd.define_tensor(2)
    mean = fd.ops.sum(x, [1]) * 0.25
    centered = x - fd.ops.broadcast_in_dim(mean, [2, 4], [0])
    h = fd.ops.relu(fd.ops.linear(centered, w1))
    fd.add_output(fd.ops.sin(fd.ops.linear(h, w2)))


@pytest.mark.parametrize("define, inputs", [
    (define_linear_gelu_matmul, lambda: [torch.randn(4, 3), torch.randn(5, 3), torch.randn(5),
                                         torch.randn(5, 2)]),
    (define_attention, lambda: [torch.randn(2, 6, 8) for _ in range(3)]),
    (define_mlp_with_norm, lambda: [torch.randn(2, 4), torch.randn(8, 4), torch.randn(3, 8)]),
])
def test_segments_are_the_steps_the_printed_program_runs(cache, define, inputs):
    # Same count, same order, same engines (and their details) as fd.host_ir()
    # prints: the program the compile stage made, passes and engines included.
    with hostir.FusionDefinition(cache) as fd:
        define(fd)
    segments = fd.segment()
    steps = printed_steps(fd.host_ir())
    assert len(steps) > 1
    assert [(s.engine, None if s.engine == "host_op" else s.engine_detail)
            for s in segments] == steps
    check_same_as_execute(fd, inputs())
