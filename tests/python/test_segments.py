"""Segments from Python: fd.segment() and fd.execute_segments()."""

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
    assert first.segment_inputs == [0, 1] and first.segment_outputs == [y.fid]
    assert second.segment_inputs == [y.fid] and second.segment_outputs == fd.state.outputs
    # Each segment maps its fids onto the original's.
    assert first.fid_map[first.state.inputs[0]] == 0
    assert second.fid_map[second.state.outputs[0]] == fd.state.outputs[0]
    assert "matmul" in first.fusion_ir() and "gelu" in second.fusion_ir()
    check_same_as_execute(fd, [torch.randn(4, 3), torch.randn(3, 5)])
    # The intermediate y was freed after its last use (segment 1).
    assert fd.last_freed == [(1, y.fid)]


def test_many_segments_and_freeing(cache):
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
    freed = [fid for _, fid in fd.last_freed]
    crossing = {fid for seg in segments for fid in seg.segment_inputs if fd._cdef.is_tensor(fid)}
    crossing -= set(fd._state.inputs)
    assert crossing and crossing <= set(freed)
    # Freed right after the last segment that reads each.
    last_reader = {}
    for number, seg in enumerate(segments):
        for fid in seg.segment_inputs:
            last_reader[fid] = number
    assert all(last_reader[fid] == number for number, fid in fd.last_freed)
    # Segments are definitions like any other: cached, so a second segment()
    # of an equal definition reuses them.
    ids = [s.id() for s in segments]
    assert [s.id() for s in fd.segment()] == ids


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
    assert not any(f >= 0 and fd._cdef.is_tensor(f) for f in seg.segment_inputs)
    assert all(not seg._cdef.is_tensor(s) for s in seg.state.inputs)
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
    assert not any(f < 0 for f in second.segment_inputs)
    xs, ws = torch.randn(5, 4), torch.randn(6, 4)
    outs = check_same_as_execute(fd, [xs, ws])
    torch.testing.assert_close(outs[0], torch.full((5, 6), 0.5))
    torch.testing.assert_close(outs[1], xs @ ws.t() + 0.5)
