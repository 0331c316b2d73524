"""Compiled kernels from Python: a FusionCache restored in a second process
runs its first call from the disk kernel cache without compiling, and
compiled results match the ATen interpreter (HOSTIR_KERNELS=aten)."""

import json
import os
import subprocess
import sys

import torch

import hostir

SCRIPT = r"""
import json, sys, torch, hostir
path, mode = sys.argv[1], sys.argv[2]
cache = hostir.FusionCache() if mode == "first" else hostir.FusionCache.deserialize(path)
with hostir.FusionDefinition(cache) as fd:
    x = fd.define_tensor(2)
    y = fd.ops.sigmoid(fd.ops.add(fd.ops.mul(x, 0.5), 1.0))
    fd.add_output(fd.ops.sum(y, [1]))
torch.manual_seed(0)
inp = torch.randn(9, 31)
(out,) = fd.execute([inp])
ok = torch.allclose(out, torch.sigmoid(inp * 0.5 + 1.0).sum(1), rtol=1e-5, atol=1e-5)
if mode == "first":
    cache.serialize(path)
stats = hostir._C.kernel_cache_stats()
print(json.dumps({"hit": fd.cache_hit, "ok": bool(ok), "compiled": stats["compiled"],
                  "loaded": stats["loaded_from_disk"]}))
"""


def run_script(tmp_path, mode, extra_env=None):
    env = dict(os.environ, HOSTIR_KERNEL_CACHE_DIR=str(tmp_path / "kernels"))
    env.update(extra_env or {})
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "cache.bin"), mode],
        env=env, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_restored_cache_runs_first_call_without_compiling(tmp_path):
    first = run_script(tmp_path, "first")
    assert first["ok"] and not first["hit"]
    assert first["compiled"] >= 1 and first["loaded"] == 0
    second = run_script(tmp_path, "second")
    assert second["ok"] and second["hit"]
    assert second["compiled"] == 0 and second["loaded"] >= 1


def test_aten_mode_compiles_nothing(tmp_path):
    result = run_script(tmp_path, "first", {"HOSTIR_KERNELS": "aten"})
    assert result["ok"] and result["compiled"] == 0 and result["loaded"] == 0


def test_stats_name_the_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("HOSTIR_KERNEL_CACHE_DIR", str(tmp_path))
    assert hostir._C.kernel_cache_stats()["directory"].startswith(str(tmp_path))


def test_dump_kernels_prints_each_kernel_once(tmp_path):
    # HOSTIR_DUMP=kernels is a valid dump stage on every path (the pass
    # pipeline validates HOSTIR_DUMP before lowering) and prints the loop
    # nest of a kernel once, however often it runs.
    env = dict(os.environ, HOSTIR_KERNEL_CACHE_DIR=str(tmp_path / "kernels"),
               HOSTIR_DUMP="kernels")
    script = r"""
import torch, hostir
with hostir.FusionDefinition() as fd:
    x = fd.define_tensor(2)
    e = fd.ops.exp(fd.ops.sub(x, fd.ops.broadcast(fd.ops.max(x, [1]), [False, True])))
    fd.add_output(fd.ops.div(e, fd.ops.broadcast(fd.ops.sum(e, [1]), [False, True])))
for _ in range(3):
    (out,) = fd.execute([torch.randn(8, 40)])
assert torch.allclose(out.sum(1), torch.ones(8), atol=1e-5)
"""
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    assert text.count("produce out0") == 1, text


GEMM_EPILOGUE_SCRIPT = r"""
import torch, hostir
with hostir.FusionDefinition() as fd:
    x = fd.define_tensor(2)
    w = fd.define_tensor(2)
    r = fd.define_tensor(2)
    fd.add_output(fd.ops.add(fd.ops.gelu(fd.ops.linear(x, w)), r))
torch.manual_seed(0)
x, w, r = torch.randn(33, 64), torch.randn(80, 64), torch.randn(33, 80)
for _ in range(2):
    (out,) = fd.execute([x, w, r])
expected = torch.nn.functional.gelu(torch.nn.functional.linear(x, w)) + r
assert torch.allclose(out, expected, rtol=1e-4, atol=1e-5), (out - expected).abs().max()
"""


def test_a_linear_and_its_gelu_and_add_run_as_one_gemm_from_python(tmp_path):
    # The gemm_epilogues pass folds the linear into the HostUnit of its GELU
    # and residual add (printed as the unit's fusion, not as a top-level op),
    # and every mode computes what torch does.
    for extra in ({}, {"HOSTIR_DISABLE_PASS": "gemm_epilogues"}, {"HOSTIR_KERNELS": "aten"},
                  {"HOSTIR_GEMM": "aten"}):
        env = dict(os.environ, HOSTIR_KERNEL_CACHE_DIR=str(tmp_path / "kernels"),
                   HOSTIR_DUMP="host_ir", **extra)
        result = subprocess.run([sys.executable, "-c", GEMM_EPILOGUE_SCRIPT], env=env,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (extra, result.stderr)
        program, _, units = result.stdout.partition("\nHostUnit ")
        folded = "gemm_epilogues" not in extra.get("HOSTIR_DISABLE_PASS", "")
        assert ("= linear(" in program) != folded, (extra, result.stdout)
        assert ("= linear(" in units) == folded, (extra, result.stdout)


def test_execution_reports_the_kernel_and_a_run_time_fall_back_to_aten():
    # fd.execution() names each segment's engine; after runs, what they ran
    # on: the kernel for a normal input, ATen with the reason for an empty
    # one, which the kernel does not take.
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(2)
        fd.add_output(fd.ops.exp(fd.ops.add(x, 1.0)))
    inp = torch.randn(3, 4)
    (out,) = fd.execute([inp])
    assert torch.allclose(out, torch.exp(inp + 1.0))
    report = fd.execution()
    assert ": compiled kernel " in report and "; ran it 1 time" in report, report
    assert "fell back" not in report, report
    (empty,) = fd.execute([torch.randn(0, 4)])
    assert empty.shape == (0, 4)
    report = fd.execution()
    assert "; ran it 1 time, fell back to ATen 1 time: the input T" in report, report
    assert "is empty (sizes [0, 4])" in report, report


def test_the_ops_added_for_nvfusers_suite_run_as_one_compiled_kernel():
    # signbit, nextafter, fmod, gcd, the bitwise ops and the shifts have
    # Halide lowerings: a definition mixing them is one kernel, no ATen
    # fallback, with torch's results.
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(1, dtype=hostir.DataType.Float)
        i = fd.define_tensor(1, dtype=hostir.DataType.Int)
        fd.add_output(fd.ops.add(fd.ops.abs(x), fd.ops.fmod(x, 1.5)))
        fd.add_output(fd.ops.signbit(fd.ops.nextafter(x, 0.0)))
        fd.add_output(fd.ops.bitwise_xor(fd.ops.gcd(i, 12), fd.ops.bitwise_left_shift(i, 2)))
    x_in = torch.tensor([-0.0, 0.0, -2.5, 3.25, float("nan"), float("-inf")])
    i_in = torch.tensor([0, -18, 7, 36, -1, 1 << 40])
    abs_fmod, sign, bits = fd.execute([x_in, i_in])
    assert torch.allclose(abs_fmod, torch.abs(x_in) + torch.fmod(x_in, 1.5), equal_nan=True)
    assert torch.equal(sign, torch.signbit(torch.nextafter(x_in, torch.tensor(0.0))))
    assert torch.equal(bits, torch.gcd(i_in, torch.tensor(12)) ^ (i_in << 2))
    report = fd.execution()
    assert ": compiled kernel " in report and "fell back" not in report, report
    assert "ATen" not in report, report


def test_sin_and_cos_compile_and_refuse_arguments_of_2_to_30_or_more():
    # Compiled (vector_trig.h), within 1 ulp of the float64 truth here; an
    # argument of 2^30 or more makes the kernel refuse its data and the
    # segment run through ATen, which says so (docs/kernels.md).
    for op in ("sin", "cos"):
        with hostir.FusionDefinition() as fd:
            x = fd.define_tensor(1, dtype=hostir.DataType.Float)
            fd.add_output(fd.ops.add(getattr(fd.ops, op)(x), fd.ops.mul(x, 2.0)))
        x_in = torch.tensor([-0.0, 0.0, -2.5, 3.25, 1e6, float("nan"), float("-inf")])
        (out,) = fd.execute([x_in])
        truth = getattr(torch, op)(x_in.double()).float() + x_in * 2.0
        assert torch.allclose(out, truth, rtol=1e-6, atol=1e-6, equal_nan=True)
        report = fd.execution()
        assert ": compiled kernel " in report and "fell back" not in report, report
        big = torch.tensor([1.0, 3e38])
        (out,) = fd.execute([big])
        assert torch.equal(out, getattr(torch, op)(big) + big * 2.0)
        report = fd.execution()
        assert f"the kernel refused its data: {op}: an argument of magnitude 2^30" in report, report
