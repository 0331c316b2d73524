"""Faults during training: a rank that dies or hangs in the middle of a
backward (training_fault_script.py on 2 ranks), and the opt-in NaN/Inf check
(hostir.autograd.detect_anomaly, HOSTIR_CHECK_FINITE)."""

import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest
import torch

import hostir
from conftest import build_dir
from hostir.autograd import Differentiable, detect_anomaly

HERE = pathlib.Path(__file__).resolve().parent
TIMEOUT_S = 3  # HOSTIR_COMM_TIMEOUT_S of the ranks


def environment(fault, pid_dir):
    env = dict(os.environ, HOSTIR_COMM_TIMEOUT_S=str(TIMEOUT_S), OMP_NUM_THREADS="1",
               HOSTIR_TEST_FAULT=fault, HOSTIR_TEST_PID_DIR=str(pid_dir))
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1])]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for init is gone too
        return stat.read().split(")")[-1].split()[0] != "Z"


def assert_no_rank_left(pid_dir):
    pids = [int(p.read_text()) for p in pid_dir.glob("rank*.pid")]
    assert len(pids) == 2, pids
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"ranks left running: {left}"


def assert_survivor_raised(output, fault):
    match = re.search(r"rank 0: hostir\.Error after ([0-9.]+) s: (.*)", output)
    assert match, output
    assert float(match.group(1)) <= TIMEOUT_S + 10, output
    message = match.group(2)
    if fault in ("stop", "sleep"):
        assert f"did not complete within the communication timeout of {TIMEOUT_S}" in message, \
            output
    else:
        assert "a member of its team may have exited" in message or \
            "did not complete within the communication timeout" in message, output
    # The optimizer never ran: the weights are those before the failed step.
    assert "rank 0: weights equal those before step 2: True" in output, output
    assert "rank 1: hostir.Error" not in output, output


def script_command(at="collective"):
    return [sys.executable, str(HERE / "training_fault_script.py"), "--at", at]


@pytest.mark.parametrize("fault,at", [("exit", "between"), ("exit", "collective"),
                                      ("stop", "collective"), ("sleep", "collective")])
def test_a_rank_that_dies_or_hangs_in_a_backward_ends_the_job(tmp_path, fault, at):
    """Under `hostir launch`: rank 1 leaves silently or hangs between the
    two layers' backward programs or at the second collective of layer 0's
    backward program; rank 0 raises hostir.Error within the communication
    timeout + 10 s with its weights unchanged, the launcher ends the hung
    rank and exits non-zero, no rank is left."""
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    begin = time.monotonic()
    result = subprocess.run([str(launcher), "launch", "-n", "2", "--grace-period", "1", "--"]
                            + script_command(at), env=environment(fault, tmp_path),
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "rank 0: step 1 done" in output and "rank 1: step 1 done" in output, output
    assert_survivor_raised(output, fault)
    assert_no_rank_left(tmp_path)
    assert time.monotonic() - begin < 120


def test_a_rank_killed_in_a_backward_is_reported_by_the_launcher(tmp_path):
    """Under `hostir launch`, a SIGKILL is seen by the launcher at once: it
    names the rank and the signal, ends the other rank and exits non-zero."""
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    result = subprocess.run([str(launcher), "launch", "-n", "2", "--grace-period", "1", "--"]
                            + script_command(), env=environment("kill", tmp_path),
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "rank 1 was killed by signal 9" in output, output
    assert "rank 0: weights equal those before step 2: False" not in output, output
    assert_no_rank_left(tmp_path)


def test_a_rank_killed_in_a_backward_without_a_launcher(tmp_path, free_port):
    """Ranks started by hand (no launcher to end the job): rank 1's SIGKILL
    closes its connections, rank 0 raises hostir.Error by itself, its
    weights unchanged, and exits."""
    processes = []
    for rank in range(2):
        env = environment("kill", tmp_path)
        env.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port))
        processes.append(subprocess.Popen(script_command(), env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
    try:
        outputs = [p.communicate(timeout=120)[0] for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
    output = "\n".join(outputs)
    assert processes[1].returncode == -signal.SIGKILL, output
    assert processes[0].returncode == 3, output
    assert_survivor_raised(output, "kill")


# --- the opt-in NaN/Inf check -------------------------------------------------------


def test_detect_anomaly_on_two_ranks_names_the_gemm_that_overflowed(tmp_path):
    """Rank 1's shard of wq holds 3e38 in step 2, run under detect_anomaly:
    rank 1 raises naming the matmul that made Inf from finite inputs; rank 0
    ends too (its collective with rank 1 fails, or the launcher stops it)."""
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    result = subprocess.run([str(launcher), "launch", "-n", "2", "--grace-period", "1", "--"]
                            + script_command("between"), env=environment("nan", tmp_path),
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    match = re.search(r"rank 1: hostir\.Error after [0-9.]+ s: (.*)", output)
    assert match, output
    message = match.group(1)
    assert message.startswith("non-finite values (HOSTIR_CHECK_FINITE): "), output
    assert "Inf of" in message and "(its inputs are all finite: it produced them)" in message, \
        output
    assert "= matmul( " in message, output
    assert "in the forward program" in message, output
    assert_no_rank_left(tmp_path)


def sqrt_exp():
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(1)
        fd.add_output(fd.ops.exp(fd.ops.sqrt(x)))
    return Differentiable(fd)


def test_detect_anomaly_names_the_segment_that_made_a_nan_in_the_forward():
    program = sqrt_exp()
    assert torch.isnan(program(torch.tensor([-1.0, 1.0]))).any()  # off: nothing checked
    with detect_anomaly():
        with pytest.raises(hostir.Error) as caught:
            program(torch.tensor([-1.0, 1.0]))
    message = str(caught.value)
    assert message.startswith("non-finite values (HOSTIR_CHECK_FINITE): ")
    assert "holds 1 NaN and 0 Inf of 2 elements (its inputs are all finite: it produced them)" \
        in message
    assert "= sqrt( T0_g_float" in message  # the segment's ops in IR notation
    assert "in the forward program of a hostir.autograd.Differentiable" in message
    assert program(torch.tensor([-1.0, 1.0])) is not None  # off again after the block


def test_detect_anomaly_names_the_backward_segment_that_made_an_inf():
    program = sqrt_exp()
    x = torch.tensor([0.0, 1.0], requires_grad=True)  # sqrt's grad at 0 is inf
    with detect_anomaly():
        y = program(x)  # the forward is finite
        with pytest.raises(hostir.Error) as caught:
            y.sum().backward()
    message = str(caught.value)
    assert "holds 0 NaN and 1 Inf of 2 elements (its inputs are all finite" in message, message
    assert "= div( " in message, message
    assert "in the backward program" in message, message


def test_detect_anomaly_says_when_a_nan_came_in_from_outside():
    program = sqrt_exp()
    with detect_anomaly():
        with pytest.raises(hostir.Error, match=r"its input T0_g_float\[iS0\{i0\}\] already held "
                                               r"1 NaN and 0 Inf of 2 elements"):
            program(torch.tensor([float("nan"), 1.0]))


@pytest.mark.parametrize("value,expected", [("1", "non-finite values"), ("0", None),
                                            ("yes", "HOSTIR_CHECK_FINITE='yes' is not valid")])
def test_check_finite_environment_variable(value, expected):
    code = ("import torch, hostir\n"
            "from hostir.autograd import Differentiable\n"
            "with hostir.FusionDefinition() as fd:\n"
            "    x = fd.define_tensor(1)\n"
            "    fd.add_output(fd.ops.log(x))\n"
            "try:\n"
            "    print(Differentiable(fd)(torch.tensor([-1.0])))\n"
            "except hostir.Error as error:\n"
            "    print('ERROR', error)\n")
    env = dict(os.environ, HOSTIR_CHECK_FINITE=value)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1])]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=60)
    output = result.stdout + result.stderr
    if expected is None:
        assert "tensor([nan])" in output, output
    else:
        assert expected in output, output
