"""Segments of a FusionDefinition as FusionDefinitions of their own.

The C++ side segments the fusion as the host lowering does (the
host-lowering merge policy, cheap chains forwarded) and reports each group's
inputs, outputs and computed values as fids of the original definition. A
segment definition is then made of records: a define for each input (the
original define_tensor for a fusion input, a symbolic tensor for an
intermediate, a scalar input for a scalar such as an extent: the original's
negative fid), the original records computing its values (remapped to its own
fids, with the constant and scalar records they read) and its outputs.
"""

from . import _C
from .fusion_state import Error, Scalar, Tensor


def build_segments(fd):
    cdef = fd._cdef
    if cdef.is_multidevice():
        raise Error("segment: fusions with a device mesh are run as a whole by the multi-device "
                    "executor; segmenting them from Python is not supported")
    groups = cdef.segments()
    if len(groups) <= 1:
        return []
    records = fd._records
    producer = {}  # fid -> index of the record creating it
    for index, record in enumerate(records):
        for fid in record.outputs:
            producer[fid] = index
    define_of = {records[producer[f]].outputs[0]: records[producer[f]]
                 for f in fd._state.inputs}
    segments = []
    for number, (inputs, outputs, computed, extents_of_inputs) in enumerate(groups):
        for fid in list(inputs) + list(outputs):
            if isinstance(fid, str):
                raise Error(f"segment: segment {number} exchanges {fid}, a value without a fid "
                            "(a derived scalar); segmenting this fusion from Python is not "
                            "supported")
        computed = {f for f in computed if not isinstance(f, str)}
        # A definition of fd's own class: this module imports no
        # fusion_definition (which imports it), so the package has no cycle.
        seg = type(fd)(cache=fd._cache)
        seg.__enter__()
        try:
            to_seg = {}  # original fid -> segment fid
            for fid in inputs:
                if fid >= 0 and cdef.is_tensor(fid):
                    if fid in define_of:
                        args = define_of[fid].args
                        value = seg.define_tensor(shape=args["shape"],
                                                  contiguity=args["contiguity"],
                                                  dtype=_C.DataType.__members__[args["dtype"]])
                    else:
                        shape = cdef.static_shape(fid)
                        value = seg.define_tensor(
                            shape=shape, contiguity=[None if s == 1 else False for s in shape],
                            dtype=cdef.dtype(fid))
                else:
                    value = seg.define_scalar(dtype=cdef.dtype(fid))
                to_seg[fid] = value.fid
            # Extents the segment reads from the shape of a tensor input.
            for extent, tensor, axis in extents_of_inputs:
                if extent not in to_seg and tensor in to_seg:
                    to_seg[extent] = seg.ops.size(_value(seg, to_seg[tensor]), axis).fid

            def emit(index):
                record = records[index]
                for read in record.refs():
                    if read not in to_seg:
                        if read < 0 or read not in producer or cdef.is_tensor(read) or \
                                records[producer[read]].kind != "define_scalar" and \
                                not records[producer[read]].kind.startswith("ops.") or \
                                records[producer[read]].args.get("value", 0) is None:
                            raise Error(
                                f"segment: segment {number} reads {cdef.ir_name(read)} "
                                "which neither is its input nor can be recomputed in it")
                        emit(producer[read])
                created = seg._record(record.kind, record.remapped(to_seg))
                for original, value in zip(record.outputs, [created] if created else []):
                    to_seg[original] = value.fid

            for index, record in enumerate(records):
                if record.kind.startswith("ops.") and record.outputs and \
                        record.outputs[0] in computed and record.outputs[0] not in to_seg:
                    emit(index)
            for fid in outputs:
                seg.add_output(_value(seg, to_seg[fid]))
            for record in records:
                if record.kind.startswith("sched."):
                    target = record.args["x"]["fid"]
                    if target in computed and target in to_seg:
                        seg._record(record.kind, record.remapped(to_seg))
        except BaseException:
            seg.__exit__(Exception, None, None)
            raise
        seg.__exit__(None, None, None)
        seg.segment_inputs = list(inputs)
        seg.segment_outputs = list(outputs)
        seg.fid_map = {s: o for o, s in to_seg.items()}
        segments.append(seg)
    return segments


def _value(seg, fid):
    return Tensor(seg, fid) if seg._cdef.is_tensor(fid) else Scalar(seg, fid)


def run_segments(fd, segments, inputs, number_of_streams):
    state = fd.state
    if len(inputs) != len(state.inputs):
        raise Error(f"execute_segments: the fusion takes {len(state.inputs)} inputs, got "
                    f"{len(inputs)}")
    values = dict(zip(state.inputs, inputs))
    for extent, tensor, axis in state.extents:
        values[extent] = int(values[tensor].shape[axis])
    keep = set(state.inputs) | set(state.outputs)
    last_use = {}
    for number, seg in enumerate(segments):
        for fid in seg.segment_inputs:
            last_use[fid] = number
    fd.last_freed = []  # (segment number, fid) in the order intermediates were dropped
    for number, seg in enumerate(segments):
        outputs = seg.execute([values[f] for f in seg.segment_inputs], number_of_streams)
        for fid, tensor in zip(seg.segment_outputs, outputs):
            values[fid] = tensor
        for fid in seg.segment_inputs:
            if last_use[fid] == number and fid not in keep and fid in values:
                del values[fid]
                fd.last_freed.append((number, fid))
    return [values[f] for f in state.outputs]
