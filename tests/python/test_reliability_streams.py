"""Issue 22, the stream workers seen from Python: after a stream timeout makes
execute raise, no hostir thread writes into the caller's output (item 6);
a worker thread that cannot start is a hostir.Error and the definition runs
again afterwards (item 7). The C++ side: tests/cpp/reliability/
worker_failure_test.cpp."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import hostir

# The stream timeout is read from the environment once per process, so the
# timed-out run happens in a process of its own. Its segment (12
# transcendental steps over 1500 x 1500 elements, tens of milliseconds) is
# still running when the 1 ms timeout fires; every step's rows are split in 2
# over a Stream axis, so the whole chain runs in one stream loop on worker
# streams that the host waits for (work on the caller's stream alone runs
# inline, with no wait to time out: a split on the last step only left the
# first eleven there, and the run often finished without timing out).
_TIMED_OUT_RUN = textwrap.dedent("""
    import time
    import torch
    import hostir

    with hostir.FusionDefinition() as fd:
        value = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        for step in range(12):
            value = fd.ops.exp(fd.ops.neg(value)) if step % 2 == 0 else fd.ops.sigmoid(value)
            fd.sched.split(value, 0, 2, inner_split=False)
            fd.sched.parallelize(value, 0, hostir.ParallelType.Stream)
        fd.add_output(value)
    x = torch.randn(1500, 1500)
    out = torch.zeros(1500, 1500)
    try:
        fd.execute([x], output=[out])
    except hostir.Error as error:
        print("raised:", str(error).splitlines()[0], flush=True)
    else:
        print("execute did not time out")
        raise SystemExit(2)
    when_raised = out.clone()
    time.sleep(0.5)
    print("unchanged" if torch.equal(out, when_raised) else "written after the raise")
""")


def test_no_thread_writes_into_the_output_after_a_timed_out_execute():
    environment = dict(os.environ, HOSTIR_STREAM_TIMEOUT_S="0.001")
    result = subprocess.run([sys.executable, "-c", _TIMED_OUT_RUN], env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("raised: timed out"), result.stdout
    assert lines[-1] == "unchanged", result.stdout


def _stream_split(cache):
    """relu(x) * 2 over a Stream axis of 4 chunks: a worker per chunk's
    stream beside the caller's."""
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        out = fd.ops.relu(x) * 2.0
        fd.add_output(out)
        fd.sched.split(out, 0, 4, inner_split=False)
        fd.sched.parallelize(out, 0, hostir.ParallelType.Stream)
    return fd


@pytest.fixture
def worker_starts():
    """hostir._C._testing.limit_worker_starts, lifted however the test ends."""
    yield hostir._C._testing.limit_worker_starts
    hostir._C._testing.limit_worker_starts(None)


def test_a_worker_that_cannot_start_is_an_error(cache, worker_starts):
    # Before: SIGSEGV in the run's error path (number_of_streams=1000 under
    # `ulimit -u 500`). The hook makes the third start fail as a refused
    # pthread_create does (a real thread limit does not bind root).
    fd = _stream_split(cache)
    x = torch.randn(8, 5)
    worker_starts(2)
    with pytest.raises(hostir.Error, match="^cannot start the worker thread of stream") as raised:
        fd.execute([x], number_of_streams=1000)
    assert "thread limit" in str(raised.value)
    assert "number_of_streams" in str(raised.value)
    worker_starts(None)
    (out,) = fd.execute([x], number_of_streams=1000)
    torch.testing.assert_close(out, torch.relu(x) * 2.0)
