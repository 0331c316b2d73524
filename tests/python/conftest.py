import os
import pathlib
import random
import socket

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


def _bindable(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return None
        return s.getsockname()[1]


@pytest.fixture
def free_port():
    """A loopback port nobody listens on, for a test's own rendezvous: below
    the kernel's ephemeral range, as `hostir launch` picks its own, so other
    jobs' outgoing connections cannot take it before the test binds it."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(64):
        port = _bindable(random.randrange(max(1024, low - 10000), low))
        if port:
            return port
    return _bindable(0)

