"""Stand-in for the PyPI package `looseversion` (needed by the suite's helpers,
not packaged for Debian 12): the standard library's LooseVersion it was split from."""

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from distutils.version import LooseVersion  # noqa: F401
