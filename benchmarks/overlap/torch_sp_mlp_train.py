#!/usr/bin/python3
"""Hand-written torch.distributed (Gloo) training-step baselines of the sp-mlp block.

One training step (forward + backward: the output and the grads of the input
x and of both weights) of the sequence-parallel MLP block of
torch_sp_mlp.py, on W = WORLD_SIZE ranks:
    x [S, H] token-sharded, w1 [F, H] sharded on F (rows), w2 [H, F] sharded
    on F (columns);
    y_local = reduce_scatter(linear(gelu(linear(allgather(x), w1)), w2))
and, given the grad dy of y (token-sharded like y), its backward:
    dY    = allgather(dy)                       (the grad of the reduce-scatter)
    dg    = dY @ w2_local,  dw2_local = dY^T @ g
    dh    = gelu'(h) * dg
    dX    = dh @ w1_local,  dw1_local = dh^T @ allgather(x)
    dx    = reduce_scatter(dX)                  (the grad of the allgather)

Three versions, all checked and timed here:
  blocking   Megatron-LM's sequence parallelism as custom autograd Functions
             (ColumnParallelLinearSP: forward allgather of x; backward
             re-gathers x, dgrad GEMM, reduce-scatter of the input grad,
             wgrad GEMM; ReduceScatterToSequenceParallelRegion: forward
             reduce-scatter, backward allgather), every collective blocking.
             The forward saves the token-sharded x, not the gathered one, and
             the backward re-gathers it (Megatron's default).
  async      the same Functions with Megatron's
             LinearWithGradAccumulationAndAsyncCommunication backward: the
             re-gather of x is posted async and overlapped with the dgrad
             GEMM, the input grad's reduce-scatter posted async and overlapped
             with the wgrad GEMM. The forward and the backward's allgather of
             dy stay blocking, as in Megatron.
  pipelined  a whole-step chunked pipeline written by hand (no autograd):
             each rank's rows in C chunks, chunk j = block j of every rank.
             Forward: every chunk's allgather posted up front, chunk j's GEMMs
             as soon as its rows arrived, its reduce-scatter posted at once
             and in flight while chunk j+1 computes. Backward (once y is
             complete): every chunk's allgather of dy and re-gather of x
             posted up front (dy_0, x_0, dy_1, x_1, ...); chunk j's dgrad
             GEMMs (dg, dh, dX) as soon as its dy arrived, its input-grad
             reduce-scatter posted at once, then its wgrad GEMMs (dw2, dw1,
             accumulated over the chunks) while that reduce-scatter and the
             later chunks' gathers move. Best of --chunks.
  pipelined-keep  the same pipeline, but the backward reads the gathered x
             the forward kept instead of re-gathering it (one allgather fewer
             per step, an [S, H] activation more in memory).

Data: manual_seed(0); x = randn(S, H); w1 = randn(F, H)/sqrt(H);
w2 = randn(H, F)/sqrt(F) (as torch_sp_mlp.py), then dy = randn(S, H). Every
rank checks its output rows and its shards of dx, dw1, dw2 of every version
against single-process torch autograd on the whole tensors: max |diff| <=
1e-4 * max |reference| for each tensor, every rank's printed.

Collectives as torch_sp_mlp.py: Gloo in torch 1.13 has no reduce_scatter, so
a reduce-scatter is an all_to_all_single followed by a local sum.

Launched like torch_sp_mlp.py (one process per rank with RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT; or, without RANK in the environment, it starts
--ranks local ranks itself). Timing: --warmup untimed steps of every program,
then --runs timed steps of each, interleaved, each between barriers (until
the slower rank is done); 1 intra-op thread per rank (--threads). Rank 0
prints the table and one JSON line:
    {"blocking_ms", "async_ms", "pipelined_ms", "chunks", "schedule", "check", ...}
"""

import argparse
import gc
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from torch_harness import (add_common_arguments, add_shape_arguments, finish, join_ranks,
                           parse_with_common, timed)
from torch_sp_mlp import draw_block

TOLERANCE = 1e-4   # max |diff| <= TOLERANCE * max |reference|, per tensor


# ---- collectives (Gloo in torch 1.13: no reduce_scatter, no _allgather_base) ----
def all_gather_rows(out, local, async_op=False):
    """out [W*n, ...] (or [W, n, ...]) <- every rank's local [n, ...], rank-major."""
    world = dist.get_world_size()
    views = list(out.view(world * local.shape[0], *local.shape[1:]).chunk(world, 0))
    return dist.all_gather(views, local, async_op=async_op)


def post_reduce_scatter(received, partial, async_op=False):
    """Rank p receives rows block p of every rank's partial [W*n, ...] into
    received [W*n, ...] (W blocks of n rows); sum_blocks finishes it."""
    return dist.all_to_all_single(received, partial, async_op=async_op)


def sum_blocks(received, out=None):
    """The sum of the W row blocks of received [W*n, ...] -> [n, ...] (into
    out, whose shape gives the block's, when given)."""
    world = dist.get_world_size()
    if out is None:
        blocks = received.view(world, received.shape[0] // world, *received.shape[1:])
        return torch.sum(blocks, 0)
    return torch.sum(received.view(world, *out.shape), 0, out=out)


def all_gather_new(local, async_op=False):
    """(a new [W*n, ...] gathered tensor, the work or None)."""
    local = local.contiguous()
    out = local.new_empty(dist.get_world_size() * local.shape[0], *local.shape[1:])
    return out, all_gather_rows(out, local, async_op)


def reduce_scatter_new(partial):
    """Blocking reduce-scatter of partial [W*n, ...] onto the rows: [n, ...]."""
    partial = partial.contiguous()
    received = torch.empty_like(partial)
    post_reduce_scatter(received, partial)
    return sum_blocks(received)


# ---- Megatron-LM's sequence-parallel autograd Functions -------------------------
class GatherFromSequenceParallelRegion(torch.autograd.Function):
    """Megatron's gather_from_sequence_parallel_region: forward allgather of
    the tokens, backward reduce-scatter of the grad."""

    @staticmethod
    def forward(ctx, local):
        return all_gather_new(local)[0]

    @staticmethod
    def backward(ctx, grad):
        return reduce_scatter_new(grad)


class ReduceScatterToSequenceParallelRegion(torch.autograd.Function):
    """Megatron's reduce_scatter_to_sequence_parallel_region: forward
    reduce-scatter onto the tokens, backward allgather of the grad."""

    @staticmethod
    def forward(ctx, partial):
        return reduce_scatter_new(partial)

    @staticmethod
    def backward(ctx, grad):
        return all_gather_new(grad)[0]


class ColumnParallelLinearSP(torch.autograd.Function):
    """Megatron's LinearWithGradAccumulationAndAsyncCommunication with
    sequence_parallel: forward linear(allgather(x), weight) saving the
    token-sharded x; backward re-gathers x for the wgrad. overlap=False: every
    collective blocking (gather, dgrad, reduce-scatter, wgrad); overlap=True:
    Megatron's async backward (the re-gather in flight during the dgrad GEMM,
    the input grad's reduce-scatter in flight during the wgrad GEMM)."""

    @staticmethod
    def forward(ctx, local, weight, overlap):
        ctx.save_for_backward(local, weight)
        ctx.overlap = overlap
        total = GatherFromSequenceParallelRegion.forward(None, local)
        return torch.matmul(total, weight.t())

    @staticmethod
    def backward(ctx, grad_out):
        local, weight = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        total, gather = all_gather_new(local, async_op=ctx.overlap)     # the re-gather
        grad_total = torch.matmul(grad_out, weight)                     # dgrad
        if gather is not None:
            gather.wait()
        received = torch.empty_like(grad_total)
        scatter = post_reduce_scatter(received, grad_total, async_op=ctx.overlap)
        grad_weight = torch.matmul(grad_out.t(), total)                 # wgrad
        if scatter is not None:
            scatter.wait()
        return sum_blocks(received), grad_weight, None


def row_parallel_linear_sp(inp, weight):
    """Megatron's RowParallelLinear with sequence_parallel: a local linear
    into a partial [S, H], reduce-scattered onto the tokens."""
    return ReduceScatterToSequenceParallelRegion.apply(F.linear(inp, weight))


# ---- the check and the run shared with torch_sp_layer_train.py ------------------
def check(rank, name, got, expected, corrupt=None):
    """Compares every tensor of `got` with `expected` (this rank's parts):
    max |diff| <= TOLERANCE * max |expected|, per tensor. Prints this rank's
    line; returns (ok on every rank, {tensor: max over ranks of max |diff| /
    max |expected|}). corrupt names a tensor to perturb first (by 10x the
    tolerance, in one element): the test's proof that the check is real."""
    ratios, ok = {}, True
    for key, ref in expected.items():
        value = got[key].detach()
        scale = float(ref.abs().max())
        if key == corrupt:
            value = value.clone()
            value.view(-1)[value.numel() // 2] += 10 * TOLERANCE * scale
        diff = float((value - ref).abs().max())
        ratios[key] = diff / scale if scale > 0 else diff
        if not math.isfinite(ratios[key]):
            ratios[key] = math.inf                 # a NaN must not vanish in a max
        ok = ok and diff <= TOLERANCE * scale      # False for a NaN
    bad = [k for k in expected if not ratios[k] <= TOLERANCE]
    sys.stdout.write(f"[rank {rank}] check {name}: max |diff| / max |ref| = "
                     + " ".join(f"{k} {r:.2g}" for k, r in ratios.items())
                     + (" OK" if ok else f" MISMATCH in {', '.join(bad)}") + "\n")
    sys.stdout.flush()                             # one write: the ranks' lines stay whole
    flags = torch.tensor([0.0 if ok else 1.0] + [ratios[k] for k in expected], dtype=torch.float64)
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)   # every rank's parts must match
    return flags[0].item() == 0.0, dict(zip(expected, flags[1:].tolist()))


def run_baselines(args, rank, world, model, chunk_list, config, label):
    """Checks every program of `model` (blocking, async, pipelined and
    pipelined-keep per chunk count), times them interleaved, prints the table
    (rank 0) and the JSON line; returns the exit status."""
    programs = {"blocking": lambda: model.autograd_step(False),
                "async": lambda: model.autograd_step(True)}
    for c in chunk_list:
        programs[f"pipelined {c}"] = lambda c=c: model.pipelined_step(c, keep=False)
        programs[f"pipelined-keep {c}"] = lambda c=c: model.pipelined_step(c, keep=True)
    checks, all_ok = {}, True
    for name, step in programs.items():
        checks[name] = check(rank, name, step(), model.expected, args.corrupt)
        all_ok = all_ok and checks[name][0]
    # --comm-only: the pipelined step's collectives alone (1 and each --chunks),
    # timed among the others; they compute nothing, so nothing to check.
    comm_chunks = sorted({1} | set(chunk_list)) if getattr(args, "comm_only", False) else []
    comm_programs = {f"comm-only {c}": (lambda c=c: model.comm_only_step(c)) for c in comm_chunks}
    measured = timed(args, {**programs, **comm_programs})
    memory = step_memory(model, programs)

    def entry(name):
        ms, runs = measured[name]
        return {"median_ms": ms, "runs_ms": runs, "check": checks[name][0],
                "max_rel_diff": max(checks[name][1].values()), "rel_diff": checks[name][1]}

    pipelined = []
    for c in chunk_list:
        for schedule in ("pipelined", "pipelined-keep"):
            pipelined.append(dict(entry(f"{schedule} {c}"), chunks=c, schedule=schedule))
    best = min((p for p in pipelined if p["schedule"] == "pipelined"),
               key=lambda p: p["median_ms"], default=None)
    best_keep = min((p for p in pipelined if p["schedule"] == "pipelined-keep"),
                    key=lambda p: p["median_ms"], default=None)
    max_rel = max(max(r.values()) for _, r in checks.values())
    result = {
        "blocking_ms": measured["blocking"][0], "async_ms": measured["async"][0],
        "pipelined_ms": best["median_ms"] if best else None,
        "chunks": best["chunks"] if best else None, "schedule": "pipelined",
        "pipelined_keep_ms": best_keep["median_ms"] if best_keep else None,
        "pipelined_keep_chunks": best_keep["chunks"] if best_keep else None,
        "check": all_ok, "max_rel_diff": max_rel, "tolerance": TOLERANCE,
        "blocking": entry("blocking"), "async": entry("async"),
        "pipelined": pipelined, "config": config, "peak_step_bytes": memory,
    }
    if comm_chunks:
        result["comm_only"] = [{"chunks": c, "median_ms": measured[f"comm-only {c}"][0],
                                "runs_ms": measured[f"comm-only {c}"][1]} for c in comm_chunks]
    if rank == 0:
        print(f"\n{label}: one training step (forward + backward), {world} ranks, "
              f"{args.threads} thread(s) per rank, median of {args.runs} run(s), ms")
        print(f"{'program':<22} {'C':>3} {'median ms':>10}  {'/ blocking':>10}  max rel diff")
        blocking_ms = result["blocking_ms"]
        for name in programs:
            ms = measured[name][0]
            kind, _, c = name.partition(" ")
            print(f"{kind:<22} {c or '-':>3} {ms:>10.1f}  {ms / blocking_ms:>10.3f}  "
                  f"{max(checks[name][1].values()):.2g}")
        for c in comm_chunks:
            ms = measured[f"comm-only {c}"][0]
            print(f"{'comm-only':<22} {c:>3} {ms:>10.1f}  {ms / blocking_ms:>10.3f}  -")
        for name, peak in memory.items():
            print(f"peak memory of a step on rank 0, {name}: {peak / 2**20:.1f} MiB")
        print(f"check: {'PASSED' if all_ok else 'FAILED'} (every rank's output and grads of "
              f"every program; max |diff| / max |ref| = {max_rel:.3g}, tolerance "
              f"{TOLERANCE:g})", flush=True)
    if getattr(args, "op_times", False):
        print_op_times(model, rank, chunk_list)
    return finish(args, rank, result, all_ok)


def step_memory(model, programs):
    """The peak memory of one step of each program but pipelined-keep on this
    rank, as `hostir sp-mlp --train` measures its own (hostir.memory: the most
    bytes of CPU tensors alive at once during the step above those alive
    before it, counted at c10's CPU allocator); {} when hostir is not
    importable. The last step's grads and the pipelined steps' preallocated
    buffers are let go first, so the step allocates them again."""
    try:
        from hostir.memory import peak_tensor_bytes_of
    except ImportError:
        print("peak memory of a step: not measured (hostir is not importable: set PYTHONPATH "
              "to the build's python folder)", flush=True)
        return {}
    memory = {}
    for name, step in programs.items():
        if name.startswith("pipelined-keep"):
            continue
        model.drop_grads()
        model.plans.clear()
        gc.collect()
        dist.barrier()
        memory[name] = peak_tensor_bytes_of(step)
    return memory


def add_train_arguments(parser):
    parser.add_argument("--corrupt", default=None, metavar="TENSOR",
                        help="for testing the check: perturb this output/grad (e.g. dw1) of every "
                             "program by 10x the tolerance before checking it; the run must fail")


# ---- the MLP block ---------------------------------------------------------------
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_shape_arguments(p, layer=False)
    add_common_arguments(
        p, "chunk counts of the pipelined versions, comma-separated (default 2,4,8,16)",
        default_port=29633)
    add_train_arguments(p)
    p.add_argument("--comm-only", action="store_true",
                   help="also time the pipelined step's collectives alone (chunks 1 and each "
                        "--chunks): posted and waited in the same order, no compute")
    p.add_argument("--op-times", action="store_true",
                   help="after the table, 3 more pipelined steps per chunk count with each op "
                        "(GEMM, gelu, wait) timed; rank 0 prints the ops' time per step, summed "
                        "by kind, to read beside hostir's --trace")
    return parse_with_common(p, argv)


class PipelinePlan:
    """Per-chunk views and buffers of the pipelined step (C chunks)."""

    def __init__(self, block, chunks):
        W, H, Fl = block.world, block.H, block.w1.shape[0]
        self.chunks = []
        for x_j, y_j, dy_j, dx_j in zip(*(t.tensor_split(chunks, 0) for t in
                                          (block.x, block.y, block.dy, block.dx))):
            n = W * x_j.shape[0]
            self.chunks.append({
                "x": x_j, "y": y_j, "dy": dy_j, "dx": dx_j,
                "x_gathered": torch.empty(n, H), "x_regathered": torch.empty(n, H),
                "y_received": torch.empty(n, H), "dy_gathered": torch.empty(n, H),
                "dx_received": torch.empty(n, H), "h": torch.empty(n, Fl),
                "g": None, "y_partial": None, "dx_partial": None})


class Block:
    """One rank's shards, its part of the reference and the buffers."""

    def __init__(self, args, rank, world):
        S, H = args.tokens, args.hidden
        x, w1, w2 = draw_block(args, world)
        dy = torch.randn(S, H)  # after the block's tensors, from the same seed
        self.rank, self.world, self.H = rank, world, H
        self.x = x.chunk(world, 0)[rank].contiguous()
        self.w1 = w1.chunk(world, 0)[rank].contiguous()
        self.w2 = w2.chunk(world, 1)[rank].contiguous()
        self.dy = dy.chunk(world, 0)[rank].contiguous()
        # Single-process torch autograd on the whole tensors.
        x, w1, w2 = (t.clone().requires_grad_(True) for t in (x, w1, w2))
        y = F.linear(F.gelu(F.linear(x, w1)), w2)
        y.backward(dy)
        self.expected = {"y": y.detach().chunk(world, 0)[rank].contiguous(),
                         "dx": x.grad.chunk(world, 0)[rank].contiguous(),
                         "dw1": w1.grad.chunk(world, 0)[rank].contiguous(),
                         "dw2": w2.grad.chunk(world, 1)[rank].contiguous()}
        del x, w1, w2, dy, y
        # The autograd versions' leaves.
        self.x_leaf = self.x.detach().clone().requires_grad_(True)
        self.w1_param = torch.nn.Parameter(self.w1.clone())
        self.w2_param = torch.nn.Parameter(self.w2.clone())
        # The pipelined version's outputs.
        self.y = torch.empty_like(self.x)
        self.dx = torch.empty_like(self.x)
        self.dw1 = torch.empty_like(self.w1)
        self.dw2 = torch.empty_like(self.w2)
        self.plans = {}
        self.op_ms = None  # --op-times: {kind: ms summed over the timed steps}

    def op(self, kind, fn):
        """fn(); with --op-times on, its time is added to op_ms[kind]."""
        if self.op_ms is None:
            return fn()
        start = time.perf_counter()
        result = fn()
        self.op_ms[kind] = self.op_ms.get(kind, 0.0) + (time.perf_counter() - start) * 1e3
        return result

    def drop_grads(self):
        for t in (self.x_leaf, self.w1_param, self.w2_param):
            t.grad = None

    def autograd_step(self, overlap):
        """blocking (overlap=False) / async (overlap=True): torch autograd
        through Megatron's Functions."""
        self.drop_grads()
        h = ColumnParallelLinearSP.apply(self.x_leaf, self.w1_param, overlap)
        y = row_parallel_linear_sp(F.gelu(h), self.w2_param)
        y.backward(self.dy)
        return {"y": y, "dx": self.x_leaf.grad, "dw1": self.w1_param.grad,
                "dw2": self.w2_param.grad}

    def comm_only_step(self, chunks):
        """pipelined_step(chunks, keep=False)'s collectives alone, posted and
        waited in its order (forward: every allgather of x up front, chunk j's
        reduce-scatter once its gather is done; backward: every allgather of
        dy and re-gather of x up front, chunk j's reduce-scatter of dx once
        its dy arrived, then the wait for its x), with no GEMM, gelu or sum:
        the communication-only half of the pipelined step."""
        plan = self.plan(chunks)
        for c in plan:
            if c["y_partial"] is None:  # a partial of the step's size to scatter
                c["y_partial"] = torch.zeros_like(c["y_received"])
                c["dx_partial"] = torch.zeros_like(c["dx_received"])
        gathers = [all_gather_rows(c["x_gathered"], c["x"], async_op=True) for c in plan]
        scatters = []
        for j, c in enumerate(plan):
            gathers[j].wait()
            scatters.append(post_reduce_scatter(c["y_received"], c["y_partial"], async_op=True))
        for work in scatters:
            work.wait()
        dy_gathers, x_gathers = [], []
        for c in plan:
            dy_gathers.append(all_gather_rows(c["dy_gathered"], c["dy"], async_op=True))
            x_gathers.append(all_gather_rows(c["x_regathered"], c["x"], async_op=True))
        scatters = []
        for j, c in enumerate(plan):
            dy_gathers[j].wait()
            scatters.append(post_reduce_scatter(c["dx_received"], c["dx_partial"],
                                                async_op=True))
            x_gathers[j].wait()
        for work in scatters:
            work.wait()

    def plan(self, chunks):
        if chunks not in self.plans:
            self.plans[chunks] = PipelinePlan(self, chunks)
        return self.plans[chunks].chunks

    def pipelined_step(self, chunks, keep):
        plan = self.plan(chunks)
        # Forward: every allgather up front; chunk j's reduce-scatter in flight
        # while chunk j+1 computes.
        gathers = [all_gather_rows(c["x_gathered"], c["x"], async_op=True) for c in plan]
        scatters = []
        for j, c in enumerate(plan):
            self.op("forward wait", gathers[j].wait)
            self.op("forward GEMM1", lambda: torch.matmul(c["x_gathered"], self.w1.t(), out=c["h"]))
            c["g"] = self.op("forward gelu", lambda: F.gelu(c["h"]))
            c["y_partial"] = self.op("forward GEMM2", lambda: torch.matmul(c["g"], self.w2.t()))
            scatters.append(post_reduce_scatter(c["y_received"], c["y_partial"], async_op=True))
        for j, c in enumerate(plan):
            scatters[j].wait()
            sum_blocks(c["y_received"], out=c["y"])
        # Backward, once y is complete: every allgather of dy (and re-gather of
        # x) up front; per chunk the dgrads, its input-grad reduce-scatter
        # posted, then its wgrads under that reduce-scatter.
        dy_gathers, x_gathers = [], []
        for c in plan:
            dy_gathers.append(all_gather_rows(c["dy_gathered"], c["dy"], async_op=True))
            if not keep:
                x_gathers.append(all_gather_rows(c["x_regathered"], c["x"], async_op=True))
        scatters = []
        for j, c in enumerate(plan):
            self.op("backward wait", dy_gathers[j].wait)
            dg = self.op("backward dgrad GEMM2",
                         lambda: torch.matmul(c["dy_gathered"], self.w2))    # [W n, F/W]
            dh = self.op("backward gelu'", lambda: torch.ops.aten.gelu_backward(dg, c["h"]))
            c["dx_partial"] = self.op("backward dgrad GEMM1",
                                      lambda: torch.matmul(dh, self.w1))     # [W n, H]
            scatters.append(post_reduce_scatter(c["dx_received"], c["dx_partial"],
                                                async_op=True))
            if j == 0:
                self.op("backward wgrad GEMM2",
                        lambda: torch.matmul(c["dy_gathered"].t(), c["g"], out=self.dw2))
            else:
                self.op("backward wgrad GEMM2",
                        lambda: self.dw2.addmm_(c["dy_gathered"].t(), c["g"]))
            if keep:
                x_total = c["x_gathered"]
            else:
                self.op("backward wait", x_gathers[j].wait)
                x_total = c["x_regathered"]
            if j == 0:
                self.op("backward wgrad GEMM1", lambda: torch.matmul(dh.t(), x_total, out=self.dw1))
            else:
                self.op("backward wgrad GEMM1", lambda: self.dw1.addmm_(dh.t(), x_total))
        for j, c in enumerate(plan):
            scatters[j].wait()
            sum_blocks(c["dx_received"], out=c["dx"])
        return {"y": self.y, "dx": self.dx, "dw1": self.dw1, "dw2": self.dw2}


def main(argv):
    args = parse_args(argv)
    rank, world = join_ranks(__file__, args, argv)
    block = Block(args, rank, world)
    config = {"program": "mlp-train", "ranks": world, "tokens": args.tokens,
              "hidden": args.hidden, "ffn": args.ffn, "runs": args.runs,
              "warmup": args.warmup, "threads": args.threads, "torch": torch.__version__,
              "backend": "gloo", "gloo_socket_ifname": os.environ.get("GLOO_SOCKET_IFNAME", "")}
    return run_baselines(args, rank, world, block, args.chunk_list, config,
                         f"sp-mlp training step, S={args.tokens} H={args.hidden} F={args.ffn}")


def print_op_times(block, rank, chunk_list, steps=3):
    """--op-times: `steps` more pipelined steps per chunk count, each op
    timed (Block.op); rank 0 prints each kind's time per step."""
    for chunks in chunk_list:
        block.op_ms = {}
        for _ in range(steps):
            dist.barrier()
            block.pipelined_step(chunks, keep=False)
        dist.barrier()
        if rank == 0:
            print(f"ops of the pipelined step ({chunks} chunks), rank 0, ms per step "
                  f"(mean of {steps}):")
            for kind, ms in block.op_ms.items():
                print(f"  {kind:24s} {ms / steps:10.4f}")
    block.op_ms = None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
