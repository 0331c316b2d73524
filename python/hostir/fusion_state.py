"""The values of a FusionDefinition and what is known of one once it is built:
DataType (with nvFuser's Int and Null), ParallelType, DeviceMesh, Error, the
torch dtype maps, Value / Tensor / Scalar handles, FusionState, OutputSharding
and the number of worker streams. A leaf of the package (it imports only _C and
torch): the cache, the distributed and segment helpers and fusion_definition
all read it, so none of them has to import another to get these.
"""

import collections
import numbers

import torch

from . import _C

DataType = _C.DataType
# nvFuser's name for Int64 (its frontend's integer default), an alias of the same value.
DataType.Int = DataType.Int64


class _NoDataType:
    """DataType.Null: nvFuser's "no dtype" (a reduction's dtype=DataType.Null keeps the
    input's); not a dtype a value can have."""

    name = "Null"

    def __repr__(self):
        return "DataType.Null"


DataType.Null = _NoDataType()
ParallelType = _C.ParallelType
DeviceMesh = _C.DeviceMesh


# Raised for a mistake in a definition or a failed execution (a subclass of
# RuntimeError). The message names the tensor or op in IR notation and, when
# raised by a FusionDefinition, ends with a repro script and the inputs.
Error = _C.Error


_TORCH_TO_DTYPE = {
    torch.float32: DataType.Float,
    torch.float64: DataType.Double,
    torch.float16: DataType.Half,
    torch.bfloat16: DataType.BFloat16,
    torch.int32: DataType.Int32,
    torch.int64: DataType.Int64,
    torch.bool: DataType.Bool,
    torch.complex64: DataType.ComplexFloat,
    torch.complex128: DataType.ComplexDouble,
}
_DTYPE_TO_TORCH = {v: k for k, v in _TORCH_TO_DTYPE.items()}


def to_dtype(dtype):
    """A hostir.DataType from a DataType or a torch.dtype."""
    if isinstance(dtype, DataType):
        return dtype
    if dtype in _TORCH_TO_DTYPE:
        return _TORCH_TO_DTYPE[dtype]
    raise Error(f"unsupported dtype {dtype!r}; use a hostir.DataType or one of "
                f"{', '.join(str(t) for t in _TORCH_TO_DTYPE)}")


def torch_dtype(dtype):
    return _DTYPE_TO_TORCH[dtype]


OutputSharding = collections.namedtuple("OutputSharding", ["mesh", "axes", "dims"])
OutputSharding.__doc__ = """How one output of the last execute is laid out: `mesh` is the
hostir.DeviceMesh it lives on (None: no mesh, the whole tensor on this process), `axes`
maps a ParallelType (DIDx, DIDy) to the logical axis it shards (empty: replicated), `dims`
to the dimension of the torch tensor it shards (they differ where a reduction keeps
reduced axes in the logical domain)."""


class Value:
    """A value of a FusionDefinition: a handle holding the definition and a fid."""

    __slots__ = ("fd", "fid")

    def __init__(self, fd, fid):
        self.fd = fd
        self.fid = fid

    def _binary(self, name, other, reverse=False):
        ops = self.fd.ops
        return getattr(ops, name)(other, self) if reverse else getattr(ops, name)(self, other)

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, True)

    def __sub__(self, other):
        return self._binary("sub", other)

    def __rsub__(self, other):
        return self._binary("sub", other, True)

    def __mul__(self, other):
        return self._binary("mul", other)

    def __rmul__(self, other):
        return self._binary("mul", other, True)

    def __truediv__(self, other):
        return self._binary("div", other)

    def __rtruediv__(self, other):
        return self._binary("div", other, True)

    def __neg__(self):
        return self.fd.ops.neg(self)

    def __abs__(self):
        return self.fd.ops.abs(self)

    def __pow__(self, other):
        return self._binary("pow", other)

    def __rpow__(self, other):
        return self._binary("pow", other, True)

    # Comparisons build Bool tensors (as torch's do); a Value stays hashable by
    # identity.
    def __eq__(self, other):
        return self._binary("eq", other)

    def __ne__(self, other):
        return self._binary("ne", other)

    def __lt__(self, other):
        return self._binary("lt", other)

    def __le__(self, other):
        return self._binary("le", other)

    def __gt__(self, other):
        return self._binary("gt", other)

    def __ge__(self, other):
        return self._binary("ge", other)

    __hash__ = object.__hash__

    def ir(self):
        """This value in IR notation (e.g. T2_l_float[iS4{i0}, iS5{i2}])."""
        return self.fd._cdef.ir_name(self.fid)


class Tensor(Value):
    __slots__ = ()

    @property
    def ndim(self):
        return self.fd._cdef.rank(self.fid)

    @property
    def dtype(self):
        return self.fd._cdef.dtype(self.fid)

    def shape(self):
        """This tensor's extents, a list of scalars of the definition (nvFuser's
        Tensor.shape(); give it where a shape is asked, e.g. broadcast_in_dim)."""
        return [self.size(axis) for axis in range(self.ndim)]

    def size(self, dim):
        """This tensor's extent along `dim` as a scalar of the definition (an
        input's extents have negative fids)."""
        return self.fd.ops.size(self, dim)

    @property
    def T(self):
        """The transpose of a rank-2 tensor (torch's .T): permute(x, [1, 0])."""
        if self.ndim != 2:
            raise Error(f".T of {self.fd._cdef.ir_name(self.fid)}: rank {self.ndim}; .T is "
                        "defined for rank-2 tensors here, use .mT or fd.ops.permute")
        return self.fd.ops.permute(self, [1, 0])

    @property
    def mT(self):
        """The last two dimensions swapped (torch's .mT); rank 2 or more."""
        n = self.ndim
        if n < 2:
            raise Error(f".mT of {self.fd._cdef.ir_name(self.fid)}: rank {n}; .mT needs at "
                        "least 2 dimensions")
        return self.fd.ops.permute(self, list(range(n - 2)) + [n - 1, n - 2])

    def __matmul__(self, other):
        return self.fd.ops.matmul(self, other)

    def __repr__(self):
        return f"Tensor(fid={self.fid})"


class Scalar(Value):
    __slots__ = ()

    def __repr__(self):
        return f"Scalar(fid={self.fid})"


class FusionState:
    """The fids of a built definition: every recorded value has a fid >= 0 in
    definition order; the extents of input tensors have fids -1, -2, ... in
    input order (axis by axis). `val_to_fid` maps the C++ Val (by its IR name:
    "T3" is tensor 3, "S5" scalar 5) to its fid."""

    __slots__ = ("inputs", "outputs", "extents", "val_to_fid", "kinds")

    def __init__(self, inputs, outputs, extents, val_to_fid, kinds):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.extents = [tuple(e) for e in extents]  # (extent fid, tensor fid, axis)
        self.val_to_fid = dict(val_to_fid)
        self.kinds = list(kinds)  # "T" or "S" per fid >= 0

    @classmethod
    def of(cls, cdef, kinds):
        return cls(cdef.input_fids(), cdef.output_fids(), cdef.extent_fids(),
                   cdef.val_to_fid(), kinds)

    def copy(self):
        return FusionState(self.inputs, self.outputs, self.extents, self.val_to_fid, self.kinds)

    def extent_fids(self):
        """Map extent fid -> (input tensor fid, axis)."""
        return {e: (t, axis) for e, t, axis in self.extents}

    def to_json(self):
        return {"inputs": self.inputs, "outputs": self.outputs,
                "extents": [list(e) for e in self.extents], "val_to_fid": self.val_to_fid,
                "kinds": "".join(self.kinds)}

    @classmethod
    def from_json(cls, item):
        return cls(item["inputs"], item["outputs"], item["extents"], item["val_to_fid"],
                   list(item["kinds"]))

    def __eq__(self, other):
        return isinstance(other, FusionState) and self.to_json() == other.to_json()

    def __repr__(self):
        return (f"FusionState(inputs={self.inputs}, outputs={self.outputs}, "
                f"extents={self.extents}, val_to_fid={self.val_to_fid})")


_DEFAULT_STREAMS = _C.default_number_of_streams  # the C++ default (number_of_streams.h)


def _streams(number_of_streams):
    """The number of worker streams to run on: the default for None, else a
    positive int (0 is an error, never the default). C++ checks the value,
    with the same message as its own entry points; a bool, a float or an int
    beyond 64 bits never reaches it."""
    if number_of_streams is None:
        return _DEFAULT_STREAMS
    if isinstance(number_of_streams, numbers.Integral) and \
            not isinstance(number_of_streams, bool) and -2**63 <= number_of_streams < 2**63:
        return _C.checked_number_of_streams(int(number_of_streams))
    raise Error(_C.number_of_streams_error(repr(number_of_streams)))
