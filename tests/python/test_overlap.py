"""The automatic stream splits from Python (issue 36): a sharded definition
written with shardings only is pipelined at its first execute where the link
is slow (by default: no call needed), left as written where it is fast or
with HOSTIR_OVERLAP=off, and the choice is in fd.overlap_report()."""

import os
import pathlib
import subprocess
import sys

import pytest

import hostir
from conftest import build_dir

HERE = pathlib.Path(__file__).resolve().parent


def run(expect, link_model, overlap=None):
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    env = dict(os.environ, HOSTIR_COMM_TIMEOUT_S="60", OMP_NUM_THREADS="1",
               HOSTIR_LINK_MODEL=link_model)
    env.pop("HOSTIR_OVERLAP", None)
    if overlap is not None:
        env["HOSTIR_OVERLAP"] = overlap
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1]), str(HERE)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run([str(launcher), "launch", "-n", "2", "--", sys.executable,
                             str(HERE / "overlap_script.py"), expect],
                            env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for rank in range(2):
        assert f"rank {rank} of 2: OK" in output, output


def test_a_slow_link_pipelines_a_definition_written_with_shardings_only():
    run("pipelined", "64:0")  # 64 MB/s: the allgather takes longer than the GEMM


def test_a_fast_link_leaves_it_as_written():
    run("declined", "1000000:0")


def test_hostir_overlap_off_keeps_the_program_as_written():
    run("off", "64:0", overlap="off")


def test_the_switch_takes_a_bool():
    with pytest.raises(hostir.Error, match="enabled must be True or False"):
        with hostir.FusionDefinition() as fd:
            x = fd.define_tensor(shape=[-1], contiguity=[True])
            fd.sched.automatic_stream_splits("yes")
            fd.add_output(x)
