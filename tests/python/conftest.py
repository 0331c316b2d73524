import os
import pathlib

import pytest
import torch

import hostir


def build_dir():
    """The build folder holding tools/hostir: $HOSTIR_BUILD_DIR, else the one
    the imported package was assembled in (<build>/python/hostir)."""
    if os.environ.get("HOSTIR_BUILD_DIR"):
        return pathlib.Path(os.environ["HOSTIR_BUILD_DIR"])
    return pathlib.Path(hostir.__file__).resolve().parents[2]


@pytest.fixture
def cache():
    """A cache of its own per test, so tests do not see each other's fusions."""
    return hostir.FusionCache()


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
