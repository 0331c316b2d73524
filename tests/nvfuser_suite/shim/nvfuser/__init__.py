"""`nvfuser` spelled in hostir's names: a rename-only shim for running nvFuser's
FusionCache-era frontend suite (tests/nvfuser_suite/python/test_python_frontend.py)
on hostir. Every name below is a hostir name under nvFuser's spelling; nothing here
adds behaviour (docs/python.md, "nvFuser's frontend suite")."""

from hostir import (  # noqa: F401
    DataType,
    FusionCache,
    FusionDefinition,
    Scalar,
    Tensor,
    clone,
    compute_contiguity,
    compute_tensor_descriptor,
    version,
)
