"""The segments of a FusionDefinition's compiled program, read from C++.

The definition's executor compiles it once (presegmentation, segmentation,
host IR passes, an engine per segment: the program `fd.host_ir()` prints);
each compute step of that program is a segment here: a posted HostUnit, with
the engine the compile stage recorded on it, or an op the host program runs
itself. Nothing is rebuilt in Python, so the segments are the ones that run.
"""

import torch

from .fusion_state import Error, _streams


class Segment:
    """One segment of a compiled program, in run order.

    segment_inputs / segment_outputs: what it reads and writes, in its
    fusion's order: an int is a fid of the definition (an input, an output or
    an input's extent, a negative fid); a str names an intermediate the
    compiled program made ("T2", as fd.host_ir() prints it).
    engine: "kernel", "gemm_post_ops", "aten" or "host_op"; engine_detail:
    the kernel, the epilogue, or why not a kernel."""

    __slots__ = ("number", "segment_inputs", "segment_outputs", "engine", "engine_detail",
                 "_definition")

    def __init__(self, number, definition, inputs, outputs, engine, detail):
        self.number = number
        self._definition = definition
        self.segment_inputs = list(inputs)
        self.segment_outputs = list(outputs)
        self.engine = engine
        self.engine_detail = detail

    def fusion_ir(self):
        """The segment's fusion, in the IR notation of fd.fusion_ir()."""
        return self._definition.fusion_ir()

    def execute(self, inputs, number_of_streams=None):
        """Runs the segment alone on tensors (and scalars) for segment_inputs;
        returns its outputs, for segment_outputs."""
        return self._definition.execute(list(inputs), [], _streams(number_of_streams))

    def __repr__(self):
        return (f"Segment({self.number}, {self.engine}: {self.engine_detail}, "
                f"inputs={self.segment_inputs}, outputs={self.segment_outputs})")


def compiled_segments(fd):
    """fd's segments as its compiled program has them ([] for one segment)."""
    cdef = fd._cdef
    if cdef.is_multidevice():
        raise Error("segment: fusions with a device mesh are run as a whole by the multi-device "
                    "executor; segmenting them from Python is not supported")
    segments = [Segment(number, *fields)
                for number, fields in enumerate(cdef.compiled_segments())]
    return segments if len(segments) > 1 else []


def run_segments(fd, segments, inputs, number_of_streams):
    """Runs `segments` one by one, each on the values its inputs name, freeing
    an intermediate tensor after the last segment that reads it."""
    state = fd.state
    if len(inputs) != len(state.inputs):
        raise Error(f"execute_segments: the fusion takes {len(state.inputs)} inputs, got "
                    f"{len(inputs)}")
    values = dict(zip(state.inputs, inputs))
    for extent, tensor, axis in state.extents:
        values[extent] = int(values[tensor].shape[axis])
    keep = set(state.inputs) | set(state.outputs)
    last_use = {}
    for seg in segments:
        for key in seg.segment_inputs:
            last_use[key] = seg.number
    fd.last_freed = []  # (segment number, value) in the order intermediates were dropped
    for seg in segments:
        outputs = seg.execute([values[key] for key in seg.segment_inputs], number_of_streams)
        values.update(zip(seg.segment_outputs, outputs))
        for key in seg.segment_inputs:
            if last_use[key] == seg.number and key not in keep and \
                    isinstance(values.get(key), torch.Tensor):
                del values[key]
                fd.last_freed.append((seg.number, key))
    return [values[fid] for fid in state.outputs]
