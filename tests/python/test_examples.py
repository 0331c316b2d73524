"""examples/*.py run and check themselves (they assert against torch)."""

import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import build_dir

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python_mlp.py"
LAYER = ROOT / "examples" / "transformer_layer.py"


def environment():
    import hostir

    package_root = str(pathlib.Path(hostir.__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [package_root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])),
        HOSTIR_COMM_TIMEOUT_S="60")


def test_python_mlp_one_process():
    result = subprocess.run([sys.executable, str(EXAMPLE), "--tokens", "64", "--ffn", "128"],
                            env=environment(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cache hit True, same fusion id True" in result.stdout


def test_python_mlp_sharded_two_ranks():
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    result = subprocess.run(
        [str(launcher), "launch", "-n", "2", "--", sys.executable, str(EXAMPLE), "--sharded"],
        env=environment(), capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[rank 1] max |y - torch|" in output and "axes={<ParallelType.DIDx: 2>: 0}" in output


def run_sharded(command):
    result = subprocess.run(command, env=environment(), capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[rank 1] max |y - torch|" in output and "axes={<ParallelType.DIDx: 2>: 0}" in output


def test_python_mlp_sharded_under_torchrun():
    run_sharded([sys.executable, "-m", "hostir.torchrun",
                 "--standalone", "--nproc_per_node=2", str(EXAMPLE), "--sharded"])


def mpirun_command(script, *args):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun (Debian's openmpi-bin) is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # The example reads only Open MPI's OMPI_COMM_WORLD_* (no RANK).
    return [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
            "-x", "PYTHONPATH", "-x", "HOSTIR_COMM_TIMEOUT_S", "-x", "MASTER_ADDR=127.0.0.1",
            "-x", f"MASTER_PORT={port}", sys.executable, str(script), *args]


def test_python_mlp_sharded_under_mpirun():
    run_sharded(mpirun_command(EXAMPLE, "--sharded"))


# The transformer layer (issue 19): every rank checks its token shard
# against the layer written the usual way in torch.


def test_transformer_layer_one_process():
    result = subprocess.run([sys.executable, str(LAYER)], env=environment(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[rank 0] max |y - torch|" in result.stdout


def test_transformer_layer_two_ranks_with_both_halves_pipelined():
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    command = [str(launcher), "launch", "-n", "2", "--", sys.executable, str(LAYER), "--chunks", "2"]
    result = subprocess.run(command, env=environment(), capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[rank 1] max |y - torch|" in output
    # Rank 0's host program shows the collectives, each in a chunk loop (a loop
    # body is indented by 4): the attention's allgather and the reduce-scatter of
    # its sums over the heads, the MLP's allgather and reduce-scatter.
    in_loops = re.findall(r"\[rank 0\] {5}Communication \d+ \(type=(\w+)", output)
    assert in_loops == ["Allgather", "ReduceScatter", "Allgather", "ReduceScatter"], output
    assert len(re.findall(r"\[rank 0\] +Communication \d+ \(type=", output)) == 4, output


def test_transformer_layer_under_torchrun():
    run_sharded([sys.executable, "-m", "hostir.torchrun",
                 "--standalone", "--nproc_per_node=2", str(LAYER)])


def test_transformer_layer_under_mpirun():
    run_sharded(mpirun_command(LAYER))
