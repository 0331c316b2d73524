"""FusionDefinition: a fusion written in Python, recorded call by call.

Every define / op / schedule call is performed at once on a live C++ fusion
(so a mistake raises at the line that made it, naming the tensor in IR
notation) and appended to the definition's records. Leaving the `with` block
looks the records up in the FusionCache: a hit replaces the live fusion by the
cached one (its fusion id, its lowered programs, its FusionState); a miss
stores the live fusion under the records.
"""

import torch

from . import _C, distributed
from .cache import FusionCache
from .fusion_state import _DEFAULT_STREAMS  # noqa: F401 (examples read it here)
from .fusion_state import (
    DataType,
    DeviceMesh,
    Error,
    FusionState,
    OutputSharding,
    ParallelType,
    Scalar,
    Tensor,
    Value,
    _streams,
    to_dtype,
)
from .nvfuser_spellings import NvFuserSpellings
from .records import BINARY_OPS, REDUCTION_OPS, UNARY_OPS, Record, apply, format_record, ref
from .program_segments import compiled_segments, run_segments


def _describe(value):
    """A value in IR notation when it is one of a definition's, else its repr."""
    if isinstance(value, Value) and value.fd._cdef is not None:
        try:
            return value.ir()
        except _C.Error:
            pass
    return repr(value)


def _scalar_dtype(value):
    if isinstance(value, bool):
        return DataType.Bool
    if isinstance(value, int):
        return DataType.Int64
    if isinstance(value, float):
        return DataType.Double
    if isinstance(value, complex):
        return DataType.ComplexDouble  # as nvFuser: Python's complex is two doubles
    raise TypeError(f"not a scalar: {value!r}")


def _describe_inputs(inputs):
    if inputs is None:
        return "# inputs: none (raised while defining)"
    lines = ["inputs = ["]
    for value in inputs:
        if isinstance(value, torch.Tensor):
            lines.append(f"    torch.testing.make_tensor({tuple(value.shape)}, "
                         f"dtype={value.dtype}, device='cpu'),  # strides {value.stride()}")
        else:
            lines.append(f"    {value!r},")
    lines.append("]")
    lines.append("fd.execute(inputs)")
    return "\n".join(lines)


class _Ops(NvFuserSpellings):
    """fd.ops: the op builders of hostir/ir/arith.h, one record each (and nvFuser's
    spellings of ops, nvfuser_spellings.py)."""

    def __init__(self, fd):
        self._fd = fd

    def __getattr__(self, name):
        # Only reached for a name that is not an op: list the nearest ones.
        import difflib

        ops = sorted(n for n in dir(type(self)) if not n.startswith("_"))
        near = difflib.get_close_matches(name, ops, n=4, cutoff=0.5)
        hint = f"did you mean {', '.join(near)}? " if near else ""
        raise AttributeError(f"fd.ops has no op '{name}'; {hint}the ops are: {', '.join(ops)}")

    def _tensor_op(self, kind, **args):
        return self._fd._record(kind, args)

    # size is handled by FusionDefinition (input extents have fids already).
    def size(self, x, dim):
        return self._fd._size(x, dim)

    def cast(self, x, dtype):
        """cast(x, dtype): a tensor or a scalar (a scalar result: a float cast to an
        integer dtype truncates towards zero, as torch)."""
        return self._tensor_op("ops.cast", x=self._fd._operand_ref(x, "cast"),
                               dtype=to_dtype(dtype).name)

    def broadcast(self, x, is_broadcast_dim):
        return self._tensor_op("ops.broadcast", x=self._fd._tensor_ref(x, "broadcast"),
                               is_broadcast_dim=[bool(b) for b in is_broadcast_dim])

    def matmul(self, a, b):
        fd = self._fd
        return self._tensor_op("ops.matmul", a=fd._tensor_ref(a, "matmul"),
                               b=fd._tensor_ref(b, "matmul"))

    def linear(self, x, weight, bias=None):
        fd = self._fd
        return self._tensor_op(
            "ops.linear", x=fd._tensor_ref(x, "linear"), weight=fd._tensor_ref(weight, "linear"),
            bias=None if bias is None else fd._tensor_ref(bias, "linear"))

    def select(self, x, dim, index):
        """select(x, dim, index): x[..., index, ...] along dim. nvFuser writes
        select(x, index, dim): a scalar of the definition as the second argument
        is read that way."""
        fd = self._fd
        if isinstance(dim, Scalar) and not isinstance(index, Scalar):
            dim, index = index, dim
        return self._tensor_op("ops.select", x=fd._tensor_ref(x, "select"), dim=int(dim),
                               index=fd._scalar_ref(index, "select"))

    def slice(self, x, dim=None, start=None, stop=None, strides=None, *, start_indices=None,
              end_indices=None, manual_normalization=False):
        """slice(x, dim, start, stop): x[start:stop] along dim. nvFuser's form
        slice(x, start_indices, end_indices, strides=None) (lists, one entry per
        axis) is accepted too. Bounds are always taken as torch takes them, so
        nvFuser's manual_normalization (the caller has normalized them already)
        gives the same result either way and is accepted."""
        del manual_normalization
        if start_indices is not None or isinstance(dim, (list, tuple)):
            if start_indices is None:
                start_indices, end_indices, strides = dim, start, stop if strides is None \
                    else strides
            return self._index_slice(x, start_indices, end_indices, strides)
        return self._axis_slice(x, dim, start, stop)

    def _axis_slice(self, x, dim, start, stop):
        fd = self._fd
        return self._tensor_op("ops.slice", x=fd._tensor_ref(x, "slice"), dim=int(dim),
                               start=fd._scalar_ref(start, "slice"),
                               stop=fd._scalar_ref(stop, "slice"))

    def pad(self, x, pad_widths, value=None):
        """pad(x, pad_widths, value=None): torch.nn.functional.pad(x, pad_widths,
        "constant", value): pairs (left, right) from the last axis backwards, at
        most one per axis, each >= 0 (ints or integer scalars of the definition);
        value a scalar (None: zero). A primitive op (resize_ops.h)."""
        fd = self._fd
        if not isinstance(pad_widths, (list, tuple)):
            raise fd._error(f"pad: pad_widths must be a list of ints or integer scalars, got "
                            f"{_describe(pad_widths)}", None)
        return self._tensor_op(
            "ops.pad", x=fd._tensor_ref(x, "pad"),
            pad_widths=[fd._scalar_ref(w, "pad") for w in pad_widths],
            value=None if value is None else fd._scalar_ref(value, "pad"))

    def cat(self, tensors, dim=0, manual_padding=False):
        """cat(tensors, dim=0): torch.cat: one dtype and rank, equal extents but
        on dim. nvFuser's manual_padding (a hint to its code generator) does not
        change the result and is accepted. A primitive op (resize_ops.h)."""
        fd = self._fd
        if not isinstance(tensors, (list, tuple)) or not tensors:
            raise fd._error(f"cat: tensors must be a non-empty list of tensors, got "
                            f"{_describe(tensors)}", None)
        del manual_padding
        return self._tensor_op("ops.cat", tensors=[fd._tensor_ref(t, "cat") for t in tensors],
                               dim=int(dim))

    def index_select(self, x, index, dim):
        """index_select(x, index, dim): torch.index_select(x, dim, index); index a
        1-D (or 0-D) Int64/Int32 tensor. A primitive op (gather_ops.h)."""
        return self._gather("index_select", x, index, dim)

    def take_along_axis(self, x, index, dim):
        """take_along_axis(x, index, dim): torch.gather(x, dim, index) (also
        fd.ops.gather): index has x's rank, the result index's shape. A
        primitive op (gather_ops.h)."""
        return self._gather("take_along_axis", x, index, dim)

    def gather(self, x, index, dim):
        """gather(x, index, dim): torch.gather(x, dim, index); see take_along_axis."""
        return self._gather("take_along_axis", x, index, dim)

    def uniform(self, minval, maxval, shape, *, dtype=DataType.Float, rng_seed=None,
                rng_offset=None):
        """uniform(minval, maxval, shape, dtype=Float, rng_seed=None, rng_offset=None):
        torch.empty(shape, dtype=dtype).uniform_(minval, maxval). Without a seed
        each run draws from torch's default CPU generator (torch.manual_seed
        reproduces runs); rng_seed and rng_offset (integer scalars, given
        together) fix the values: the same pair gives the same tensor. A
        primitive op (random_ops.h)."""
        return self._random("uniform", dict(minval=minval, maxval=maxval), shape, dtype,
                            rng_seed, rng_offset)

    def normal(self, mean, std, shape, *, dtype=DataType.Float, rng_seed=None,
               rng_offset=None):
        """normal(mean, std, shape, ...): torch.empty(shape).normal_(mean, std);
        seeds as uniform's. A primitive op (random_ops.h)."""
        return self._random("normal", dict(mean=mean, std=std), shape, dtype, rng_seed,
                            rng_offset)

    def _random(self, kind, parameters, shape, dtype, seed, offset):
        fd = self._fd
        if (seed is None) != (offset is None):
            raise fd._error(f"{kind}: give rng_seed and rng_offset together, or neither "
                            "(torch's default generator)", None)
        return self._tensor_op(
            "ops." + kind, **{name: fd._scalar_ref(v, kind) for name, v in parameters.items()},
            shape=[fd._scalar_ref(s, kind) for s in shape], dtype=to_dtype(dtype).name,
            rng_seed=None if seed is None else fd._scalar_ref(seed, kind),
            rng_offset=None if offset is None else fd._scalar_ref(offset, kind))

    def _gather(self, kind, x, index, dim):
        fd = self._fd
        return self._tensor_op("ops." + kind, x=fd._tensor_ref(x, kind),
                               index=fd._tensor_ref(index, kind), dim=int(dim))

    def stride_order(self, x, stride_order):
        """stride_order(x, order): x, laid out in that memory order when it is an
        output (order[axis] is the axis's place from the innermost, 0; nvFuser's
        op). Inside the fusion a copy: the order does not change values."""
        fd = self._fd
        fd._tensor_ref(x, "stride_order")
        return self._tensor_op("ops.stride_order", x=fd._tensor_ref(x, "stride_order"),
                               stride_order=fd._stride_order(stride_order, x, "stride_order"))

    def permute(self, x, dims):
        return self._tensor_op("ops.permute", x=self._fd._tensor_ref(x, "permute"),
                               dims=[int(d) for d in dims])

    def reshape(self, x, new_sizes=None, *, new_shape=None):
        """reshape(x, new_sizes): ints or integer scalars of the definition (sizes
        known only at run time: scalar inputs, define_vector(n), another tensor's
        shape()); one may be -1 (inferred). nvFuser's new_shape= is an alias."""
        if new_shape is not None:
            new_sizes = new_shape
        fd = self._fd
        sizes = [fd._constant_int_or_none(s) for s in new_sizes]
        if any(size is None for size in sizes):
            sizes = [fd._scalar_ref(s, "reshape") for s in new_sizes]
        return self._tensor_op("ops.reshape", x=fd._tensor_ref(x, "reshape"), new_sizes=sizes)

    def cumsum(self, x, dim):
        """cumsum(x, dim): torch.cumsum(x, dim): the running sum along dim; integer and
        Bool tensors sum in Int64, as torch's. A primitive op (scan_ops.h)."""
        fd = self._fd
        return self._tensor_op("ops.cumsum", x=fd._tensor_ref(x, "cumsum"), dim=int(dim))

    def scatter(self, x, index, src, dim):
        """scatter(x, index, src, dim): torch.scatter(x, dim, index, src): x with
        src's elements (or the scalar src) written at index's positions along dim.
        A primitive op (scatter_ops.h)."""
        fd = self._fd
        return self._tensor_op("ops.scatter", x=fd._tensor_ref(x, "scatter"),
                               index=fd._tensor_ref(index, "scatter"),
                               src=fd._operand_ref(src, "scatter"), dim=int(dim))

    def scatter_add(self, x, index, src, dim):
        """scatter_add(x, index, src, dim): torch.scatter_add(x, dim, index, src):
        x with src's elements added at index's positions along dim (repeated
        positions add up); index has x's rank. take_along_axis's grad. A
        primitive op (scatter_ops.h)."""
        return self._scatter_add("scatter_add", x, index, src, dim)

    def index_add(self, x, index, src, dim):
        """index_add(x, index, src, dim): torch.index_add(x, dim, index, src): src's
        slices along dim added to x's slices the 1-D index names. index_select's
        grad. A primitive op (scatter_ops.h)."""
        return self._scatter_add("index_add", x, index, src, dim)

    def _scatter_add(self, kind, x, index, src, dim):
        fd = self._fd
        return self._tensor_op("ops." + kind, x=fd._tensor_ref(x, kind),
                               index=fd._tensor_ref(index, kind), src=fd._tensor_ref(src, kind),
                               dim=int(dim))

    def full(self, shape, fill_value, dtype=DataType.Float):
        fd = self._fd
        dtype = to_dtype(dtype)
        if not isinstance(fill_value, Value):
            fill_value = fd.define_scalar(fill_value)
        return self._tensor_op("ops.full", shape=[fd._scalar_ref(s, "full") for s in shape],
                               fill_value=fd._scalar_ref(fill_value, "full"), dtype=dtype.name)

    def where(self, condition, a, b):
        """where(condition, a, b): a where the Bool tensor `condition` is true, else b
        (torch.where); a and b are tensors or scalars (Python numbers become
        constants), broadcast and promoted as in PyTorch. A primitive op."""
        fd = self._fd
        return self._tensor_op("ops.where", condition=fd._tensor_ref(condition, "where"),
                               a=fd._operand_ref(a, "where"), b=fd._operand_ref(b, "where"))

    def iota(self, length, start=0, step=1, dtype=DataType.Int64):
        """iota(length, start=0, step=1, dtype=Int64): the 1-D tensor start + i * step for
        i in [0, length); `length` an integer scalar (e.g. fd.ops.size(x, 0)). An
        integer dtype needs integer start and step. A primitive op."""
        fd = self._fd
        return self._tensor_op("ops.iota", length=fd._scalar_ref(length, "iota"),
                               start=fd._scalar_ref(start, "iota"),
                               step=fd._scalar_ref(step, "iota"), dtype=to_dtype(dtype).name)

    def arange(self, start, end=None, step=1, dtype=DataType.Int64):
        """arange(end) or arange(start, end, step=1) on integers (Python ints or integer
        scalars of the definition), as torch.arange: iota(ceil_div(end - start, step),
        start, step). A composition."""
        if end is None:
            start, end = 0, start
        values = (start, end, step)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            if step == 0 or (end - start) * step < 0:
                raise self._fd._error(f"arange({start}, {end}, {step}): the step must be "
                                      "non-zero and lead from start to end", None)
            length = -((start - end) // step)  # ceil((end - start) / step)
        else:
            length = self.ceil_div(self.sub(end, start), step)
        return self.iota(length, start, step, dtype)

    def causal_mask(self, num_queries, num_keys, query_offset=0):
        """A [num_queries, num_keys] Bool tensor, true where query query_offset + i may
        attend key j (query_offset + i >= j): two iotas, broadcast, ge. A composition;
        use it as fd.ops.where(mask, scores, float("-inf"))."""
        rows = self.iota(num_queries, query_offset, 1)
        cols = self.iota(num_keys, 0, 1)
        return self.ge(self.broadcast(rows, [False, True]), self.broadcast(cols, [True, False]))

    # --- compositions: recorded as the primitive ops they are made of, so a
    # segment boundary may fall inside one and a fusing layer sees primitives.
    # A kept reduced axis is an explicit broadcast record (a keep_dim=True
    # reduction record would make the reduction's own output a value without
    # a fid, which a segment cannot exchange).

    def _floating(self, x, what):
        self._fd._tensor_ref(x, what)
        if x.dtype not in (DataType.Float, DataType.Double, DataType.Half, DataType.BFloat16):
            raise self._fd._error(f"{what}({_describe(x)}): needs a floating-point tensor, got "
                                  f"{x.dtype.name}; cast it first (fd.ops.cast)", None)

    def _axes(self, x, axes, what):
        if isinstance(axes, int):
            axes = [axes]
        rank = x.ndim
        normalized = []
        for axis in axes:
            axis = int(axis)
            if not -rank <= axis < rank:
                raise self._fd._error(f"{what}: axis {axis} is out of range for {_describe(x)} of "
                                      f"rank {rank}; valid axes are [{-rank}, {rank})", None)
            normalized.append(axis % rank)
        if not normalized:
            raise self._fd._error(f"{what}({_describe(x)}): give at least one axis to reduce",
                                  None)
        return sorted(set(normalized))

    def _count(self, x, axes):
        count = None
        for axis in axes:
            size = self.size(x, axis)
            count = size if count is None else self.mul(count, size)
        return count

    def _kept(self, reduced, rank, axes):
        return self.broadcast(reduced, [axis in axes for axis in range(rank)])

    def mean(self, x, axes=None, keep_dim=False, *, dims=None, keepdim=None):
        """mean(x, axes, keep_dim=False): sum / number of elements, as torch.mean. A
        composition. nvFuser's dims= and keepdim= are aliases."""
        axes, keep_dim = _nvfuser_axes(axes, keep_dim, dims, keepdim)
        self._floating(x, "mean")
        axes = self._axes(x, axes, "mean")
        mean = self.div(self.sum(x, axes), self._count(x, axes))
        return self._kept(mean, x.ndim, axes) if keep_dim else mean

    def var_mean(self, x, axes=None, correction=1, keep_dim=False, *, dims=None,
                 keepdim=None):
        """var_mean(x, axes, correction=1, keep_dim=False) -> (var, mean), as
        torch.var_mean: sum((x - mean)^2) / (N - correction). A composition.
        nvFuser's dims= and keepdim= are aliases."""
        axes, keep_dim = _nvfuser_axes(axes, keep_dim, dims, keepdim)
        self._floating(x, "var_mean")
        axes = self._axes(x, axes, "var_mean")
        if int(correction) < 0:
            raise self._fd._error(f"var_mean({_describe(x)}): correction {correction} is "
                                  "negative; valid: >= 0 (1: unbiased, 0: population)", None)
        count = self._count(x, axes)
        mean = self.div(self.sum(x, axes), count)
        mean_kept = self._kept(mean, x.ndim, axes)
        centered = self.sub(x, mean_kept)
        # torch's max(0, N - correction): a correction >= N divides by 0 (inf / nan).
        dof = count if int(correction) == 0 else \
            self.maximum(self.sub(count, int(correction)), 0)
        var = self.div(self.sum(self.mul(centered, centered), axes), dof)
        if keep_dim:
            return self._kept(var, x.ndim, axes), mean_kept
        return var, mean

    def var(self, x, axes=None, correction=1, keep_dim=False, *, dims=None, keepdim=None):
        """var(x, axes, correction=1, keep_dim=False), as torch.var. A composition."""
        axes, keep_dim = _nvfuser_axes(axes, keep_dim, dims, keepdim)
        return self.var_mean(x, axes, correction, keep_dim)[0]

    def softmax(self, x, dim):
        """softmax(x, dim): exp(x - max) / sum(exp(x - max)) (numerically stable), as
        torch.softmax. A composition."""
        self._floating(x, "softmax")
        (dim,) = self._axes(x, dim, "softmax")
        e = self.exp(self.sub(x, self._kept(self.max(x, [dim]), x.ndim, [dim])))
        return self.div(e, self._kept(self.sum(e, [dim]), x.ndim, [dim]))

    def log_softmax(self, x, dim):
        """log_softmax(x, dim): (x - max) - log(sum(exp(x - max))), as
        torch.log_softmax. A composition."""
        self._floating(x, "log_softmax")
        (dim,) = self._axes(x, dim, "log_softmax")
        shifted = self.sub(x, self._kept(self.max(x, [dim]), x.ndim, [dim]))
        total = self._kept(self.sum(self.exp(shifted), [dim]), x.ndim, [dim])
        return self.sub(shifted, self.log(total))

    def _normalized_axes(self, x, normalized_ndims, weight, bias, what):
        self._floating(x, what)
        rank = x.ndim
        if not 1 <= int(normalized_ndims) <= rank:
            raise self._fd._error(f"{what}({_describe(x)}): normalized_ndims {normalized_ndims} "
                                  f"is out of range; valid: [1, {rank}] (the number of trailing "
                                  "axes to normalize)", None)
        for name, t in (("weight", weight), ("bias", bias)):
            if t is not None:
                self._fd._tensor_ref(t, what)
                if t.ndim != int(normalized_ndims):
                    raise self._fd._error(
                        f"{what}({_describe(x)}): the {name} {_describe(t)} has rank {t.ndim}; "
                        f"it must be shaped as the {normalized_ndims} normalized trailing axes",
                        None)
        return list(range(rank - int(normalized_ndims), rank))

    def _affine(self, y, weight, bias):
        if weight is not None:
            y = self.mul(y, weight)
        if bias is not None:
            y = self.add(y, bias)
        return y

    def layer_norm(self, x, normalized_ndims, weight=None, bias=None, eps=1e-5):
        """layer_norm(x, normalized_ndims, weight=None, bias=None, eps=1e-5): normalizes
        the last `normalized_ndims` axes, as torch.layer_norm with a normalized_shape of
        that many axes: (x - mean) * rsqrt(var + eps) (population variance), * weight,
        + bias. A composition."""
        axes = self._normalized_axes(x, normalized_ndims, weight, bias, "layer_norm")
        count = self._count(x, axes)
        centered = self.sub(x, self._kept(self.div(self.sum(x, axes), count), x.ndim, axes))
        variance = self.div(self.sum(self.mul(centered, centered), axes), count)
        inv_std = self._kept(self.rsqrt(self.add(variance, float(eps))), x.ndim, axes)
        return self._affine(self.mul(centered, inv_std), weight, bias)

    def rms_norm(self, x, normalized_ndims, weight=None, bias=None, eps=1e-6):
        """rms_norm(x, normalized_ndims, weight=None, bias=None, eps=1e-6):
        x * rsqrt(mean(x^2) + eps) over the last `normalized_ndims` axes, * weight,
        + bias. A composition."""
        axes = self._normalized_axes(x, normalized_ndims, weight, bias, "rms_norm")
        mean_square = self.div(self.sum(self.mul(x, x), axes), self._count(x, axes))
        inv_rms = self._kept(self.rsqrt(self.add(mean_square, float(eps))), x.ndim, axes)
        return self._affine(self.mul(x, inv_rms), weight, bias)

    def zeros(self, shape, dtype=DataType.Float):
        return self.full(shape, 0.0 if to_dtype(dtype) != DataType.Bool else False, dtype)

    def ones(self, shape, dtype=DataType.Float):
        return self.full(shape, 1.0 if to_dtype(dtype) != DataType.Bool else True, dtype)


def _nvfuser_axes(axes, keep_dim, dims, keepdim):
    """axes and keep_dim from hostir's or nvFuser's (dims=, keepdim=) spelling."""
    if dims is not None:
        if axes is not None:
            raise Error("give the axes once, as axes or dims (its nvFuser alias)")
        axes = dims
    if axes is None:
        raise Error("missing the axes to reduce (axes=[...] or dims=[...])")
    return axes, keep_dim if keepdim is None else keepdim


def _make_unary(name):
    def op(self, x):
        ref_of = self._fd._tensor_ref if name == "set" else self._fd._operand_ref
        return self._tensor_op("ops." + name, x=ref_of(x, name))

    op.__name__ = name
    op.__doc__ = (f"{name}(x): elementwise on a tensor, or on a scalar (a scalar result), "
                  f"as the C++ builder hostir::{name}.")
    return op


def _make_binary(name):
    def op(self, lhs, rhs):
        fd = self._fd
        return self._tensor_op("ops." + name, lhs=fd._operand_ref(lhs, name),
                               rhs=fd._operand_ref(rhs, name))

    op.__name__ = name
    op.__doc__ = (f"{name}(lhs, rhs): tensors and/or scalars (Python numbers become "
                  "constants); tensors broadcast and promote as in PyTorch.")
    return op


def _make_reduction(name):
    def op(self, x, axes=None, keep_dim=False, dtype=None, *, dims=None, keepdim=None,
           dim=None):
        # nvFuser's frontend spells them dims= (or dim=) and keepdim=; all are accepted.
        for alias in (dims, dim):
            if alias is not None:
                if axes is not None:
                    raise Error(f"{name}: give the axes once, as axes or dims/dim (its "
                                "nvFuser aliases)")
                axes = alias
        if axes is None:
            raise Error(f"{name}: missing the axes to reduce (axes=[...] or dims=[...])")
        if keepdim is not None:
            keep_dim = keepdim
        if isinstance(axes, DataType):  # nvFuser's op(x, dtype): every axis
            axes, dtype = list(range(x.ndim)), axes
        if isinstance(axes, int):
            axes = [axes]
        if dtype is not None and dtype is not DataType.Null and to_dtype(dtype) != x.dtype:
            # torch's and nvFuser's sum(dtype=): the input cast to dtype, then reduced.
            x = self.cast(x, dtype)
        return self._tensor_op("ops." + name, x=self._fd._tensor_ref(x, name),
                               axes=[int(a) for a in axes], keep_dim=bool(keep_dim))

    op.__name__ = name
    op.__doc__ = (f"{name}(x, axes, keep_dim=False, dtype=None): reduction over `axes` "
                  "(of x cast to dtype when given); nvFuser's dims=, dim= and keepdim= are "
                  "aliases.")
    return op


for _name in UNARY_OPS:
    setattr(_Ops, _name, _make_unary(_name))
for _name in BINARY_OPS:
    setattr(_Ops, _name, _make_binary(_name))
for _name in REDUCTION_OPS:
    setattr(_Ops, _name, _make_reduction(_name))


class _Sched:
    """fd.sched: schedule calls, recorded like ops (part of the identity)."""

    def __init__(self, fd):
        self._fd = fd

    def split(self, x, axis, factor, inner_split=True):
        self._fd._record("sched.split", dict(x=self._fd._tensor_ref(x, "split"), axis=int(axis),
                                             factor=int(factor), inner_split=bool(inner_split)))

    def merge(self, x, axis_outer, axis_inner=None):
        if axis_inner is None:
            axis_inner = axis_outer + 1
        self._fd._record("sched.merge", dict(x=self._fd._tensor_ref(x, "merge"),
                                             axis_outer=int(axis_outer),
                                             axis_inner=int(axis_inner)))

    def parallelize(self, x, axis, parallel_type):
        if not isinstance(parallel_type, ParallelType):
            raise self._fd._error(f"parallelize: {parallel_type!r} is not a hostir.ParallelType",
                                  None)
        self._fd._record("sched.parallelize", dict(x=self._fd._tensor_ref(x, "parallelize"),
                                                   axis=int(axis),
                                                   parallel_type=parallel_type.name))

    def set_device_mesh(self, x, mesh):
        if not isinstance(mesh, DeviceMesh):
            mesh = DeviceMesh(list(mesh))
        self._fd._record("sched.set_device_mesh",
                         dict(x=self._fd._tensor_ref(x, "set_device_mesh"),
                              devices=list(mesh.devices), shape=list(mesh.shape)))

    def automatic_stream_splits(self, enabled=True):
        """Lets hostir choose where and how finely to pipeline this sharded
        definition's collectives (docs/lowering.md, "Overlap without
        annotations"): at the first execute, when every size is known, it
        inserts the Stream splits a user would write, or none where they do
        not pay. Only for a definition with no Stream split of its own; its
        choice is in fd.overlap_report() after that execute. On by default
        (HOSTIR_OVERLAP=off turns the default off); enabled=False keeps the
        program as written whatever HOSTIR_OVERLAP says, and lets
        fd.host_ir() read it before the first execute. Part of the
        definition's identity, like the other schedule calls."""
        if not isinstance(enabled, bool):
            raise self._fd._error(f"automatic_stream_splits: enabled must be True or False, got "
                                  f"{enabled!r}", None)
        self._fd._record("sched.automatic_stream_splits", dict(enabled=enabled))


class FusionDefinition:
    """A fusion written in Python.

        with hostir.FusionDefinition() as fd:
            x = fd.define_tensor(shape=[-1, -1], dtype=hostir.DataType.Float)
            fd.add_output(fd.ops.relu(x) * 2.0)
        (y,) = fd.execute([torch.randn(4, 8)])

    or subclass it and define `definition(self)` (and optionally
    `schedule(self)`); the definition is then recorded on first use.
    """

    def __init__(self, cache=None):
        """FusionDefinition(): a definition to record (in the default cache, or
        `cache`). FusionDefinition(fusion_id): the finished definition cached under
        that id in the default cache (nvFuser's form)."""
        fusion_id = None
        if isinstance(cache, int) and not isinstance(cache, bool):
            fusion_id, cache = cache, None
        self._cache = cache if cache is not None else FusionCache.get()
        self._records = []
        self._kinds = []
        self._cdef = None
        self._entry = None
        self._state = None
        self._recording = False
        self._defining = False
        self.ops = _Ops(self)
        self.sched = _Sched(self)
        self.cache_hit = None
        if fusion_id is not None:
            entry = self._cache._entries.get(fusion_id)
            if entry is None:
                raise Error(f"FusionDefinition({fusion_id}): no fusion with that id in the "
                            f"cache (its ids: {self._cache.fusion_ids()})")
            self._records = list(entry.records)
            self._entry, self._cdef, self._state = entry, entry.definition(), entry.state.copy()
            self.cache_hit = True

    # --- recording ----------------------------------------------------------

    def __enter__(self):
        if self._entry is not None or self._recording:
            raise Error("FusionDefinition: this definition is already "
                        + ("being recorded" if self._recording else "finished")
                        + "; create a new FusionDefinition")
        self._records = []
        self._kinds = []
        self._cdef = _C.Definition()
        self._recording = True
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self._recording = False
            self._cdef = None
            return False
        self._finish()
        return False

    def _finish(self):
        self._recording = False
        if not self._cdef.output_fids():
            raise Error("FusionDefinition: the definition has no output; call "
                        "fd.add_output(tensor)\n\n" + self.repro())
        cdef, kinds = self._cdef, self._kinds
        entry, hit = self._cache._lookup_or_insert(self._records, cdef,
                                                   lambda: FusionState.of(cdef, kinds))
        self._entry = entry
        self.cache_hit = hit
        # A hit restores the cached fusion and its state.
        self._cdef = entry.definition()
        self._state = entry.state.copy()

    def _check_recording(self, what):
        if not self._recording:
            raise self._error(f"{what}: record definitions and schedules inside "
                              "`with hostir.FusionDefinition() as fd:` (or in definition()/"
                              "schedule() of a subclass); this definition is "
                              + ("finished" if self._entry is not None else "not being recorded"),
                              None)

    def _record(self, kind, args, value_class=None):
        self._check_recording(kind)
        try:
            outputs = apply(self._cdef, kind, args)
        except _C.Error as error:
            raise self._error(str(error), None) from None
        self._records.append(Record(kind, args, outputs))
        return self._wrap(outputs)

    def _wrap(self, outputs):
        if not outputs:
            return None
        fid = outputs[0]
        is_tensor = self._cdef.is_tensor(fid)
        while len(self._kinds) <= fid:
            self._kinds.append("?")
        self._kinds[fid] = "T" if is_tensor else "S"
        return Tensor(self, fid) if is_tensor else Scalar(self, fid)

    def _own(self, value, what):
        if value.fd is not self:
            raise self._error(f"{what}: {_describe(value)} belongs to another "
                              "FusionDefinition; use values of this one", None)
        return value.fid

    def _tensor_ref(self, value, what):
        if not isinstance(value, Tensor):
            raise self._error(f"{what}: expected a tensor of this definition, got "
                              f"{_describe(value)}", None)
        return ref(self._own(value, what))

    def _scalar_ref(self, value, what):
        if isinstance(value, Scalar):
            return ref(self._own(value, what))
        if isinstance(value, Tensor):
            raise self._error(f"{what}: expected a scalar, got the tensor {_describe(value)}",
                              None)
        return ref(self.define_scalar(value).fid)

    def _operand_ref(self, value, what):
        if isinstance(value, Value):
            return ref(self._own(value, what))
        if isinstance(value, (bool, int, float, complex)):
            return ref(self.define_scalar(value).fid)
        raise self._error(f"{what}: expected a tensor, a scalar or a Python number, got "
                          f"{_describe(value)}", None)

    def _size(self, x, dim):
        self._check_recording("size")
        if not isinstance(x, Tensor):
            raise self._error(f"size: expected a tensor of this definition, got {_describe(x)}",
                              None)
        fid = self._own(x, "size")
        try:
            extent, new = self._cdef.size(fid, int(dim))
        except _C.Error as error:
            raise self._error(str(error), None) from None
        if new:  # an extent without a fid yet: a record gives it one
            self._records.append(Record("ops.size", {"x": ref(fid), "dim": int(dim)}, [extent]))
            return self._wrap([extent])
        # An extent that already has a fid (an input's: negative; no record).
        return Scalar(self, extent)

    # --- definitions ----------------------------------------------------------

    def define_tensor(self, shape=None, contiguity=None, dtype=DataType.Float, is_cpu=False,
                      stride_order=None, *, sizes=None, strides=None, static_sizes=False):
        """An input tensor. Forms:
          define_tensor(rank)                       symbolic sizes, any strides
          define_tensor(shape=[-1, 1, 4], contiguity=[True, None, True], dtype=...)
              -1 symbolic, 1 a broadcast axis (contiguity None), n a fixed size;
              contiguity True on every axis requires contiguous inputs
          define_tensor(sizes=[...], strides=[...], static_sizes=False)
              shape and contiguity from a concrete layout (as from_pytorch)
        nvFuser's is_cpu (every tensor is on the CPU here; is_cpu=True asks for a
        0-dim tensor, as nvFuser's CPU scalar tensors are) and stride_order (the
        axes' order by stride, innermost 0; a non-row-major order makes the input
        accept any strides) are accepted.
        """
        if is_cpu and not (shape == [] or shape == () or shape == 0 or sizes == []
                           or sizes == ()):
            raise self._error(f"define_tensor: is_cpu=True is for 0-dim tensors (nvFuser's "
                              f"CPU scalar tensors), got shape {shape if sizes is None else sizes}",
                              None)
        if stride_order is not None:
            stride_order = [int(o) for o in stride_order]
            rank = len(stride_order)
            if sorted(stride_order) != list(range(rank)):
                raise self._error(f"define_tensor: stride_order {stride_order} is not a "
                                  f"permutation of 0..{rank - 1}", None)
            if stride_order != list(range(rank - 1, -1, -1)):
                # Contiguity flags follow the stride order; hostir's follow the axes:
                # claim none (any strides accepted, the same values).
                contiguity = False
        if sizes is not None:
            if shape is not None:
                raise self._error("define_tensor: give either shape or sizes/strides, not both",
                                  None)
            sizes = [int(s) for s in sizes]
            if strides is None:
                strides = _contiguous_strides(sizes)
            strides = [int(s) for s in strides]
            if len(strides) != len(sizes):
                raise self._error(f"define_tensor: {len(sizes)} sizes but {len(strides)} "
                                  "strides; give one stride per size", None)
            shape = [s if (static_sizes or s == 1) else -1 for s in sizes]
            contiguity = _contiguity_from_strides(sizes, strides)
        elif isinstance(shape, int):
            shape = [-1] * shape
        elif shape is None:
            raise self._error("define_tensor: give a rank, a shape or sizes/strides", None)
        shape = [int(s) for s in shape]
        if contiguity is None or isinstance(contiguity, bool):
            flag = bool(contiguity)
            contiguity = [None if s == 1 else flag for s in shape]
        # None on an axis of size other than 1 is nvFuser's expanded axis (stride 0):
        # here a non-contiguous axis, which takes any stride (0 too).
        contiguity = [None if c is None and s == 1 else bool(c) for c, s in zip(contiguity, shape)]
        return self._record("define_tensor", dict(shape=shape, contiguity=contiguity,
                                                  dtype=to_dtype(dtype).name))

    def from_pytorch(self, tensor, static_sizes=False):
        """An input tensor shaped like `tensor` (its dtype and layout; its sizes
        too with static_sizes=True)."""
        if not isinstance(tensor, torch.Tensor):
            raise self._error("from_pytorch: expected a torch.Tensor, got "
                              f"{type(tensor).__name__}", None)
        return self.define_tensor(sizes=list(tensor.shape), strides=list(tensor.stride()),
                                  dtype=to_dtype(tensor.dtype), static_sizes=static_sizes)

    def define_scalar(self, value=None, dtype=None):
        """A constant (`define_scalar(2.0)`) or, with no value, a scalar input
        passed to execute (`define_scalar(dtype=hostir.DataType.Int64)`)."""
        if isinstance(value, DataType):  # nvFuser's define_scalar(DataType.Int): an input
            value, dtype = None, value
        if dtype is None:
            dtype = DataType.Double if value is None else _scalar_dtype(value)
        dtype = to_dtype(dtype)
        if value is not None:
            if dtype == DataType.Bool:
                value = bool(value)
            elif dtype in (DataType.Int32, DataType.Int64):
                if isinstance(value, float) and not value.is_integer():
                    raise self._error(f"define_scalar: {value!r} is not an integer "
                                      f"({dtype.name})", None)
                value = int(value)
            elif dtype in (DataType.ComplexFloat, DataType.ComplexDouble):
                value = complex(value)
                # A record holds JSON's types (records.py): [real, imag].
                value = [value.real, value.imag]
            elif isinstance(value, complex):
                raise self._error(f"define_scalar: {value!r} is complex, the dtype "
                                  f"{dtype.name}; use DataType.ComplexFloat or "
                                  "ComplexDouble", None)
            else:
                value = float(value)
        return self._record("define_scalar", dict(value=value, dtype=dtype.name))

    def add_output(self, tensor, alias_input=None, *, stride_order=None):
        """An output. nvFuser's forms: add_output(t, alias_input=input) writes t into
        that input tensor in place (t is then not returned); add_output(t,
        stride_order=[...]) returns t laid out in that order (stride_order[axis] is
        the axis's place from the innermost, 0)."""
        if isinstance(alias_input, (list, tuple)):  # nvFuser's positional stride_order
            alias_input, stride_order = None, alias_input
        if tensor.fid in self._cdef.output_fids() or tensor.fid in self._cdef.input_fids():
            # nvFuser returns a tensor as often as it is added (an input too): a copy.
            tensor = self.ops.set(tensor)
        args = dict(x=self._tensor_ref(tensor, "add_output"))
        if alias_input is not None:
            if self._tensor_ref(alias_input, "add_output")["fid"] not in self._cdef.input_fids():
                raise self._error(f"add_output(alias_input={_describe(alias_input)}): not an "
                                  "input of this definition; alias an input tensor", None)
            args["alias_input"] = self._tensor_ref(alias_input, "add_output")
        if stride_order is None:
            stride_order = next((r.args["stride_order"] for r in self._records
                                 if r.kind == "ops.stride_order" and r.outputs == [tensor.fid]),
                                None)
        if stride_order is not None:
            args["stride_order"] = self._stride_order(stride_order, tensor, "add_output")
        self._record("add_output", args)

    def _stride_order(self, stride_order, tensor, what):
        stride_order = [int(o) for o in stride_order]
        if sorted(stride_order) != list(range(tensor.ndim)):
            raise self._error(f"{what}({_describe(tensor)}): stride_order {stride_order} is "
                              f"not a permutation of 0..{tensor.ndim - 1}", None)
        return stride_order

    def define_vector(self, values, dtype=DataType.Int64):
        """nvFuser's vector of integer scalars: define_vector([s0, s1, ...]) is that
        list (scalars of the definition or ints); define_vector(n) n Int64 scalar
        inputs (execute takes a list of n ints in their place)."""
        if to_dtype(dtype) not in (DataType.Int64, DataType.Int32):
            raise self._error(f"define_vector: dtype {dtype!r}; vectors hold integers", None)
        if isinstance(values, int):
            return [self.define_scalar(dtype=DataType.Int64) for _ in range(values)]
        return [self._vector_entry(v) for v in values]

    def _vector_entry(self, value):
        """An int, or a scalar of the definition cast to Int64 unless it is an integer
        (a size computed in floating point, as nvFuser's Int vectors take it)."""
        if not isinstance(value, Scalar):
            return self.define_scalar(int(value))
        if self._cdef.dtype(value.fid) in (DataType.Int64, DataType.Int32):
            return value
        return self.ops.cast(value, DataType.Int64)

    def _constant_int_or_none(self, value):
        """An int, or a constant scalar's value; None for a scalar known at run time."""
        if not isinstance(value, Scalar):
            return int(value)
        for record in self._records:
            if record.kind == "define_scalar" and record.outputs == [value.fid] and \
                    record.args["value"] is not None:
                return int(record.args["value"])
        return None

    # --- subclass style ---------------------------------------------------------

    def definition(self):
        raise NotImplementedError

    def schedule(self):
        pass

    def _ensure_defined(self):
        if self._entry is not None:
            return
        if self._recording:
            raise Error("FusionDefinition: still recording; leave the `with` block first")
        if type(self).definition is FusionDefinition.definition:
            raise Error("FusionDefinition: nothing defined; use `with hostir.FusionDefinition() "
                        "as fd:` or subclass it and implement definition(self)")
        with self:
            self.definition()
            self.schedule()

    # --- identity and introspection -----------------------------------------------

    def id(self):
        """The fusion id in the cache (shared by definitions with equal records)."""
        self._ensure_defined()
        return self._entry.id

    def inputs(self):
        """The fids of the inputs, in order (nvFuser's fd.inputs())."""
        return list(self.state.inputs)

    def outputs(self):
        """The fids of the outputs, in order (nvFuser's fd.outputs())."""
        return list(self.state.outputs)

    def extents(self):
        """The fids of the inputs' extents, -1, -2, ... (nvFuser's fd.extents())."""
        return [extent for extent, _, _ in self.state.extents]

    @property
    def records(self):
        return list(self._records)

    @property
    def state(self):
        """The FusionState (fids) of the finished definition."""
        self._ensure_defined()
        return self._state

    def fusion_ir(self):
        """The C++ fusion in IR notation."""
        if not self._recording:
            self._ensure_defined()
        return self._cdef.fusion_ir()

    def overlap_report(self):
        """What the automatic stream splits (on by default; see
        fd.sched.automatic_stream_splits) found and chose, a line per collective:
        pipelined with its chunk count and predicted times, or not and why.
        Empty before the first execute, or when they did not run."""
        self._ensure_defined()
        return self._cdef.overlap_report()

    def automatic_chunks(self):
        """The chunk count the automatic stream splits chose at the first
        execute: the largest among the collectives (1 when none was
        pipelined, or before that execute)."""
        self._ensure_defined()
        return self._cdef.automatic_chunks()

    def host_ir(self, inputs=None, number_of_streams=None):
        """The host program, as text. A definition is lowered once: the same
        program runs every input signature and every number_of_streams (bound
        when it runs), so both arguments are optional and only checked."""
        self._ensure_defined()
        _streams(number_of_streams)
        try:
            return self._cdef.host_ir()
        except _C.Error as error:
            raise self._error(str(error), inputs or []) from None

    def execution(self):
        """How each segment of the host program runs, one line per segment:
        "compiled kernel <hash> for <target>", "GEMM with post-ops: ..." or
        "ATen: <why>", and after runs what they ran on, a run that fell back
        to ATen included, with its reason ("; ran it 2 times, fell back to
        ATen 1 time: the input T0... is empty (sizes [0, 4])")."""
        self._ensure_defined()
        try:
            return self._cdef.execution()
        except _C.Error as error:
            raise self._error(str(error), []) from None

    def _name_of(self, fid):
        if fid < 0:
            for extent, tensor, axis in self._extents():
                if extent == fid:
                    return f"fd.ops.size(T{tensor}, dim={axis})"
            return f"<extent {fid}>"
        kinds = self._state.kinds if self._state is not None else self._kinds
        return (kinds[fid] if fid < len(kinds) else "V") + str(fid)

    def _extents(self):
        if self._state is not None:
            return self._state.extents
        return self._cdef.extent_fids() if self._cdef is not None else []

    def repro(self, inputs=None):
        """Python that recreates this definition (and runs it on inputs like
        `inputs` when given)."""
        lines = ["import torch", "import hostir", "",
                 "with hostir.FusionDefinition() as fd:"]
        if not self._records:
            lines.append("    pass")
        for record in self._records:
            lines.append("    " + format_record(record, self._name_of))
        if inputs is not None:
            lines.append("")
            lines.append(_describe_inputs(inputs))
        return "\n".join(lines) + "\n"

    def last_repro_script(self):
        """nvFuser's: repro() with the inputs of the last execute(inputs,
        save_repro_inputs=True) (their shapes, dtypes and strides; scalars)."""
        saved = getattr(self, "_repro_inputs", None)
        if saved is None:
            raise Error("last_repro_script: no inputs were saved; run "
                        "fd.execute(inputs, save_repro_inputs=True) first")
        return self.repro(saved)

    def __str__(self):
        if not self._recording and self._entry is None and \
                type(self).definition is not FusionDefinition.definition:
            self._ensure_defined()
        return self.repro()

    def __repr__(self):
        """Unfinished: a short description. Finished: the definition as nvFuser
        prints one, a function of fd that records it again (line 2 names it
        nvfuser_fusion_id<fusion id>); exec it and call it inside a new
        FusionDefinition's `with` block to get the same fusion."""
        if self._entry is None:
            return f"<hostir.FusionDefinition ({len(self._records)} records, not finished)>"
        lines = ["# hostir.FusionDefinition, printed in nvFuser's form",
                 f"def nvfuser_fusion_id{self._entry.id}(fd) -> None:", "    import hostir"]
        for record in self._records:
            lines.append("    " + format_record(record, self._name_of))
        return "\n".join(lines) + "\n"

    def _error(self, message, inputs):
        return Error(f"{message}\n\nrepro:\n{self.repro()}\n{_describe_inputs(inputs)}")

    # --- running ----------------------------------------------------------------------

    def execute(self, inputs, number_of_streams=None, output=None, global_tensors=False, *,
                device=None, print_repro=False, profile=False, _enable_options=(),
                _disable_options=(), override_user_schedule=False,
                capture_debug_output=False, save_repro_inputs=False):
        """Runs the fusion on `inputs` (torch tensors, Python numbers for scalar
        inputs; with a device mesh: this rank's shards, None for an input this
        rank does not hold). `output`: preallocated tensors to write the outputs
        into. Returns the outputs as a list of torch.Tensor; their shardings are
        then in fd.last_output_shardings. Inputs that require grad are accepted:
        hostir records no autograd history and its outputs do not require grad.
        `global_tensors=True`: the inputs are whole tensors; each rank cuts its
        shards and gathers every output whole (hostir.distributed.execute).
        nvFuser's keywords: device (None, "cpu" or 0: the only device a process
        runs on), print_repro (prints repro(inputs) first), _enable_options /
        _disable_options (its code generator's switches; hostir has no such
        switches and ignores them), save_repro_inputs (keeps the inputs' shapes,
        dtypes and strides, and scalars, for last_repro_script()). profile and
        capture_debug_output are refused: they are CUDA profiling and
        kernel-compiler output."""
        _check_device(device)
        if profile or capture_debug_output:
            raise Error("execute: profile= and capture_debug_output= are nvFuser's CUDA "
                        "profiler and kernel-compiler output; hostir has neither (time a run "
                        "with the hostir CLI's --json, see docs/performance.md)")
        if override_user_schedule:
            raise Error("execute: override_user_schedule= selects nvFuser's user-written "
                        "CUDA schedule; hostir has none")
        if print_repro:
            print(self.repro(list(inputs)))
        if save_repro_inputs:
            self._repro_inputs = [
                torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
                if isinstance(v, torch.Tensor) else v for v in inputs]
        if isinstance(inputs, torch.Tensor):
            raise Error("execute: inputs must be a list of tensors (and scalars), got one "
                        "torch.Tensor; write fd.execute([x])")
        if global_tensors:
            if output:
                raise Error("execute: output= cannot be combined with global_tensors=True")
            return distributed.execute(self, inputs, number_of_streams)
        cdef = self._cdef
        if self._entry is None:
            self._ensure_defined()
            cdef = self._cdef
        # A vector input (define_vector(n)) is given as a list: its scalars in turn.
        inputs = [item for value in inputs
                  for item in (value if isinstance(value, (list, tuple)) else [value])]
        try:
            outputs = cdef.execute(inputs, output or [], _streams(number_of_streams))
        except _C.Error as error:
            raise self._error(str(error), inputs) from None
        return self._laid_out(outputs, inputs)

    def _laid_out(self, outputs, inputs):
        """The outputs as add_output asked: aliased ones written into their input
        (and dropped), stride_order ones in that memory order."""
        added = [r.args for r in self._records if r.kind == "add_output"]
        if len(added) != len(outputs) or \
                all("alias_input" not in a and "stride_order" not in a for a in added):
            return outputs
        input_fids = self._cdef.input_fids()
        kept = []
        for args, out in zip(added, outputs):
            if "stride_order" in args:
                order = args["stride_order"]
                outer_first = sorted(range(out.dim()), key=lambda axis: -order[axis])
                out = out.permute(outer_first).contiguous().permute(
                    [outer_first.index(axis) for axis in range(out.dim())])
            if "alias_input" in args:
                inputs[input_fids.index(args["alias_input"]["fid"])].copy_(out)
            else:
                kept.append(out)
        return kept

    def execute_compute_only(self, inputs, number_of_streams=None):
        """Runs the fusion's compute alone, for timing: execute's program on this
        rank's `inputs` (tensors) with every collective replaced by a local copy
        of this rank's data (nothing goes over the link, no rank waits for
        another), so its outputs are not the fusion's. The compute-only
        baseline of a sharded job (docs/performance.md)."""
        self._ensure_defined()
        try:
            return self._cdef.execute_compute_only(list(inputs), _streams(number_of_streams))
        except _C.Error as error:
            raise self._error(str(error), inputs) from None

    def measure_overlap(self, inputs):
        """Executes once on this rank's `inputs` (tensors, as execute) with
        hostir's tracer recording, and returns what each collective cost this
        rank on that run: a line per collective with how long the streams
        waited for it (once per chunk in a pipelined loop) and how much of
        that wait no compute hid ("exposed"), after the run's time and compute
        time. Every rank of a sharded definition must call it, as execute.
        Read it against fd.overlap_report()'s predicted exposure."""
        self._ensure_defined()
        try:
            self._cdef.execute_measuring_exposure(list(inputs))
        except _C.Error as error:
            raise self._error(str(error), inputs) from None
        return self._cdef.exposure_report()

    def exposure_report(self):
        """The last fd.measure_overlap's text ("" before one)."""
        return self._cdef.exposure_report() if self._cdef is not None else ""

    @property
    def last_output_shardings(self):
        """Per output of the last execute: an OutputSharding(mesh, axes)."""
        if self._cdef is None:
            return None
        shardings = self._cdef.last_output_shardings()
        if shardings is None:
            return None
        return [OutputSharding(mesh, dict(axes), dict(dims)) for mesh, axes, dims in shardings]

    def _input_shardings(self):
        """Per input: None for a scalar, else (mesh or None, {ParallelType:
        logical axis}, {ParallelType: tensor dim}) as the definition annotates it."""
        self._ensure_defined()
        return self._cdef.input_shardings()

    def is_multidevice(self):
        self._ensure_defined()
        return self._cdef.is_multidevice()

    # --- segments -------------------------------------------------------------------------

    def segment(self, inputs=None):
        """The segments of the program this fusion compiles to (the one
        fd.host_ir() prints and execute runs), in run order, as Segments (an
        empty list when one segment covers everything): each with
        `segment_inputs` and `segment_outputs` (the definition's fids, or the
        program's name of an intermediate), `engine` and `engine_detail`,
        `fusion_ir()` and `execute(inputs)`. Segmentation does not depend on
        the inputs; `inputs` is accepted for symmetry with execute."""
        self._ensure_defined()
        if self._entry.segments is None:
            self._entry.segments = compiled_segments(self)
        return list(self._entry.segments)

    def execute_segments(self, inputs, number_of_streams=None):
        """Runs the segments one by one from Python on the values they name,
        freeing each intermediate tensor after its last use; returns what
        execute returns."""
        segments = self.segment(inputs)
        if not segments:
            return self.execute(inputs, number_of_streams)
        return run_segments(self, segments, list(inputs), number_of_streams)


def _check_device(device):
    if device is None or device == 0 or str(device) in ("cpu", "cpu:0"):
        return
    raise Error(f"execute: device={device!r}: hostir runs a process's fusions on its CPU "
                "(device None, 'cpu' or 0); place work on other devices with a DeviceMesh")


def clone(source, target):
    """Makes the unrecorded FusionDefinition `target` a copy of `source`'s records
    (the same fusion: a cache hit for a finished `source`)."""
    source._ensure_defined()
    with target:
        for record in source._records:
            target._record(record.kind, record.args)
    return target


def _contiguous_strides(sizes):
    strides, running = [], 1
    for size in reversed(sizes):
        strides.append(running)
        running *= max(size, 1)
    return list(reversed(strides))


def _contiguity_from_strides(sizes, strides):
    contiguity = [None] * len(sizes)
    expected = 1
    for axis in reversed(range(len(sizes))):
        if sizes[axis] == 1:
            continue
        contiguity[axis] = strides[axis] == expected
        expected = strides[axis] * sizes[axis]
    return contiguity
