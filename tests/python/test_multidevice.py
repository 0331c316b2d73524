"""Multi-rank runs of multidevice_script.py on loopback: under `hostir launch`,
under torchrun (standalone and its default static rendezvous, where the agent
hosts the store), under Open MPI's mpirun, and in one process (a world of one)."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import build_dir

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE / "multidevice_script.py"


def run(command, ranks, timeout=300):
    env = dict(os.environ, HOSTIR_COMM_TIMEOUT_S="60", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(__import__("hostir").__file__).resolve().parents[1]), str(HERE)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for rank in range(ranks):
        assert f"rank {rank} of {ranks}: OK" in output, output


def test_world_of_one():
    run([sys.executable, str(SCRIPT)], 1)


def test_hostir_launch_two_ranks():
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    run([str(launcher), "launch", "-n", "2", "--", sys.executable, str(SCRIPT)], 2)


def test_torchrun_standalone_two_ranks():
    run([sys.executable, "-m", "hostir.torchrun", "--standalone", "--nproc_per_node=2",
         str(SCRIPT)], 2)


def test_torchrun_agent_store_two_ranks(free_port):
    # Static rendezvous: the agent hosts the store on MASTER_PORT and sets
    # TORCHELASTIC_USE_AGENT_STORE=True; rank 0 must join it as a client.
    run([sys.executable, "-m", "hostir.torchrun", "--nnodes=1", "--nproc_per_node=2",
         "--master_addr=127.0.0.1", f"--master_port={free_port}", str(SCRIPT)], 2)


def test_mpirun_two_ranks(free_port):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun (Debian's openmpi-bin) is not installed")
    # Open MPI sets OMPI_COMM_WORLD_*; the rendezvous address is ours to give.
    run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", "-x", "PYTHONPATH",
         "-x", "HOSTIR_COMM_TIMEOUT_S", "-x", "MASTER_ADDR=127.0.0.1",
         "-x", f"MASTER_PORT={free_port}", sys.executable, str(SCRIPT)], 2)
