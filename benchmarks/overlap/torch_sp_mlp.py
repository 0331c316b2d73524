#!/usr/bin/python3
"""Hand-written torch.distributed (Gloo) baseline of hostir's sp-mlp block.

The sequence-parallel transformer MLP block, on WORLD_SIZE ranks:
    x [S, H] token-sharded (rank r holds torch.chunk(x, W, 0)[r]),
    w1 [F, H] sharded on F (chunk(w1, W, 0)[r]), w2 [H, F] sharded on F
    (chunk(w2, W, 1)[r]);
    h = linear(allgather(x), w1_local)          -> [S, F/W]
    g = gelu(h)
    partial = linear(g, w2_local)               -> [S, H]
    y_local = reduce_scatter(partial, sum, rows) -> [S/W, H]

Three versions, all timed here:
  serial     allgather, linear, gelu, linear, reduce-scatter, all blocking.
  pipelined  ("one-ahead") each rank's local rows split into C chunks; chunk
             j's allgather gathers chunk j of every rank ([W*rows_j, H],
             rank-major). The allgather of chunk j+1 is in flight while chunk
             j's GEMMs run, and chunk j's partial [W*rows_j, H] is
             reduce-scattered asynchronously while chunk j+1 computes.
  prefetched ("all-ahead") the same chunks, but every chunk's allgather is
             posted up front; chunk j computes as soon as its rows have
             arrived, its reduce-scatter is in flight while chunk j+1
             computes, and the sums are taken at the end. This is the
             strongest of the three on a slow link (issue 18).

Gloo in torch 1.13 has no reduce_scatter / _reduce_scatter_base /
_allgather_base, so: allgather = dist.all_gather into views of one
preallocated buffer; reduce-scatter = dist.all_to_all_single (each rank sends
rank p the rows p of its partial, which moves (W-1)/W of the partial per
rank, as a ring reduce-scatter does) followed by a local sum over the W
received blocks. This is the same algorithm hostir's runtime uses.

Not started by torchrun (broken with Python 3.11 + torch 1.13): start one
process per rank with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and
GLOO_SOCKET_IFNAME where needed) in the environment. Without RANK in the
environment this script starts WORLD_SIZE (--ranks, default 2) local ranks on
127.0.0.1 itself.

Timing: --warmup untimed runs of every program, then --runs timed runs of
each, interleaved (run k of every program, then run k+1) so that a change in
the machine's load hits every program alike; each timed run starts after a
barrier and ends after a barrier that follows the block (so it lasts until the
slowest rank is done), like hostir's sp-mlp. Rank 0 reports the medians. Rank 0 prints one JSON line:
    {"serial_ms": .., "pipelined_ms": .., "chunks": C, "check": true, ...}
"pipelined_ms"/"chunks"/"schedule" are the best of both chunked versions
over every --chunks value, and "pipelined" lists every (schedule, C). "breakdown" gives, for chunk
count 1 and each --chunks value, the median of the compute alone (the same
GEMMs, GELU and final sums, no communication) and of the communication alone
(the same collectives, no compute); chunking changes the GEMMs' speed on a
CPU (cache), so compare a pipelined time with the compute-only time of the
same chunk count.
"""

import argparse
import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

from torch_harness import (add_breakdown_programs, add_common_arguments, add_shape_arguments,
                           breakdown_of, finish, join_ranks, parse_with_common, timed)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_shape_arguments(p, layer=False)
    add_common_arguments(
        p, "chunk count(s) of the chunked versions, comma-separated (default 2,4,8,16)",
        default_port=29631)
    return parse_with_common(p, argv)


def draw_block(args, world):
    """The whole x, w1, w2 every rank draws (seed 0), after checking that
    tokens and ffn split over the ranks."""
    S, H, Fdim = args.tokens, args.hidden, args.ffn
    if S % world or Fdim % world:
        raise SystemExit(f"tokens ({S}) and ffn ({Fdim}) must be divisible by {world}")
    torch.manual_seed(0)
    x = torch.randn(S, H)
    w1 = torch.randn(Fdim, H) / math.sqrt(H)
    w2 = torch.randn(H, Fdim) / math.sqrt(Fdim)
    return x, w1, w2


class Block:
    """One rank's shards and preallocated buffers."""

    def __init__(self, args, rank, world):
        S, H = args.tokens, args.hidden
        x, w1, w2 = draw_block(args, world)
        self.rank, self.world, self.S, self.H = rank, world, S, H
        self.x_local = torch.chunk(x, world, 0)[rank].contiguous()
        self.w1_local = torch.chunk(w1, world, 0)[rank].contiguous()
        self.w2_local = torch.chunk(w2, world, 1)[rank].contiguous()
        # Single-process reference of this rank's rows (the block is row-wise).
        self.expected = F.linear(F.gelu(F.linear(self.x_local, w1)), w2)
        del x, w1, w2
        self.rows = self.x_local.shape[0]
        # Serial buffers.
        self.gathered = torch.empty(world * self.rows, H)
        self.gathered_views = list(self.gathered.chunk(world, 0))
        self.received = torch.empty(world * self.rows, H)
        self.y = torch.empty(self.rows, H)
        self.plans = {}

    def plan(self, chunks):
        """Per-chunk views and buffers of the pipelined version."""
        if chunks in self.plans:
            return self.plans[chunks]
        plan = []
        for x_j, y_j in zip(self.x_local.tensor_split(chunks, 0), self.y.tensor_split(chunks, 0)):
            n = x_j.shape[0]
            gathered = torch.empty(self.world * n, self.H)
            received = torch.empty(self.world * n, self.H)
            plan.append((x_j, y_j, gathered, list(gathered.chunk(self.world, 0)), received, n))
        self.plans[chunks] = plan
        return plan

    def mlp(self, rows):
        return F.linear(F.gelu(F.linear(rows, self.w1_local)), self.w2_local)

    def serial(self):
        dist.all_gather(self.gathered_views, self.x_local)          # [S, H], rank-major
        partial = self.mlp(self.gathered)                            # [S, H]
        dist.all_to_all_single(self.received, partial)              # rows p -> rank p
        torch.sum(self.received.view(self.world, self.rows, self.H), 0, out=self.y)
        return self.y

    def pipelined(self, chunks):
        plan = self.plan(chunks)
        world, H = self.world, self.H
        gathers = [None] * len(plan)
        scatters, partials = [], []

        def start_gather(j):
            x_j, _, _, views, _, _ = plan[j]
            gathers[j] = dist.all_gather(views, x_j, async_op=True)

        start_gather(0)
        for j, (_, _, gathered, _, received, _) in enumerate(plan):
            if j + 1 < len(plan):
                start_gather(j + 1)       # in flight while chunk j computes
            gathers[j].wait()
            partial = self.mlp(gathered)                              # [W*rows_j, H]
            scatters.append(dist.all_to_all_single(received, partial, async_op=True))
            partials.append(partial)      # the send buffer stays alive until waited
        for j, (_, y_j, _, _, received, n) in enumerate(plan):
            scatters[j].wait()
            torch.sum(received.view(world, n, H), 0, out=y_j)
        return self.y

    def prefetched(self, chunks):
        plan = self.plan(chunks)
        world, H = self.world, self.H
        gathers = [dist.all_gather(views, x_j, async_op=True)
                   for x_j, _, _, views, _, _ in plan]
        scatters, partials = [], []
        for j, (_, _, gathered, _, received, _) in enumerate(plan):
            gathers[j].wait()
            partial = self.mlp(gathered)
            scatters.append(dist.all_to_all_single(received, partial, async_op=True))
            partials.append(partial)
        for j, (_, y_j, _, _, received, n) in enumerate(plan):
            scatters[j].wait()
            torch.sum(received.view(world, n, H), 0, out=y_j)
        return self.y

    # The two halves of the block on their own, for the breakdown: the same
    # GEMMs / collectives as `pipelined(chunks)` (chunks = 1: as `serial`).
    def compute_only(self, chunks):
        for _, y_j, gathered, _, received, n in self.plan(chunks):
            self.mlp(gathered)
            torch.sum(received.view(self.world, n, self.H), 0, out=y_j)

    def comm_only(self, chunks):
        works = []
        for x_j, _, gathered, views, received, _ in self.plan(chunks):
            works.append(dist.all_gather(views, x_j, async_op=chunks > 1))
            works.append(dist.all_to_all_single(received, gathered, async_op=chunks > 1))
        for w in works:
            if w is not None:
                w.wait()


def main(argv):
    args = parse_args(argv)
    rank, world = join_ranks(__file__, args, argv)
    block = Block(args, rank, world)

    def check(out):
        ok = bool(torch.allclose(out, block.expected, rtol=1e-4, atol=1e-4))
        diff = float((out - block.expected).abs().max())
        flags = torch.tensor([0.0 if ok else 1.0, diff])
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)   # every rank's shard must match
        return flags[0].item() == 0.0, flags[1].item()

    serial_ok, serial_diff = check(block.serial().clone())
    all_ok = serial_ok
    checks = {}
    programs = {"serial": block.serial}
    schedules = {"one-ahead": block.pipelined, "all-ahead": block.prefetched}
    for c in args.chunk_list:
        for schedule, run in schedules.items():
            checks[(schedule, c)] = check(run(c).clone())
            all_ok = all_ok and checks[(schedule, c)][0]
            programs[f"{schedule} {c}"] = lambda c=c, run=run: run(c)
    breakdown_chunks = add_breakdown_programs(args, programs, args.chunk_list, block)
    measured = timed(args, programs)
    serial_ms, serial_runs = measured["serial"]
    pipelined = []
    for c in args.chunk_list:
        for schedule in schedules:
            ms, runs = measured[f"{schedule} {c}"]
            pipelined.append({"chunks": c, "schedule": schedule, "median_ms": ms,
                              "runs_ms": runs, "check": checks[(schedule, c)][0],
                              "max_abs_diff": checks[(schedule, c)][1]})
    breakdown = breakdown_of(measured, breakdown_chunks)
    best = min(pipelined, key=lambda p: p["median_ms"])
    result = {
        "serial_ms": serial_ms, "pipelined_ms": best["median_ms"], "chunks": best["chunks"],
        "schedule": best["schedule"],
        "check": all_ok,
        "serial_runs_ms": serial_runs, "serial_max_abs_diff": serial_diff,
        "pipelined": pipelined,
        "breakdown": breakdown,
        "config": {"ranks": world, "tokens": args.tokens, "hidden": args.hidden,
                   "ffn": args.ffn, "runs": args.runs, "warmup": args.warmup,
                   "threads": args.threads, "torch": torch.__version__, "backend": "gloo",
                   "gloo_socket_ifname": os.environ.get("GLOO_SOCKET_IFNAME", "")},
    }
    return finish(args, rank, result, all_ok)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
