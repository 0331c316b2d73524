"""The overlap benchmark's link bound: benchmarks/overlap/duplex_link.py
moves bytes both ways between 2 local ranks and reports the rate it saw,
and report.py turns that into the link time of the block's bytes and the
physical bound the programs are held to."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OVERLAP = ROOT / "benchmarks" / "overlap"
sys.path.insert(0, str(OVERLAP))

import report  # noqa: E402  (benchmarks/overlap/report.py)
from conftest import build_dir  # noqa: E402


def test_duplex_link_two_local_ranks(tmp_path, free_port):
    out = tmp_path / "link.json"
    result = subprocess.run(
        [sys.executable, str(OVERLAP / "duplex_link.py"), "--bytes", "3000001", "--runs", "2",
         "--port", str(free_port), "--timeout", "60", "--json", str(out)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    link = json.loads(out.read_text())
    assert link["bytes_each_way"] == 3000001 and link["runs"] == 2
    assert len(link["duplex_runs_s"]) == 2 and link["duplex_s"] > 0 and link["simplex_s"] > 0
    # The rate is the bytes over the median time, each way.
    assert abs(link["duplex_mbit_each_way"] - 3000001 * 8 / link["duplex_s"] / 1e6) < 1e-6
    assert abs(link["simplex_mbit"] - 3000001 * 8 / link["simplex_s"] / 1e6) < 1e-6
    # The transfer's CPU, sockets' kernel time included (never more than the
    # process's two threads could spend).
    assert 0 <= link["duplex_cpu_s"] <= 2 * max(link["duplex_runs_s"]) + 0.05
    assert abs(link["duplex_cpu_fraction"] - link["duplex_cpu_s"] / link["duplex_s"]) < 1e-9


def test_duplex_link_rejects_bad_flags():
    result = subprocess.run([sys.executable, str(OVERLAP / "duplex_link.py"), "--bytes", "0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--bytes and --runs must be >= 1" in result.stderr


def link_measurement(tmp_path):
    """A raw folder holding what duplex_link.py would write at 500mbit: 100 ms
    to move 1e6 bytes each way."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "link_500mbit.json").write_text(json.dumps(
        {"bytes_each_way": 1_000_000, "duplex_s": 0.1, "duplex_mbit_each_way": 80.0,
         "simplex_mbit": 90.0}))
    return raw


def test_report_holds_the_programs_to_the_measured_link(tmp_path):
    # 100 ms to move 1e6 bytes each way; the block moves S*H*4 = 2e6 bytes each way.
    raw = link_measurement(tmp_path)
    hostir = {"programs": [{"name": "pipelined", "chunks": 4, "median_ms": 300.0},
                           {"name": "pipelined-auto", "chunks": 4, "median_ms": 320.0},
                           {"name": "unchunked", "median_ms": 400.0},
                           {"name": "comm-only", "median_ms": 250.0},
                           {"name": "comm-only", "chunks": 4, "median_ms": 210.0},
                           {"name": "compute-only", "median_ms": 150.0}]}
    summary = {}
    rows = report.link_bound_rows(str(raw), [("500mbit", report.hostir_summary(hostir),
                                              {"pipelined_ms": 260.0})],
                                  {"tokens": 500, "hidden": 1000}, summary)
    link = summary["500mbit"]["link"]
    assert abs(link["link_time_ms"] - 200.0) < 1e-9
    assert abs(link["comm_only_over_link_time"] - 1.25) < 1e-9  # the unchunked program's
    assert abs(link["comm_only_best_c_over_link_time"] - 1.05) < 1e-9  # the 4 chunks' program's
    assert link["physical_bound_ms"] == 200.0  # the link, not the 150 ms of compute
    assert abs(link["best_over_bound"] - 1.5) < 1e-9
    assert abs(link["torch_best_over_bound"] - 1.3) < 1e-9
    assert abs(link["ideal_gain_fraction_vs_bound_best"] - 0.5) < 1e-9  # (400-300)/(400-200)
    assert abs(link["ideal_gain_fraction_vs_bound_auto"] - 0.4) < 1e-9
    assert rows == [["500mbit", "80", "90", "200.0", "1.25", "1.05", "200.0", "1.50", "1.30", "0.50",
                     "0.40"]]


def test_the_layer_moves_two_blocks_of_bytes(tmp_path):
    raw = link_measurement(tmp_path)
    summary = {}
    parts = report.link_section(str(raw), [("500mbit", None, None)],
                                {"tokens": 500, "hidden": 1000}, summary, halves=2)
    assert abs(summary["500mbit"]["link"]["link_time_ms"] - 400.0) < 1e-9
    assert "2·S·H·4 bytes each way" in parts[-1]


def test_report_without_a_link_measurement_has_no_link_rows(tmp_path):
    (tmp_path / "raw").mkdir()
    assert report.link_bound_rows(str(tmp_path / "raw"), [("1gbit", None, None)],
                                  {"tokens": 8, "hidden": 8}, {}) == []
    assert report.link_section(str(tmp_path / "raw"), [("1gbit", None, None)],
                               {"tokens": 8, "hidden": 8}, {}, halves=1) == []


def test_layer_rounds_keep_each_chunk_counts_comm_only_apart():
    # sp-layer --baselines reports comm-only once in the unchunked order and
    # once per fixed chunk count; pooling rounds must not mix them.
    def round_of(plain, eight):
        return {"programs": [{"name": "comm-only", "median_ms": plain, "runs_ms": [plain]},
                             {"name": "comm-only", "chunks": 8, "median_ms": eight,
                              "runs_ms": [eight]}]}
    merged = report.merge_hostir([round_of(300.0, 200.0), round_of(310.0, 210.0)])
    summary = report.hostir_summary(merged)
    assert summary["comm"] == 305.0
    assert summary["comm_by_chunks"][8] == 205.0


def test_no_fraction_of_the_ideal_gain_above_one():
    # Issue 39: a program "faster than its bound" means the halves, timed
    # apart, were off; it is named, never printed as a fraction above 1.
    assert report.ideal_gain(1000.0, 600.0, 300.0, 500.0) == (0.8, 0.0)  # (1000-600)/(1000-500)
    fraction, below = report.ideal_gain(1000.0, 490.0, 300.0, 500.0)  # 2 % below: the noise
    assert fraction == 1.0 and abs(below - 0.02) < 1e-12
    assert report.fmt_gain(1000.0, 490.0, 300.0, 500.0) == "1.00 (at bound)"
    fraction, below = report.ideal_gain(1000.0, 400.0, 300.0, 500.0)  # 20 % below
    assert fraction is None and abs(below - 0.2) < 1e-12
    assert report.fmt_gain(1000.0, 400.0, 300.0, 500.0) == "— (20 % below bound)"
    assert report.ideal_fraction(1000.0, 400.0, 300.0, 500.0) is None
    # The serial program already at the bound: nothing to gain.
    assert report.fmt_gain(510.0, 505.0, 300.0, 500.0) == "—"
    assert report.fmt_gain(None, 505.0, 300.0, 500.0) == "—"


def test_each_program_is_held_to_its_own_chunk_counts_compute(tmp_path):
    # The unchunked program computes slower (600 ms) than the 4-chunk one
    # (250 ms); the bound of the 4-chunk program is max(link 200, 250).
    raw = link_measurement(tmp_path)
    hostir = {"programs": [{"name": "pipelined", "chunks": 4, "median_ms": 300.0},
                           {"name": "pipelined-auto", "chunks": 8, "median_ms": 320.0},
                           {"name": "unchunked", "median_ms": 700.0},
                           {"name": "comm-only", "median_ms": 250.0},
                           {"name": "compute-only", "median_ms": 600.0},
                           {"name": "compute-only", "chunks": 4, "median_ms": 250.0},
                           {"name": "compute-only", "chunks": 8, "median_ms": 220.0}]}
    summary = {}
    h = report.hostir_summary(hostir)
    assert report.own_halves(h, 4) == (250.0, 250.0)  # no comm-only at 4: the unchunked order's
    rows = report.link_bound_rows(str(raw), [("500mbit", h, {"pipelined_ms": 330.0})],
                                  {"tokens": 500, "hidden": 1000}, summary)
    link = summary["500mbit"]["link"]
    assert link["physical_bound_ms"] == 250.0 and link["physical_bound_auto_ms"] == 220.0
    assert abs(link["ideal_gain_fraction_vs_bound_best"] - 400.0 / 450.0) < 1e-12
    assert abs(link["ideal_gain_fraction_vs_bound_auto"] - 380.0 / 480.0) < 1e-12
    assert rows[0][6:] == ["250.0", "1.20", "1.32", "0.89", "0.79"]
    # Held to the unchunked program's 600 ms of compute, the 4-chunk
    # program would have run at "2.0" of the ideal gain.
    assert report.ideal_fraction(700.0, 300.0, 200.0, 600.0) is None


def test_a_blas_pinned_to_haswell_on_an_avx512_cpu_is_warned_about():
    # An inherited OPENBLAS_CORETYPE=Haswell makes torch's baseline run AVX2
    # GEMMs on an AVX-512 CPU (docs/performance.md, training steps): warned
    # there, not on the AVX2 leg (ATEN_CPU_CAPABILITY=avx2) nor when unset.
    def stderr_of(**overrides):
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY")}
        env.update(overrides)
        result = subprocess.run(
            [sys.executable, "-c",
             "import torch_harness; torch_harness.warn_if_blas_pinned_below_the_cpu()"],
            cwd=OVERLAP, env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stderr
    avx512 = " avx512f" in pathlib.Path("/proc/cpuinfo").read_text(errors="replace")
    pinned = stderr_of(OPENBLAS_CORETYPE="Haswell")
    assert ("warning: OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU" in pinned) == avx512, pinned
    assert stderr_of(OPENBLAS_CORETYPE="Haswell", ATEN_CPU_CAPABILITY="avx2") == ""
    assert stderr_of() == ""


def assert_every_harness_calls_before_its_first_rank(function):
    """Each harness that starts both sides' ranks calls the shell `function`
    on a line of its own before it starts any rank."""
    for harness, first_rank in (("overlap/run.sh", "\nlaunch()"),
                                ("overlap/train_step.sh", "\nranks()"),
                                ("shaped_network_sp_mlp.sh", "ip netns exec")):
        text = (ROOT / "benchmarks" / harness).read_text()
        call = text.find(f"\n{function}\n")
        if call < 0:
            call = text.find(f"\n{function} ")
        assert call >= 0, harness
        assert call < text.index(first_rank), harness


def test_the_harnesses_unpin_blas_on_an_avx512_cpu_outside_the_avx2_leg(tmp_path):
    # benchmarks/blas_kernels.sh (issue 39): an inherited Haswell pin is
    # dropped on an AVX-512 CPU, kept (or set) on the AVX2 leg, left alone on
    # a CPU without AVX-512; the CPU is a given cpuinfo, so both hold anywhere.
    avx512, avx2 = tmp_path / "avx512", tmp_path / "avx2"
    avx512.write_text("flags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw avx512vl\n")
    avx2.write_text("flags\t\t: fpu sse2 avx avx2 fma\n")

    def after(cpuinfo, **overrides):
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "ATEN_CPU_CAPABILITY")}
        env.update(overrides)
        result = subprocess.run(
            ["bash", "-c", "set -eu; source benchmarks/blas_kernels.sh; "
             f"blas_kernels_match_the_leg {cpuinfo}; "
             'echo "${OPENBLAS_CORETYPE-unset} ${OPENBLAS_L2_SIZE-unset}"'],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip(), result.stderr

    pinned = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512"}
    out, err = after(avx512, **pinned)
    assert out == "unset unset" and "dropped OPENBLAS_CORETYPE=Haswell" in err, err
    assert after(avx512) == ("unset unset", "")
    assert after(avx512, ATEN_CPU_CAPABILITY="avx2", **pinned) == ("Haswell 512", "")
    out, err = after(avx512, ATEN_CPU_CAPABILITY="AVX2")
    assert out == "Haswell unset" and "set OPENBLAS_CORETYPE=Haswell" in err, err
    assert after(avx2, **pinned) == ("Haswell 512", "")
    # Each harness that starts torch baselines (or hostir's ATen GEMMs)
    # applies it before it starts any rank.
    assert_every_harness_calls_before_its_first_rank("blas_kernels_match_the_leg")


def test_the_harnesses_give_both_sides_the_allocator_hostir_malloc_names():
    # benchmarks/rank_malloc.sh: with HOSTIR_MALLOC set, the harness exports
    # the LD_PRELOAD and MALLOC_CONF that `hostir launch` gives its ranks, so
    # every rank of both sides inherits them: jemalloc after the user's
    # LD_PRELOAD, with the launcher's MALLOC_CONF; system or unset: nothing;
    # another value fails with the launcher's error naming the variable.
    # ./hostir.sh installs libjemalloc2.
    hostir = build_dir() / "tools" / "hostir"
    assert hostir.exists(), f"{hostir} is not built"

    def after(**overrides):
        env = {k: v for k, v in os.environ.items()
               if k not in ("HOSTIR_MALLOC", "LD_PRELOAD", "MALLOC_CONF")}
        env.update(overrides)
        return subprocess.run(
            ["bash", "-c", "set -eu; source benchmarks/rank_malloc.sh; "
             f"rank_malloc_for_both_sides {hostir}; "
             'echo "${LD_PRELOAD-unset} ${MALLOC_CONF-unset}"'],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    for unset_or_system in ({}, {"HOSTIR_MALLOC": "system"}):
        result = after(**unset_or_system)
        assert (result.returncode, result.stdout.strip()) == (0, "unset unset"), result.stderr
    # A library that does not exist: the loader says so and goes on.
    result = after(HOSTIR_MALLOC="jemalloc", LD_PRELOAD="libfirst.so")
    assert result.returncode == 0, result.stderr
    preload, conf = result.stdout.split()
    assert preload.startswith("libfirst.so:") and preload.endswith("/libjemalloc.so.2"), preload
    assert conf == "dirty_decay_ms:-1,muzzy_decay_ms:-1,thp:always"
    assert "HOSTIR_MALLOC=jemalloc (LD_PRELOAD=" in result.stderr, result.stderr
    result = after(HOSTIR_MALLOC="tcmalloc")
    assert result.returncode != 0 and "HOSTIR_MALLOC='tcmalloc'" in result.stderr, result.stderr
    assert_every_harness_calls_before_its_first_rank("rank_malloc_for_both_sides")


def test_the_report_names_both_sides_isa_and_gemm_path(tmp_path):
    # Issue 39: which ISA and GEMM path ran, hostir's (its --json config) and
    # torch's (torch_harness.torch_machine, under ATEN_CPU_CAPABILITY=avx2).
    env = dict(os.environ, ATEN_CPU_CAPABILITY="avx2", OPENBLAS_CORETYPE="Haswell")
    result = subprocess.run(
        [sys.executable, "-c", "import torch_harness; print(torch_harness.torch_machine())"],
        cwd=OVERLAP, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    torch_line = result.stdout.strip()
    assert torch_line.startswith("ATen AVX2, linear through the system BLAS (BLAS_INFO=")
    assert torch_line.endswith(", OPENBLAS_CORETYPE=Haswell")
    raw = tmp_path / "raw"
    raw.mkdir()
    config = {"tokens": 8, "hidden": 8, "ffn": 8, "runs": 5, "isa": "cpu:avx2",
              "machine": "cpu:avx2 (HOSTIR_TARGET; AMD EPYC)",
              "gemm_path": "ATen/BLAS, epilogues op by op"}
    (raw / "hostir_500mbit.json").write_text(json.dumps(
        {"config": config, "programs": [{"name": "unchunked", "median_ms": 10.0}]}))
    (raw / "torch_500mbit.json").write_text(json.dumps(
        {"config": {"threads": 1, "machine": torch_line}, "serial_ms": 11.0, "check": True}))
    assert report.main([str(tmp_path)]) == 0
    text = (tmp_path / "results.md").read_text()
    assert (f"machine cpu:avx2 (HOSTIR_TARGET; AMD EPYC), GEMMs: ATen/BLAS, epilogues op by op, "
            f"torch: {torch_line}.") in text
    assert "## Medians (ms) on cpu:avx2" in text
