"""A job only its own ranks can join (issue 38, item 6; docs/multidevice.md,
"Who can join a job"): a local job listens on nothing but loopback, and a
job with a HOSTIR_JOB_SECRET ignores a stranger who reaches its store."""

import datetime
import os
import pathlib
import re
import socket
import subprocess
import sys
import time

import pytest
import torch.distributed

import hostir
from conftest import build_dir

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE / "job_access_script.py"
SECRET = "0123456789abcdef-test-job-secret"


def _environment(**extra):
    env = dict(os.environ, OMP_NUM_THREADS="1", HOSTIR_COMM_TIMEOUT_S="30")
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1]), str(HERE)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "HOSTIR_STORE_FILE",
                 "HOSTIR_JOB_SECRET", "MASTER_ADDR", "MASTER_PORT"):
        if name not in extra:
            env.pop(name, None)
    return env


def _is_loopback(address):
    return address.startswith("127.") or address == "[0000:0000:0000:0000:0000:0000:0000:0001]"


def test_a_local_job_listens_on_loopback_only(tmp_path):
    # Before: rank 0 hosted a TCPStore on 0.0.0.0:MASTER_PORT for the whole job.
    result = subprocess.run(
        [str(build_dir() / "tools" / "hostir"), "launch", "-n", "2", "--", sys.executable,
         str(SCRIPT)], env=_environment(TMPDIR=str(tmp_path)), capture_output=True, text=True,
        timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "rank 0 of 2: OK" in output and "rank 1 of 2: OK" in output, output
    listening = [line.split("listening: ")[1] for line in output.splitlines()
                 if "listening: " in line]
    assert all(_is_loopback(address.rsplit(":", 1)[0]) for address in listening), output
    # The ranks met in a file in a folder only this user could enter, gone after the job.
    assert output.count("store folder mode: 0o700") == 2, output
    assert list(tmp_path.iterdir()) == []


def _start_rank(rank, port, secret, timeout_s=30):
    extra = dict(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE="2",
                 MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                 HOSTIR_COMM_TIMEOUT_S=str(timeout_s))
    if secret is not None:
        extra["HOSTIR_JOB_SECRET"] = secret
    return subprocess.Popen([sys.executable, str(SCRIPT)], env=_environment(**extra),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_until_listening(port, process):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"rank 0 did not listen on port {port}")


def _stranger(port):
    """Someone who reaches the port: writes the keys a job without a secret
    reads (every rank's target), sends bytes that are no request at all,
    and then joins as the job's missing worker, so rank 0 stops waiting for
    the real one and reads the keys."""
    timeout = datetime.timedelta(seconds=10)
    writer = torch.distributed.TCPStore("127.0.0.1", port, None, False, timeout,
                                        wait_for_workers=False)
    for rank in range(2):
        writer.set(f"hostir/target/{rank}", "not a target")
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(b"\xff" * 64)
    joiner = torch.distributed.TCPStore("127.0.0.1", port, 2, False, timeout,
                                        wait_for_workers=True)
    return writer, joiner


def _run_with_a_stranger(port, secret, timeout_s=30):
    rank0 = _start_rank(0, port, secret, timeout_s)
    try:
        _wait_until_listening(port, rank0)
        stranger = _stranger(port)
        rank1 = _start_rank(1, port, secret, timeout_s)
        outputs = [rank.communicate(timeout=120)[0] for rank in (rank0, rank1)]
        del stranger
        return [rank0.returncode, rank1.returncode], outputs
    finally:
        if rank0.poll() is None:
            rank0.kill()


def test_a_stranger_without_the_secret_is_ignored_and_the_job_finishes(free_port):
    codes, outputs = _run_with_a_stranger(free_port, SECRET)
    assert codes == [0, 0], outputs
    assert "rank 0 of 2: OK" in outputs[0] and "rank 1 of 2: OK" in outputs[1], outputs


def test_without_a_secret_the_strangers_keys_reach_the_job(free_port):
    # What the secret stops: the same stranger breaks a job that has none.
    codes, outputs = _run_with_a_stranger(free_port, None, timeout_s=5)
    assert codes != [0, 0], outputs
    assert "not a target" in "".join(outputs), outputs


def test_a_rank_with_another_secret_cannot_join(free_port):
    ranks = [_start_rank(0, free_port, SECRET, timeout_s=3),
             _start_rank(1, free_port, SECRET[::-1], timeout_s=3)]
    outputs = [rank.communicate(timeout=120)[0] for rank in ranks]
    assert all(rank.returncode != 0 for rank in ranks), outputs
    assert "every rank must carry the same" in outputs[0], outputs


@pytest.mark.parametrize("variable, value, message", [
    ("HOSTIR_JOB_SECRET", "short", r"HOSTIR_JOB_SECRET has 5 characters; give at least 16"),
    ("HOSTIR_STORE_FILE", "/tmp/store", r"HOSTIR_STORE_FILE=/tmp/store: its folder '/tmp' is "
                                        r"open to other users"),
])
def test_a_weak_secret_or_an_open_store_folder_is_refused(free_port, variable, value, message):
    result = subprocess.run(
        [str(build_dir() / "tools" / "hostir"), "launch", "-n", "2", "--port", str(free_port),
         "--", "/usr/bin/env", f"{variable}={value}", sys.executable, str(SCRIPT)],
        env=_environment(HOSTIR_COMM_TIMEOUT_S="5"), capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert re.search(message, result.stdout + result.stderr), result.stderr
