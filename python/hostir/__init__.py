"""hostir from Python: write fusions with FusionDefinition, run them on torch
tensors on one device or across ranks, cache them in a FusionCache.
See docs/python.md."""

import atexit

import torch  # noqa: F401  (loads libtorch and its Python bindings first)

from . import _C  # noqa: F401
from ._version import __version__
from . import autograd  # noqa: F401
from . import checkpoint  # noqa: F401
from . import chunk_choice  # noqa: F401
from .cache import FusionCache
from .fusion_definition import FusionDefinition, clone
from .fusion_state import (
    DataType,
    DeviceMesh,
    Error,
    FusionState,
    OutputSharding,
    ParallelType,
    Scalar,
    Tensor,
)
from .layout import compute_contiguity, compute_tensor_descriptor
from .version import Version, version
from .tracing import trace

Error.__module__ = "hostir"

# The job's process groups end while Python is whole: their threads may
# release tensors Python made, which needs the GIL, and a thread taking the
# GIL once the interpreter finalizes aborts the process ("terminate called
# without an active exception"). Exit handlers registered after this import
# run first and may still communicate.
atexit.register(_C.shut_down_communicator)

__all__ = [
    "DataType",
    "DeviceMesh",
    "Error",
    "FusionCache",
    "FusionDefinition",
    "FusionState",
    "OutputSharding",
    "ParallelType",
    "Scalar",
    "Tensor",
    "__version__",
    "autograd",
    "checkpoint",
    "chunk_choice",
    "clone",
    "compute_contiguity",
    "compute_tensor_descriptor",
    "trace",
    "version",
    "Version",
]
