"""fd.ops as nvFuser's frontend spells them: ops hostir writes otherwise
(broadcast_in_dim, expand, slice by index lists, truediv, addcmul, ...), each a
composition of hostir's primitive ops recorded as those primitives, exact (the
same values as the nvFuser / torch op). Mixed into fusion_definition._Ops."""

import numbers

from . import _C


def _is_number(value):
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


class NvFuserSpellings:
    """Methods of fd.ops; `self` is the _Ops of a FusionDefinition."""

    def expand(self, x, shape):
        """expand(x, shape): x's size-1 axes repeated to `shape` (ints or scalars; -1
        keeps an axis), as torch.expand: where(full(shape, True), x, x), which
        broadcasts and copies, exactly, for every dtype."""
        fd = self._fd
        fd._tensor_ref(x, "expand")
        shape = list(shape)
        if len(shape) != x.ndim:
            raise fd._error(f"expand({x.ir()}): shape {shape} has {len(shape)} sizes, the "
                            f"tensor {x.ndim} axes; give one per axis", None)
        static = fd._cdef.static_shape(x.fid)
        sizes = []
        for axis, size in enumerate(shape):
            if _is_number(size) and int(size) == -1:
                size = x.size(axis)
            elif _is_number(size) and static[axis] not in (1, -1) and int(size) != static[axis]:
                raise fd._error(f"expand({x.ir()}): axis {axis} has size {static[axis]}, "
                                f"cannot expand it to {size}; only size-1 axes expand", None)
            sizes.append(size)
        if all(_is_number(s) for s in sizes) and [int(s) for s in sizes] == static:
            return x
        # A size-1 axis that is not a broadcast axis (a kept reduced axis, a slice)
        # does not broadcast: take its one element (max: exact) and broadcast it.
        grown = [a for a, s in enumerate(sizes) if static[a] == 1 and
                 not (_is_number(s) and int(s) == 1)]
        if grown:
            x = self.broadcast(self.max(x, grown), [a in grown for a in range(len(sizes))])
        everywhere = self.full(sizes, True, _C.DataType.Bool)
        return self.where(everywhere, x, x)

    def broadcast_in_dim(self, x, shape, broadcast_dims):
        """broadcast_in_dim(x, shape, broadcast_dims): x's axis i becomes output axis
        broadcast_dims[i], the other axes are new; size-1 axes expand to `shape`
        (nvFuser's and torch._prims' op): broadcast, then expand."""
        fd = self._fd
        fd._tensor_ref(x, "broadcast_in_dim")
        shape, dims = list(shape), [int(d) for d in broadcast_dims]
        if len(dims) != x.ndim or len(shape) < x.ndim or \
                sorted(set(dims)) != dims or any(not 0 <= d < len(shape) for d in dims):
            raise fd._error(f"broadcast_in_dim({x.ir()}): broadcast_dims {dims} must name, in "
                            f"increasing order, one output axis (of {len(shape)}) per input "
                            f"axis ({x.ndim})", None)
        is_new = [axis not in dims for axis in range(len(shape))]
        widened = self.broadcast(x, is_new) if any(is_new) else x
        return self.expand(widened, shape)

    def truediv(self, lhs, rhs):
        """truediv(a, b): a / b as Python's true division (torch.true_divide): integer
        operands are divided as floats (div's floating promotion)."""
        return self.div(lhs, rhs)

    def addcmul(self, x, a, b, value=1.0):
        """addcmul(x, a, b, value): x + value * a * b (torch.addcmul)."""
        return self.add(x, self.mul(value, self.mul(a, b)))

    def triu(self, x, diagonal=0):
        """triu(x, diagonal=0): x where column - row >= diagonal over the last two
        axes, else 0 (torch.triu): two iotas, a comparison, where."""
        fd = self._fd
        fd._tensor_ref(x, "triu")
        if x.ndim < 2:
            raise fd._error(f"triu({x.ir()}): needs at least 2 axes, has {x.ndim}", None)
        rows = self.iota(x.size(x.ndim - 2), 0, 1)
        cols = self.iota(x.size(x.ndim - 1), 0, 1)
        offset = self.sub(self.broadcast(cols, [True, False]), self.broadcast(rows, [False, True]))
        zero = False if x.dtype == _C.DataType.Bool else 0
        return self.where(self.ge(offset, int(diagonal)), x, zero)

    def welford(self, x, dims):
        """welford(x, dims) -> (avg, var_sum, n): the mean, the sum of squared
        deviations from it, and the number of elements reduced as an Int64 tensor of
        avg's shape (nvFuser's op; var = var_sum / n): var_mean's terms, exact."""
        self._floating(x, "welford")
        axes = self._axes(x, dims, "welford")
        count = self._count(x, axes)
        avg = self.div(self.sum(x, axes), count)
        centered = self.sub(x, self._kept(avg, x.ndim, axes))
        var_sum = self.sum(self.mul(centered, centered), axes)
        kept_sizes = [x.size(a) for a in range(x.ndim) if a not in axes]
        n = self.full(kept_sizes, count, _C.DataType.Int64)
        return avg, var_sum, n

    def reciprocal(self, x):
        """reciprocal(x): 1 / x (torch.reciprocal; integers divide as floats)."""
        return self.div(1.0, x)

    def squeeze(self, x, dims, squeeze_expanded=False):
        """squeeze(x, dims): the size-1 axes `dims` dropped: a max over them (of
        one element: that element exactly, -0.0 and NaN included)."""
        fd = self._fd
        fd._tensor_ref(x, "squeeze")
        static = fd._cdef.static_shape(x.fid)
        dims = sorted({int(d) % x.ndim for d in ([dims] if _is_number(dims) else dims)})
        if any(static[d] != 1 for d in dims):
            raise fd._error(f"squeeze({x.ir()}): the squeezed axes {dims} must have size 1; "
                            f"its shape is {static}", None)
        return self.max(x, dims) if dims else x

    def _index_slice(self, x, start_indices, end_indices, strides):
        """slice(x, start_indices, end_indices, strides=None): nvFuser's form, one
        slice per axis whose range is not the whole axis; strides must be 1."""
        fd = self._fd
        fd._tensor_ref(x, "slice")
        starts, ends = list(start_indices), list(end_indices)
        steps = [1] * len(starts) if strides is None else list(strides)
        if not len(starts) == len(ends) == len(steps) == x.ndim:
            raise fd._error(f"slice({x.ir()}): give one start, end and stride per axis "
                            f"({x.ndim}); got {len(starts)}, {len(ends)}, {len(steps)}", None)
        if any(not (_is_number(s) and int(s) == 1) for s in steps):
            raise fd._error(f"slice({x.ir()}): strides {steps}: hostir slices with stride 1 "
                            "only", None)
        static = fd._cdef.static_shape(x.fid)
        for axis, (start, end) in enumerate(zip(starts, ends)):
            whole = _is_number(start) and int(start) == 0 and _is_number(end) and \
                static[axis] != -1 and int(end) >= static[axis]
            if not whole:
                x = self._axis_slice(x, axis, start, end)
        return x
