"""Run by test_overlap.py on every rank under `hostir launch`: a sharded
allgather + linear written with shardings only, which hostir's automatic
stream splits (on by default) pipeline (or not) at the first execute. The
link model comes from HOSTIR_LINK_MODEL; the script's argument says what to
expect: "pipelined", "declined", or "off" (HOSTIR_OVERLAP=off: prepared as
written). Checks every rank's shard against single-process torch and prints
"rank R of D: OK"."""

import sys

import torch

import hostir
import hostir.distributed as dist
from sharding_helpers import shard


def allgather_linear(mesh, automatic):
    """h = linear(x, w), x sharded on its rows, w on its output features:
    the rows of x are allgathered into the GEMM. No Stream split;
    automatic None: no call to the switch, the default."""
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        shard(fd, x, mesh, 0)
        shard(fd, w, mesh, 0)
        h = fd.ops.linear(x, w)
        shard(fd, h, mesh, 1)
        if automatic is not None:
            fd.sched.automatic_stream_splits(automatic)
        fd.add_output(h)
    return fd


def assert_close_to_gemm(h, expected, truth):
    """float32 GEMM results held to the float64 `truth` by torch float32's own
    error (`expected`): at most 4x it plus 1e-6 of the scale. Another engine
    or blocking (oneDNN on a packed weight, OpenBLAS on the plain one, a chunk
    of rows) sums the 256 terms in another order; torch's default float32
    tolerance (atol 1e-5) failed on 30 of 1M elements 2.9e-5 off values near
    50. A wrong row or chunk is off by the values' size."""
    torch_error = (expected.double() - truth).abs().max().item()
    error = (h.double() - truth).abs().max().item()
    allowed = 4 * torch_error + 1e-6 * (1 + truth.abs().max().item())
    assert h.shape == expected.shape and h.dtype == expected.dtype, (h.shape, h.dtype)
    assert error <= allowed, f"max error {error} from float64, more than {allowed} (torch's {torch_error})"


def main(expect):
    rank = dist.init()
    d = dist.world_size()
    mesh = hostir.DeviceMesh(list(range(d)))
    torch.manual_seed(0)  # every rank draws the same whole tensors
    # Each rank receives 1 MiB of x and runs a 0.5 GFLOP GEMM: on the link
    # model of the slow case (64 MB/s) the transfer takes longer than the
    # GEMM, so pipelining hides several milliseconds (the planner takes no
    # predicted gain under 1 ms).
    full_x, full_w = torch.randn(1024 * d, 256), torch.randn(512 * d, 256)
    inputs = [full_x.chunk(d, 0)[rank].contiguous(), full_w.chunk(d, 0)[rank].contiguous()]
    expected = torch.nn.functional.linear(full_x, full_w).chunk(d, 1)[rank]
    truth = torch.nn.functional.linear(full_x.double(), full_w.double()).chunk(d, 1)[rank]

    fd = allgather_linear(mesh, automatic=None)  # shardings only
    if expect == "off":
        assert "FOR StreamIdx" not in fd.host_ir(inputs)  # known at once
        (h,) = fd.execute(inputs)
        assert_close_to_gemm(h, expected, truth)
        assert fd.overlap_report() == ""
        print(f"rank {rank} of {d}: OK", flush=True)
        return
    try:
        fd.host_ir(inputs)
        raise AssertionError("host_ir() before the first execute should say it is not known yet")
    except hostir.Error as error:
        assert "first run" in str(error), error
    # The first execute plans (GEMM-rate probes included) and leaves torch's
    # generator as it was: scripts draw the same whole tensors on every rank
    # after it (a probe drawing from it made the ranks' draws differ).
    rng = torch.get_rng_state()
    (h,) = fd.execute(inputs)
    assert torch.equal(torch.get_rng_state(), rng), "planning drew from torch's generator"
    assert_close_to_gemm(h, expected, truth)
    report, program = fd.overlap_report(), fd.host_ir(inputs)
    if expect == "pipelined":
        assert report.startswith("pipelined, "), report
        assert "FOR StreamIdx" in program, program
    else:
        assert report.startswith("not pipelined"), report
        assert "FOR StreamIdx" not in program, program
    # A second execute runs the same program.
    (h,) = fd.execute(inputs)
    assert_close_to_gemm(h, expected, truth)
    assert fd._cdef.num_lowerings() == 1
    # A measured execute: the allgather's waits (one per chunk when
    # pipelined), what of them no compute hid, never more than the wait.
    measured = fd.measure_overlap(inputs)
    assert measured.startswith("measured on one traced run of this rank: "), measured
    (line,) = [l for l in measured.splitlines() if l.startswith("  Allgather of ")]
    waits = int(line.split(": ")[1].split(" ")[0])
    waited = float(line.split(" ms waited")[0].split(", ")[-1])
    exposed = float(line.split(" ms exposed")[0].split(", ")[-1])
    assert waits == (fd.automatic_chunks() if expect == "pipelined" else 1), measured
    assert 0 <= exposed <= waited + 0.005, measured
    assert fd.exposure_report() == measured
    assert fd._cdef.num_lowerings() == 1

    # The same math with the pass switched off: another definition (the switch
    # is part of its identity), prepared as written, its program known at once.
    written = allgather_linear(mesh, automatic=False)
    assert written._cdef is not fd._cdef
    assert "FOR StreamIdx" not in written.host_ir(inputs)
    (h,) = written.execute(inputs)
    assert_close_to_gemm(h, expected, truth)
    assert written.overlap_report() == ""
    print(f"rank {rank} of {d}: OK", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
