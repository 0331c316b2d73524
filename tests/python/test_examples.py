"""examples/*.py run and check themselves (they assert against torch)."""

import json
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
    # python_mlp.py prints "[rank 1] max |y - torch|", transformer_layer.py
    # "[rank 1] check <program> against single-process torch: max |y - torch|".
    assert re.search(r"\[rank 1\] (check [^:]*: )?max \|y - torch\|", output), output
    assert "axes={<ParallelType.DIDx: 2>: 0}" in output


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
    # The default --chunks auto, then the unchunked layer, each checked and timed.
    assert re.search(r"auto chunks: \d+ \(predicted", result.stdout), result.stdout
    for program in (r"pipelined, auto \(\d+ chunks\)", "unchunked"):
        assert re.search(rf"\[rank 0\] check {program} against single-process torch: "
                         rf"max \|y - torch\| = \S+ OK", result.stdout), result.stdout
        assert re.search(rf"\n  {program} +[\d.]+ ms +[\d.]+ x unchunked", result.stdout)
    assert result.stdout.rstrip().endswith("[rank 0] PASSED")


def test_transformer_layer_two_ranks_with_both_halves_pipelined():
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    command = [str(launcher), "launch", "-n", "2", "--", sys.executable, str(LAYER), "--chunks", "2"]
    result = subprocess.run(command, env=environment(), capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[rank 1] [rank 1] check pipelined (2 chunks) against single-process torch" in output
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


def test_transformer_layer_with_sp_layers_flags(tmp_path):
    # issue 19 item 4: --chunks counts and auto, --runs, --baselines, --trace
    # and --json, as hostir sp-layer has them.
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    command = [str(launcher), "launch", "-n", "2", "--", sys.executable, str(LAYER),
               "--tokens", "64", "--hidden", "32", "--heads", "4", "--ffn", "64",
               "--chunks", "2,auto", "--runs", "2", "--baselines",
               "--trace", str(tmp_path / "layer"), "--json", str(tmp_path / "layer.json")]
    result = subprocess.run(command, env=environment(), capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[rank 0] PASSED" in output and "[rank 1] PASSED" in output
    assert "time (median of 2 runs, link: loopback):" in output
    for row in ("communication only", "communication only, 2 chunks", "compute only"):
        assert re.search(rf"\[rank 0\]   {row} +[\d.]+ ms", output), output
    report = json.loads((tmp_path / "layer.json").read_text())
    names = [(program["name"], program.get("chunks")) for program in report["programs"]]
    assert names[:3] == [("pipelined", 2), ("pipelined-auto", report["auto"]["chunks"]),
                         ("unchunked", 1)]
    # The collectives alone as the unchunked and each chunked program move them.
    chunked = sorted({2, report["auto"]["chunks"]} - {1})
    assert names[3:] == ([("comm-only", None)] + [("comm-only", c) for c in chunked]
                         + [("compute-only", None)])
    # A program's ideal gain is measured against its own communication alone
    # (the 2-chunk program: the 2-chunk comm-only), where the run printed one.
    medians = {name: program["median_ms"] for name, program in zip(names, report["programs"])}
    unchunked = medians[("unchunked", 1)]
    ideal = max(medians[("comm-only", 2)], medians[("compute-only", None)])
    printed = re.search(r"fraction of the ideal gain, pipelined \(2 chunks\): (-?[\d.]+)", output)
    if unchunked > ideal:
        assert printed, output
        expected = (unchunked - medians[("pipelined", 2)]) / (unchunked - ideal)
        assert abs(float(printed.group(1)) - expected) < 0.006, (printed.group(0), expected)
    else:
        assert not printed, output
    assert all(len(program["runs_ms"]) == 2 for program in report["programs"])
    assert all(program["check"] for program in report["programs"][:3])
    assert report["auto"]["chunks"] in (1, 2, 4, 8, 16) and report["config"]["heads"] == 4
    # Each rank traced one run of the first program (2 chunks): its collectives too.
    for rank in range(2):
        events = json.loads((tmp_path / f"layer.rank{rank}.json").read_text())["traceEvents"]
        assert {event["pid"] for event in events if event["ph"] == "X"} == {rank}
        assert any(event.get("cat") == "communication" for event in events)


@pytest.mark.parametrize("args, message", [
    (["--chunks", "3"], r"--chunks 3 must divide each rank's 128 token rows"),
    (["--chunks", "2,x"], r"--chunks '2,x': 'x' is neither a positive count nor auto"),
    (["--heads", "3"], r"--hidden \(64\) must divide by --heads \(3\)"),
    (["--runs", "0"], r"--runs 0 must be at least 1"),
    (["--json", "/nonexistent/folder/r.json"], r"--json /nonexistent/folder/r.json: its folder"),
])
def test_transformer_layer_bad_flags(args, message):
    result = subprocess.run([sys.executable, str(LAYER), *args], env=environment(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and re.search(message, result.stderr), result.stderr


def test_transformer_layer_on_four_ranks():
    # issue 19: the layer runs from Python on 1, 2 and 4 ranks (4 heads, one
    # per rank) and every rank matches the reference, pipelined and not.
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    command = [str(launcher), "launch", "-n", "4", "--", sys.executable, str(LAYER),
               "--tokens", "64", "--chunks", "2", "--runs", "1"]
    result = subprocess.run(command, env=environment(), capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for rank in range(4):
        for program in ("pipelined (2 chunks)", "unchunked"):
            assert re.search(rf"\[rank {rank}\] check {re.escape(program)} against "
                             rf"single-process torch: max \|y - torch\| = \S+ OK", output), output
        assert f"[rank {rank}] PASSED" in output
