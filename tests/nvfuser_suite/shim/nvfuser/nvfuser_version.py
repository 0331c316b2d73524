"""nvfuser.nvfuser_version in hostir's names (rename-only shim)."""

from hostir.version import Version  # noqa: F401
