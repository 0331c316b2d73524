"""A torch tensor's layout in a definition's terms, as nvFuser's frontend states it
(its compute_contiguity / compute_tensor_descriptor, the same answers): which axes
are contiguous with the next inner one, and the order of the axes by stride."""

from .fusion_state import Error


def _is_broadcast(size, stride):
    return stride == 0 or size == 1


def compute_contiguity(sizes, strides):
    """Per axis: None for a broadcast axis (size 1 or stride 0), else whether its
    stride equals the next inner non-broadcast axis's stride * size (1 for the
    innermost), in the given axis order."""
    _check_layout(sizes, strides, "compute_contiguity")
    contiguity = [None] * len(sizes)
    expected = 1
    for axis in reversed(range(len(sizes))):
        if _is_broadcast(sizes[axis], strides[axis]):
            continue
        contiguity[axis] = strides[axis] == expected
        expected = strides[axis] * sizes[axis]
    return contiguity


def compute_tensor_descriptor(sizes, strides):
    """(contiguity, stride_order): the non-broadcast axes sorted by decreasing stride
    (stable), stride-0 axes kept at their own position; stride_order[axis] is the
    axis's place counted from the innermost (0); contiguity is listed in that sorted
    order (as define_tensor(contiguity=..., stride_order=...) reads it)."""
    _check_layout(sizes, strides, "compute_tensor_descriptor")
    axes = [a for a in range(len(sizes)) if strides[a] != 0]
    axes.sort(key=lambda a: -strides[a])
    for axis in (a for a in range(len(sizes)) if strides[a] == 0):
        axes.insert(axis, axis)
    rank = len(sizes)
    stride_order = [0] * rank
    for place, axis in enumerate(axes):
        stride_order[axis] = rank - 1 - place
    sorted_contiguity = compute_contiguity([sizes[a] for a in axes], [strides[a] for a in axes])
    return sorted_contiguity, stride_order


def _check_layout(sizes, strides, what):
    if len(sizes) != len(strides):
        raise Error(f"{what}: {len(sizes)} sizes but {len(strides)} strides; give one stride "
                    "per size")
    negative = [a for a, s in enumerate(strides) if s < 0]
    if negative:
        raise Error(f"{what}: negative stride {strides[negative[0]]} on axis {negative[0]}; "
                    "strides must be >= 0")
