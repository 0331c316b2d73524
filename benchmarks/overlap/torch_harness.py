"""What the hand-written torch.distributed baselines share: their common
flags, starting their own ranks on 127.0.0.1 when no launcher did, and the
interleaved timing between barriers."""

import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist


def add_common_arguments(parser, chunks_help, default_port):
    """The flags every baseline takes (sizes are each script's own)."""
    parser.add_argument("--chunks", default="2,4,8,16", help=chunks_help)
    parser.add_argument("--runs", type=int, default=5,
                        help="timed runs, median reported (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads per rank (default 1: ~1 core per rank)")
    parser.add_argument("--no-breakdown", dest="breakdown", action="store_false",
                        help="skip timing compute-only and comm-only (chunks 1 and each --chunks)")
    parser.add_argument("--json", default=None, help="rank 0 also writes its JSON line here")
    parser.add_argument("--ranks", type=int, default=2,
                        help="ranks to start when RANK is not in the environment (default 2)")
    parser.add_argument("--port", type=int, default=default_port,
                        help="MASTER_PORT when this script starts its own ranks")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds for the process group timeout / local launch (default 600)")


def add_shape_arguments(parser, layer):
    """--tokens --hidden --ffn (and --heads for the layer) at the issue sizes."""
    tokens, name = (2048, "T") if layer else (4096, "S")
    parser.add_argument("--tokens", type=int, default=tokens, help=f"{name} (default {tokens})")
    parser.add_argument("--hidden", type=int, default=1024, help="H (default 1024)")
    if layer:
        parser.add_argument("--heads", type=int, default=16, help="attention heads (default 16)")
    parser.add_argument("--ffn", type=int, default=4096, help="F (default 4096)")


def parse_with_common(parser, argv):
    """Parses argv and checks the common flags; args.chunk_list holds the
    chunk counts."""
    args = parser.parse_args(argv)
    try:
        args.chunk_list = [int(c) for c in args.chunks.split(",") if c.strip()]
    except ValueError:
        args.chunk_list = []
    if not args.chunk_list or min(args.chunk_list) < 1:
        parser.error("--chunks: a comma-separated list of positive integers")
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    return args


def launch_local(script, args, argv):
    """Starts args.ranks processes of `script` on 127.0.0.1; the first
    non-zero exit status, 124 if they outlive the timeout (then all are
    killed)."""
    procs = []
    for r in range(args.ranks):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(args.ranks), LOCAL_RANK=str(r),
                   LOCAL_WORLD_SIZE=str(args.ranks), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(args.port))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(script)] + argv, env=env))
    status = 0
    deadline = time.monotonic() + args.timeout + 60
    for p in procs:
        try:
            rc = p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            rc = 124
        status = status or rc
    return status


def join_ranks(script, args, argv):
    """This process's (rank, world) in a Gloo group, with args.threads
    intra-op threads. Where no launcher set RANK, starts args.ranks copies of
    `script` that join, and exits with their status."""
    if "RANK" not in os.environ:
        raise SystemExit(launch_local(script, args, argv))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    return rank, world


def print_result(args, result):
    """Prints the result as one JSON line, and writes it to args.json."""
    line = json.dumps(result)
    print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            f.write(line + "\n")


def torch_machine():
    """Which ISA and GEMM path torch ran (issue 39): ATen's CPU capability as
    torch reports it (ATEN_CPU_CAPABILITY caps it), its BLAS and the
    environment that picks BLAS's and oneDNN's kernels where set."""
    capability, blas = "unknown", "unknown"
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            capability = line.split(":", 1)[1].strip()
        if "BLAS_INFO=" in line:
            blas = line.split("BLAS_INFO=", 1)[1].split(",", 1)[0]
    text = f"ATen {capability}, linear through the system BLAS (BLAS_INFO={blas})"
    pinned = [f"{k}={os.environ[k]}" for k in ("OPENBLAS_CORETYPE", "DNNL_MAX_CPU_ISA")
              if os.environ.get(k)]
    if pinned:
        text += ", " + ", ".join(pinned)
    if "libjemalloc" in os.environ.get("LD_PRELOAD", ""):
        text += ", malloc: jemalloc"  # HOSTIR_MALLOC=jemalloc (benchmarks/rank_malloc.sh)
    return text


def warn_if_blas_pinned_below_the_cpu():
    """On an AVX-512 CPU an inherited OPENBLAS_CORETYPE=Haswell (some machines
    export it to every shell) runs torch's GEMMs on AVX2 kernels while
    hostir's run oneDNN's AVX-512 ones: a handicapped baseline (docs/
    performance.md, "Training steps against hand-written torch.distributed
    steps"). The AVX2 legs also set ATEN_CPU_CAPABILITY=avx2: not warned."""
    core = os.environ.get("OPENBLAS_CORETYPE", "")
    if not core or os.environ.get("ATEN_CPU_CAPABILITY", "").lower() == "avx2":
        return
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            avx512 = " avx512f" in cpuinfo.read()
    except OSError:
        return
    if avx512:
        print(f"warning: OPENBLAS_CORETYPE={core} on an AVX-512 CPU: torch's GEMMs run "
              f"{core}'s kernels, hostir's do not; unset it (env -u OPENBLAS_CORETYPE) "
              "for a baseline at this CPU's speed", file=sys.stderr)


def finish(args, rank, result, all_ok):
    """Rank 0 prints the result (print_result), with the machine line
    (torch_machine) in its config; every rank leaves the group. The exit
    status: 0 when every check passed."""
    if rank == 0:
        result.setdefault("config", {})["machine"] = torch_machine()
        warn_if_blas_pinned_below_the_cpu()
        print_result(args, result)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if all_ok else 1


def timed(args, programs):
    """Median ms of each program; the runs are interleaved (run k of every
    program, then run k+1), so a change in the machine's load during the
    measurement hits every program alike. Each timed run lies between two
    barriers."""
    for _ in range(args.warmup):
        for fn in programs.values():
            fn()
    times = {name: [] for name in programs}
    for _ in range(args.runs):
        for name, fn in programs.items():
            dist.barrier()
            start = time.perf_counter()
            fn()
            dist.barrier()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: (statistics.median(t), t) for name, t in times.items()}


def add_breakdown_programs(args, programs, chunk_list, block):
    """Adds each chunk count's (and 1's) compute-only and comm-only halves of
    `block` to `programs` (none with --no-breakdown); returns their counts."""
    chunks = sorted({1} | set(chunk_list)) if args.breakdown else []
    for c in chunks:
        programs[f"compute-only {c}"] = lambda c=c: block.compute_only(c)
        programs[f"comm-only {c}"] = lambda c=c: block.comm_only(c)
    return chunks


def breakdown_of(measured, chunks):
    """The JSON "breakdown" of timed()'s results for add_breakdown_programs'
    chunk counts."""
    breakdown = {}
    for c in chunks:
        comp_ms, comp_runs = measured[f"compute-only {c}"]
        comm_ms, comm_runs = measured[f"comm-only {c}"]
        breakdown[str(c)] = {"compute_only_ms": comp_ms, "comm_only_ms": comm_ms,
                             "compute_only_runs_ms": comp_runs, "comm_only_runs_ms": comm_runs}
    return breakdown
