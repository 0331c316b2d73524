"""The peak memory of a step, counted the same way for hostir and torch.

Counts the bytes of CPU tensor memory at c10's CPU allocator, which hostir's
programs and torch's own ops both allocate through (docs/training.md, "Peak
memory of a step"). Memory allocated outside it (oneDNN's and Gloo's own,
Python objects) is not counted.
"""

from hostir import _C


def peak_tensor_bytes_of(step):
    """Runs step() and returns the most bytes of CPU tensors alive at once
    during it above those alive when it began. The first call starts
    counting (for the rest of the process); tensors made before that are
    never counted, neither when made nor when freed."""
    _C.count_tensor_memory()
    before = _C.live_tensor_bytes()
    _C.reset_peak_tensor_bytes()
    step()
    return _C.peak_tensor_bytes() - before
