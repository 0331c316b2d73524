"""Records: one per define / op / schedule call of a FusionDefinition.

A record is (kind, args, outputs): `kind` names the call ("define_tensor",
"ops.add", "sched.split", ...), `args` is an ordered dict of JSON values in
which a value of the definition is written {"fid": n}, and `outputs` lists the
fids the call created. The three are the record's key (their repr; the cache
file stores them as JSON, which gives back the same values, so a record read
back from a file has the same key as the live one); the FusionCache's trie is
keyed by it.

`apply(definition, kind, args)` performs a record on a C++ `_C.Definition`;
building a fusion live and rebuilding it from records (a deserialized cache
entry, a segment) go through this one function.
"""

import math

from . import _C

DataType = _C.DataType
ParallelType = _C.ParallelType

# The elementwise ops are the C++ op types by name (UnaryOpType, BinaryOpType):
# a new type needs no line here. "set" is the copy.
UNARY_OPS = ("set",) + tuple(_C.unary_op_names())
BINARY_OPS = tuple(_C.binary_op_names())
REDUCTION_OPS = ("sum", "max", "min", "prod")


def ref(fid):
    return {"fid": int(fid)}


def is_ref(value):
    return isinstance(value, dict) and len(value) == 1 and "fid" in value


class Record:
    __slots__ = ("kind", "args", "outputs", "key")

    def __init__(self, kind, args, outputs):
        self.kind = kind
        self.args = args
        self.outputs = list(outputs)
        # repr, not json.dumps (3x slower): it tells 2 from 2.0 and True from
        # 1 as JSON does, and args hold only lists, dicts, str, int, float,
        # bool and None, which a JSON round trip gives back unchanged.
        self.key = repr((kind, args, self.outputs))

    def to_json(self):
        return [self.kind, self.args, self.outputs]

    @classmethod
    def from_json(cls, item):
        if not (isinstance(item, list) and len(item) == 3):
            raise ValueError(f"a record is [kind, args, outputs], got {item!r}")
        kind, args, outputs = item
        if kind not in _APPLY:
            raise ValueError(f"unknown record kind {kind!r}")
        if not isinstance(args, dict) or not isinstance(outputs, list):
            raise ValueError(f"malformed record {item!r}")
        if not all(isinstance(o, int) and not isinstance(o, bool) for o in outputs):
            raise ValueError(f"record outputs must be fids, got {outputs!r}")
        return cls(kind, args, outputs)

    def __repr__(self):
        return f"Record({self.key})"


def _fid(value):
    return value["fid"]


def _opt_fid(value):
    return None if value is None else value["fid"]


def _apply_define_tensor(d, a):
    return [d.define_tensor(a["shape"], a["contiguity"], DataType.__members__[a["dtype"]])]


def _apply_define_scalar(d, a):
    value = a["value"]
    if isinstance(value, list):  # a complex constant, held as [real, imag]
        value = complex(*value)
    return [d.define_scalar(value, DataType.__members__[a["dtype"]])]


def _apply_size(d, a):
    fid, new = d.size(_fid(a["x"]), a["dim"])
    return [fid] if new else []


def _apply_random(d, kind, a):
    first, second = list(a.values())[:2]  # minval, maxval or mean, std
    return [d.random(kind, _fid(first), _fid(second), [_fid(s) for s in a["shape"]],
                     DataType.__members__[a["dtype"]], _opt_fid(a["rng_seed"]),
                     _opt_fid(a["rng_offset"]))]


_APPLY = {
    "define_tensor": _apply_define_tensor,
    "define_scalar": _apply_define_scalar,
    "add_output": lambda d, a: d.add_output(_fid(a["x"])) or [],
    "ops.cast": lambda d, a: [d.cast(_fid(a["x"]), DataType.__members__[a["dtype"]])],
    "ops.broadcast": lambda d, a: [d.broadcast(_fid(a["x"]), a["is_broadcast_dim"])],
    "ops.matmul": lambda d, a: [d.matmul(_fid(a["a"]), _fid(a["b"]))],
    "ops.linear": lambda d, a: [
        d.linear(_fid(a["x"]), _fid(a["weight"]), _opt_fid(a["bias"]))
    ],
    "ops.select": lambda d, a: [d.select(_fid(a["x"]), a["dim"], _fid(a["index"]))],
    "ops.slice": lambda d, a: [
        d.slice(_fid(a["x"]), a["dim"], _fid(a["start"]), _fid(a["stop"]))
    ],
    "ops.pad": lambda d, a: [
        d.pad(_fid(a["x"]), [_fid(w) for w in a["pad_widths"]], _opt_fid(a["value"]))
    ],
    "ops.cat": lambda d, a: [d.cat([_fid(t) for t in a["tensors"]], a["dim"])],
    "ops.index_select": lambda d, a: [
        d.gather("index_select", _fid(a["x"]), _fid(a["index"]), a["dim"])
    ],
    "ops.take_along_axis": lambda d, a: [
        d.gather("take_along_axis", _fid(a["x"]), _fid(a["index"]), a["dim"])
    ],
    "ops.uniform": lambda d, a: _apply_random(d, "uniform", a),
    "ops.normal": lambda d, a: _apply_random(d, "normal", a),
    "ops.permute": lambda d, a: [d.permute(_fid(a["x"]), a["dims"])],
    "ops.reshape": lambda d, a: [
        d.reshape_to_scalars(_fid(a["x"]), [_fid(s) for s in a["new_sizes"]])
        if any(is_ref(s) for s in a["new_sizes"]) else d.reshape(_fid(a["x"]), a["new_sizes"])
    ],
    "ops.cumsum": lambda d, a: [d.cumsum(_fid(a["x"]), a["dim"])],
    "ops.scatter": lambda d, a: [
        d.scatter(_fid(a["x"]), _fid(a["index"]), _fid(a["src"]), a["dim"])
    ],
    "ops.scatter_add": lambda d, a: [
        d.scatter_add("scatter_add", _fid(a["x"]), _fid(a["index"]), _fid(a["src"]), a["dim"])
    ],
    "ops.index_add": lambda d, a: [
        d.scatter_add("index_add", _fid(a["x"]), _fid(a["index"]), _fid(a["src"]), a["dim"])
    ],
    "ops.full": lambda d, a: [
        d.full([_fid(s) for s in a["shape"]], _fid(a["fill_value"]),
               DataType.__members__[a["dtype"]])
    ],
    "ops.size": _apply_size,
    # A copy whose memory order execute() applies when it is an output.
    "ops.stride_order": lambda d, a: [d.unary("set", _fid(a["x"]))],
    "ops.where": lambda d, a: [d.where(_fid(a["condition"]), _fid(a["a"]), _fid(a["b"]))],
    "ops.iota": lambda d, a: [
        d.iota(_fid(a["length"]), _fid(a["start"]), _fid(a["step"]),
               DataType.__members__[a["dtype"]])
    ],
    "sched.split": lambda d, a: d.split(_fid(a["x"]), a["axis"], a["factor"], a["inner_split"])
    or [],
    "sched.merge": lambda d, a: d.merge(_fid(a["x"]), a["axis_outer"], a["axis_inner"]) or [],
    "sched.parallelize": lambda d, a: d.parallelize(
        _fid(a["x"]), a["axis"], ParallelType.__members__[a["parallel_type"]]) or [],
    "sched.set_device_mesh": lambda d, a: d.set_device_mesh(
        _fid(a["x"]), _C.DeviceMesh(a["devices"], a["shape"])) or [],
    "sched.automatic_stream_splits": lambda d, a: d.set_automatic_stream_splits(a["enabled"])
    or [],
}
for _name in UNARY_OPS:
    _APPLY["ops." + _name] = (lambda n: lambda d, a: [d.unary(n, _fid(a["x"]))])(_name)
for _name in BINARY_OPS:
    _APPLY["ops." + _name] = (
        lambda n: lambda d, a: [d.binary(n, _fid(a["lhs"]), _fid(a["rhs"]))])(_name)
for _name in REDUCTION_OPS:
    _APPLY["ops." + _name] = (lambda n: lambda d, a: [
        d.reduction(n, _fid(a["x"]), a["axes"], a["keep_dim"])
    ])(_name)

KINDS = frozenset(_APPLY)


def apply(definition, kind, args):
    """Performs one record on a C++ Definition; returns the fids it created."""
    return _APPLY[kind](definition, args)


# --- printing records as Python (the repro script) ----------------------------


def _format_value(kind, name, value, names):
    if is_ref(value):
        return names(value["fid"])
    if name == "dtype":
        return f"hostir.DataType.{value}"
    if name == "parallel_type":
        return f"hostir.ParallelType.{value}"
    if kind == "define_scalar" and name == "value" and isinstance(value, list):
        parts = ", ".join(_format_value(kind, "", v, names) for v in value)
        return f"complex({parts})"
    if isinstance(value, list):
        return "[" + ", ".join(_format_value(kind, "", v, names) for v in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"  # repr gives nan / inf, not Python names
    return repr(value)


def format_record(record, names):
    """One line of Python that performs `record` on `fd`; `names(fid)` is the
    expression for a value (a variable such as T3, or fd.ops.size(T0, dim=1))."""
    kind, args = record.kind, record.args
    if kind == "sched.set_device_mesh":
        mesh = f"hostir.DeviceMesh({args['devices']!r}"
        mesh += f", shape={args['shape']!r})" if args["shape"] else ")"
        call = f"fd.sched.set_device_mesh({names(args['x']['fid'])}, {mesh})"
    else:
        func = "fd." + kind
        parts = []
        for i, (name, value) in enumerate(args.items()):
            text = _format_value(kind, name, value, names)
            # The first argument positionally when it is a value (reads well).
            parts.append(text if i == 0 and is_ref(value) else f"{name}={text}")
        call = f"{func}({', '.join(parts)})"
    if record.outputs:
        return ", ".join(names(o) for o in record.outputs) + " = " + call
    return call
