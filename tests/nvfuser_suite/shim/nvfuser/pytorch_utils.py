"""nvfuser.pytorch_utils in hostir's names (rename-only shim)."""

from hostir.fusion_definition import to_dtype as torch_dtype_to_nvfuser_dtype  # noqa: F401
