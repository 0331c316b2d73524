"""benchmarks/overlap/torch_sp_mlp_train.py and torch_sp_layer_train.py, the
hand-written torch.distributed training-step baselines (blocking, Megatron
async, whole-step pipelined), at tiny sizes on 2 local ranks: every rank's
output and grads of every program match single-process torch autograd, the
printed max |diff| / max |ref| are small numbers, and a deliberately wrong
grad (--corrupt) makes the run fail."""

import json
import math
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
OVERLAP = ROOT / "benchmarks" / "overlap"

MLP = ("torch_sp_mlp_train.py", ["--tokens", "64", "--hidden", "16", "--ffn", "32",
                                 "--chunks", "1,2,3,4"],
       ["y", "dx", "dw1", "dw2"])
LAYER = ("torch_sp_layer_train.py", ["--tokens", "32", "--hidden", "16", "--heads", "4",
                                     "--ffn", "32", "--chunks", "1,2,3,4,8"],
         ["y", "dx", "dln1_w", "dln1_b", "dw_qkv", "dwo", "dln2_w", "dln2_b", "dw1", "dw2"])
CHECK_LINE = re.compile(r"^\[rank (\d)\] check (\S+(?: \d+)?): max \|diff\| / max \|ref\| = "
                        r"(.*) (OK|MISMATCH in .*)$", re.M)


def run(script, sizes, tmp_path, port, *extra):
    out = tmp_path / "result.json"
    result = subprocess.run(
        [sys.executable, str(OVERLAP / script)] + sizes +
        ["--runs", "1", "--warmup", "0", "--port", str(port), "--timeout", "120",
         "--json", str(out)] + list(extra),
        capture_output=True, text=True, timeout=240)
    return result, out


def checks_of(output):
    """{(rank, program): ({tensor: ratio}, ok)} of the printed check lines."""
    checks = {}
    for rank, program, ratios, verdict in CHECK_LINE.findall(output):
        values = ratios.split()
        checks[(int(rank), program)] = ({k: float(v) for k, v in zip(values[::2], values[1::2])},
                                        verdict == "OK")
    return checks


@pytest.mark.parametrize("script,sizes,tensors", [MLP, LAYER], ids=["mlp", "layer"])
def test_train_baseline_two_ranks(tmp_path, free_port, script, sizes, tensors):
    # The MLP's run also times its pipelined step's collectives alone, and
    # its ops one by one.
    extra = ["--comm-only", "--op-times"] if script == MLP[0] else []
    result, out = run(script, sizes, tmp_path, free_port, *extra)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "check: PASSED" in result.stdout, output
    chunks = [1, 2, 4, 8] if script == LAYER[0] else [1, 2, 3, 4]
    if script == LAYER[0]:
        assert "skipping chunk counts [3]" in result.stderr, output
    programs = ["blocking", "async"] + [f"{s} {c}" for c in chunks
                                        for s in ("pipelined", "pipelined-keep")]
    checks = checks_of(result.stdout)
    assert sorted(checks) == sorted((r, p) for r in (0, 1) for p in programs), output
    for (rank, program), (ratios, ok) in checks.items():
        assert ok, (rank, program, output)
        assert list(ratios) == tensors
        # A real comparison: small, finite, and not all exactly 0 (the
        # pipelined grads are summed over chunks in another order).
        assert all(0 <= r < 1e-5 for r in ratios.values()), (rank, program, ratios)
        if program.startswith("pipelined") and not program.endswith(" 1"):
            assert any(r > 0 for r in ratios.values()), (rank, program, ratios)
    report = json.loads(out.read_text())
    assert report["check"] is True and report["max_rel_diff"] < 1e-5
    assert report["tolerance"] == 1e-4
    for key in ("blocking_ms", "async_ms", "pipelined_ms", "pipelined_keep_ms"):
        assert math.isfinite(report[key]) and report[key] > 0
    assert [(p["schedule"], p["chunks"]) for p in report["pipelined"]] == \
        [(s, c) for c in chunks for s in ("pipelined", "pipelined-keep")]
    assert all(p["check"] and sorted(p["rel_diff"]) == sorted(tensors)
               for p in report["pipelined"])
    assert report["chunks"] in chunks
    if script == MLP[0]:
        assert [c["chunks"] for c in report["comm_only"]] == chunks
        assert all(math.isfinite(c["median_ms"]) and c["median_ms"] > 0
                   for c in report["comm_only"])
        assert re.findall(r"^comm-only +(\d+) ", result.stdout, re.M) == [str(c) for c in chunks]
        # --op-times: per chunk count, every GEMM of the step timed (ms > 0).
        tables = re.split(r"^ops of the pipelined step \((\d+) chunks\)[^\n]*\n", result.stdout,
                          flags=re.M)
        assert [int(c) for c in tables[1::2]] == chunks, output
        for table in tables[2::2]:
            times = dict(re.findall(r"^  (\S.*?) +([0-9.]+)$", table, re.M))
            gemms = [f"forward GEMM{i}" for i in (1, 2)] + [
                f"backward {kind} GEMM{i}" for kind in ("dgrad", "wgrad") for i in (1, 2)]
            assert all(float(times[g]) > 0 for g in gemms), table
    else:
        assert "comm_only" not in report
    assert report["config"]["ranks"] == 2 and report["config"]["threads"] == 1


@pytest.mark.parametrize("script,sizes,tensors,corrupt",
                         [MLP + ("dw1",), LAYER + ("dw_qkv",), LAYER + ("dln2_b",)],
                         ids=["mlp-dw1", "layer-dw_qkv", "layer-dln2_b"])
def test_train_baseline_catches_a_wrong_grad(tmp_path, free_port, script, sizes, tensors,
                                             corrupt):
    # One element of one grad off by 10x the tolerance, in every program.
    result, out = run(script, sizes[:-1] + ["2"], tmp_path, free_port, "--corrupt", corrupt)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "check: FAILED" in result.stdout, output
    checks = checks_of(result.stdout)
    assert len(checks) == 2 * 4, output       # blocking, async, pipelined 2, pipelined-keep 2
    for (rank, program), (ratios, ok) in checks.items():
        assert not ok
        assert ratios[corrupt] == pytest.approx(1e-3, rel=0.05)
        assert all(r < 1e-5 for k, r in ratios.items() if k != corrupt)
    report = json.loads(out.read_text())
    assert report["check"] is False
