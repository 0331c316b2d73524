#!/usr/bin/python3
"""Hand-written torch.distributed (Gloo) baseline of hostir's sp-layer.

The pre-norm causal decoder layer of `hostir sp-layer`
(docs/transformer_layer.md), sharded like Megatron-LM sequence + tensor
parallelism over W = WORLD_SIZE ranks:

    h = x + attention(layer_norm(x))    causal, nh heads of hd = H / nh
    y = h + mlp(layer_norm(h))          mlp = linear(gelu(linear(., w1)), w2)

x [T, H] is token-sharded (rank r holds rows [r*T/W, (r+1)*T/W)); each rank
owns nh/W heads (rows r of chunk(Wq|Wk|Wv, W, 0), its columns of
chunk(Wo, W, 1), the q/k/v projections fused into one GEMM) and chunk(w1, W,
0), chunk(w2, W, 1). Each half is: allgather the normalized tokens,
column-parallel GEMM(s), row-parallel GEMM into a partial [T, H],
reduce-scatter of the partials onto the tokens, residual add.

Data as `hostir sp-layer` draws it (tools/transformer_layer_reference.cpp):
manual_seed(0); x = randn(T, H); ln1 weight = 1 + 0.1 randn(H), bias =
0.1 randn(H); wq, wk, wv, wo = randn(H, H) / sqrt(H); ln2 weight, bias the
same way; w1 = randn(F, H) / sqrt(H); w2 = randn(H, F) / sqrt(F). Every
rank checks its rows against the layer written the usual way in one process
(allclose, rtol = atol = 1e-4, fp32) and prints max |diff|.

Two versions, both timed here:
  serial     per half: blocking all_gather, the GEMMs (full [T, T] masked
             attention scores), blocking reduce-scatter.
  pipelined  ("all-ahead", C chunks) each rank's rows split into C blocks of
             m = T/(W*C) rows, block k of rank r being global block
             b = r*C + k (tokens [b*m, (b+1)*m)). Attention half: LN1 of
             every local block and every chunk's all_gather (block k of
             every rank) posted async up front; the global blocks are then
             computed in token order, each as soon as its rows are here (a
             rank's own blocks at once, the others' when their chunk's
             all_gather is done): its fused q/k/v projection, its k/v rows
             written into the K/V buffers, its queries against K/V rows
             [0, (b+1)*m) only (causality: those rows are already computed;
             the mask only on the diagonal block), and its out-projection
             into chunk k's partial. Once the last rank's block k is done,
             chunk k's reduce-scatter is posted async and is in flight while
             the next blocks compute. MLP half: as each chunk's reduce-scatter
             lands, its residual and LN2 are taken and its all_gather posted;
             chunk j's GEMMs run as soon as its rows arrived and its
             reduce-scatter is in flight while chunk j+1 computes; the sums
             and the residual at the end.

Chunking in token order matters for the causal attention: a chunk made of
block k of every rank (the MLP's chunks) is not a prefix of the sequence
(rank 1's block 0 attends to all of rank 0's blocks), so the attention walks
the global blocks in order while the all_gathers still move block k of every
rank at once (balanced in both directions of the link).

Gloo in torch 1.13 has no reduce_scatter / _reduce_scatter_base /
_allgather_base, so: allgather = dist.all_gather into views of one
preallocated buffer; reduce-scatter = dist.all_to_all_single (rank p gets
rows p of every rank's partial) followed by a local sum, as torch_sp_mlp.py
and hostir's runtime do.

Not started by torchrun (Debian's is broken with Python 3.11 + torch 1.13):
start one process per rank with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
(and GLOO_SOCKET_IFNAME where needed) in the environment, or let this script
start --ranks (default 2) local ranks on 127.0.0.1 itself when RANK is not
set.

Timing as torch_sp_mlp.py: --warmup untimed runs of every program, then
--runs timed runs of each, interleaved; each timed run between barriers. Rank
0 prints the checks, then one JSON line:
    {"serial_ms": .., "pipelined_ms": .., "chunks": C, "check": true, ...}
"pipelined_ms"/"chunks" are the best over --chunks; "pipelined" lists every
C; "breakdown" gives, for chunk count 1 (the serial program) and each C, the
median of the compute alone (the same GEMMs, attention, norms and sums, no
communication) and of the communication alone (the same collectives, no
compute).
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

EPS = 1e-5


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_shape_arguments(p, layer=True)
    add_common_arguments(
        p, "chunk counts of the pipelined version, comma-separated; those that do not divide "
        "each rank's tokens are skipped (default 2,4,8,16)", default_port=29632)
    return parse_with_common(p, argv)


def draw(tokens, hidden, ffn, seed=0):
    """The full tensors, drawn in the order and scale of drawTransformerLayer."""
    torch.manual_seed(seed)

    def projection(out, inner):
        return torch.randn(out, inner) / math.sqrt(inner)

    t = {"x": torch.randn(tokens, hidden),
         "ln1_w": 1 + 0.1 * torch.randn(hidden), "ln1_b": 0.1 * torch.randn(hidden)}
    for name in ("wq", "wk", "wv", "wo"):
        t[name] = projection(hidden, hidden)
    t["ln2_w"] = 1 + 0.1 * torch.randn(hidden)
    t["ln2_b"] = 0.1 * torch.randn(hidden)
    t["w1"] = projection(ffn, hidden)
    t["w2"] = projection(hidden, ffn)
    return t


def reference(t, heads):
    """The layer in one process, written the usual way: [H, H] projections,
    heads by view, a [T, T] causal mask."""
    tokens, hidden = t["x"].shape
    hd = hidden // heads

    def split_heads(a):
        return a.view(tokens, heads, hd).transpose(0, 1)

    xn = F.layer_norm(t["x"], [hidden], t["ln1_w"], t["ln1_b"], EPS)
    q, k, v = (split_heads(F.linear(xn, t[w])) for w in ("wq", "wk", "wv"))
    scores = q @ k.transpose(1, 2) / math.sqrt(hd)
    future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
    attention = torch.softmax(scores.masked_fill(future, float("-inf")), -1) @ v
    h = t["x"] + F.linear(attention.transpose(0, 1).reshape(tokens, hidden), t["wo"])
    hn = F.layer_norm(h, [hidden], t["ln2_w"], t["ln2_b"], EPS)
    return h + F.linear(F.gelu(F.linear(hn, t["w1"])), t["w2"])


class Plan:
    """The per-chunk-count buffers of the pipelined version (C chunks of m
    rows per rank); all [C, W, m, H] buffers are rank-major within a chunk,
    as all_gather fills them and all_to_all_single splits them."""

    def __init__(self, layer, chunks):
        W, H, T = layer.world, layer.H, layer.T
        self.chunks, self.m = chunks, layer.rows // chunks
        m = self.m
        self.x_blocks = list(layer.x_local.split(m, 0))
        self.h_blocks = list(layer.h.split(m, 0))
        self.y_blocks = list(layer.y.split(m, 0))
        self.attn_gathered = torch.empty(chunks, W, m, H)
        self.attn_partial = torch.empty(chunks, W, m, H)
        self.attn_received = torch.empty(chunks, W, m, H)
        self.mlp_gathered = torch.empty(chunks, W, m, H)
        self.mlp_received = torch.empty(chunks, W, m, H)
        self.k = torch.empty(layer.local_heads, T, layer.hd)   # global token order
        self.v = torch.empty(layer.local_heads, T, layer.hd)
        self.diagonal_future = torch.ones(m, m, dtype=torch.bool).triu(1)
        # Filled by a run, kept so that the buffers a collective reads stay
        # alive until it is waited for.
        self.xn_blocks = [None] * chunks
        self.hn_blocks = [None] * chunks
        self.mlp_partials = [None] * chunks


def set_geometry(layer, args, rank, world):
    """Checks that the layer splits over the ranks and sets its geometry on
    `layer`: rank, world, T, H, hd, local_heads, local_hidden (H / W: this
    rank's head features), rows (T / W) and the attention scale."""
    T, H, nh, Fdim = args.tokens, args.hidden, args.heads, args.ffn
    if T % world or Fdim % world or nh % world or H % nh:
        raise SystemExit(f"tokens ({T}), ffn ({Fdim}) and heads ({nh}) must divide by the "
                         f"{world} ranks, and hidden ({H}) by heads")
    layer.rank, layer.world, layer.T, layer.H = rank, world, T, H
    layer.hd, layer.local_heads = H // nh, nh // world
    layer.local_hidden = layer.local_heads * layer.hd
    layer.rows = T // world
    layer.scale = 1.0 / math.sqrt(layer.hd)


class Layer:
    """One rank's shards, its reference rows and its buffers."""

    def __init__(self, args, rank, world):
        T, H, nh, Fdim = args.tokens, args.hidden, args.heads, args.ffn
        set_geometry(self, args, rank, world)
        t = draw(T, H, Fdim)
        self.expected = reference(t, nh).chunk(world, 0)[rank].contiguous()
        self.x_local = t["x"].chunk(world, 0)[rank].contiguous()
        self.ln1 = (t["ln1_w"], t["ln1_b"])
        self.ln2 = (t["ln2_w"], t["ln2_b"])
        # This rank's heads: rows of Wq/Wk/Wv (fused into one GEMM), columns of Wo.
        self.w_qkv = torch.cat([t[w].chunk(world, 0)[rank] for w in ("wq", "wk", "wv")])
        self.wo_t = t["wo"].chunk(world, 1)[rank].t().contiguous()    # [H/W, H]
        self.w1_local = t["w1"].chunk(world, 0)[rank].contiguous()
        self.w2_local = t["w2"].chunk(world, 1)[rank].contiguous()
        del t
        # Serial buffers.
        self.gathered = torch.empty(T, H)                    # rank-major = token order
        self.gathered_views = list(self.gathered.chunk(world, 0))
        self.received = torch.empty(world, self.rows, H)
        self.future = torch.ones(T, T, dtype=torch.bool).triu(1)
        self.h = torch.empty(self.rows, H)
        self.y = torch.empty(self.rows, H)
        self.plans = {}
        self.serial_inputs = [None, None]   # the normalized local rows of each half

    def plan(self, chunks):
        if chunks not in self.plans:
            self.plans[chunks] = Plan(self, chunks)
        return self.plans[chunks]

    # ---- the math, shared by every version ---------------------------------
    def qkv(self, rows):
        """The fused projection of `rows` [n, H] -> q, k, v [local_heads, n, hd]."""
        n, Hl = rows.shape[0], self.local_hidden
        qkv = F.linear(rows, self.w_qkv)                        # [n, 3 H/W]
        return [qkv[:, i * Hl:(i + 1) * Hl].view(n, self.local_heads, self.hd).transpose(0, 1)
                for i in range(3)]

    def merge_heads(self, ctx):
        """[local_heads, n, hd] -> [n, H/W] (head-major features, as Wo's columns)."""
        return ctx.transpose(0, 1).reshape(ctx.shape[1], self.local_hidden)

    def mlp(self, rows):
        return F.linear(F.gelu(F.linear(rows, self.w1_local)), self.w2_local)

    def attention_serial(self, rows):
        """All T queries against all T keys, masked: a partial [T, H]."""
        q, k, v = self.qkv(rows)
        scores = torch.matmul(q, k.transpose(1, 2)).mul_(self.scale)      # [nh/W, T, T]
        scores.masked_fill_(self.future, float("-inf"))
        ctx = torch.matmul(torch.softmax(scores, -1), v)
        return torch.matmul(self.merge_heads(ctx), self.wo_t)

    def attention_block(self, plan, b, rows, out):
        """Global block b (tokens [b*m, (b+1)*m)) of rows [m, H]: its k/v rows
        into the K/V buffers, its queries against K/V rows [0, (b+1)*m) only,
        its out-projection partial [m, H] into `out`."""
        lo, hi = b * plan.m, (b + 1) * plan.m
        q, k, v = self.qkv(rows)
        plan.k[:, lo:hi].copy_(k)
        plan.v[:, lo:hi].copy_(v)
        scores = torch.matmul(q, plan.k[:, :hi].transpose(1, 2)).mul_(self.scale)
        scores[:, :, lo:].masked_fill_(plan.diagonal_future, float("-inf"))
        ctx = torch.matmul(torch.softmax(scores, -1), plan.v[:, :hi])
        torch.matmul(self.merge_heads(ctx), self.wo_t, out=out)

    def reduce_into(self, received, out, residual):
        """out = residual + the sum of the W received row blocks."""
        torch.sum(received, 0, out=out)
        out.add_(residual)

    # ---- serial ------------------------------------------------------------
    def serial(self):
        xn = F.layer_norm(self.x_local, [self.H], *self.ln1, EPS)
        dist.all_gather(self.gathered_views, xn)
        partial = self.attention_serial(self.gathered)                  # [T, H]
        dist.all_to_all_single(self.received, partial.view(self.world, self.rows, self.H))
        self.reduce_into(self.received, self.h, self.x_local)
        hn = F.layer_norm(self.h, [self.H], *self.ln2, EPS)
        dist.all_gather(self.gathered_views, hn)
        partial = self.mlp(self.gathered)
        dist.all_to_all_single(self.received, partial.view(self.world, self.rows, self.H))
        self.reduce_into(self.received, self.y, self.h)
        self.serial_inputs = [xn, hn]
        return self.y

    # ---- pipelined ---------------------------------------------------------
    def pipelined(self, chunks):
        p = self.plan(chunks)
        W, C, rank = self.world, chunks, self.rank
        # Attention half: every chunk's all_gather posted up front.
        gathers = []
        for k in range(C):
            p.xn_blocks[k] = F.layer_norm(p.x_blocks[k], [self.H], *self.ln1, EPS)
            gathers.append(dist.all_gather(list(p.attn_gathered[k].unbind(0)), p.xn_blocks[k],
                                           async_op=True))
        arrived = [False] * C
        scatters = []
        for b in range(W * C):                        # global blocks, in token order
            r, k = divmod(b, C)
            if r == rank:
                rows = p.xn_blocks[k]
            else:
                if not arrived[k]:
                    gathers[k].wait()
                    arrived[k] = True
                rows = p.attn_gathered[k, r]
            self.attention_block(p, b, rows, p.attn_partial[k, r])
            if r == W - 1:                            # chunk k's partial is complete
                scatters.append(dist.all_to_all_single(p.attn_received[k], p.attn_partial[k],
                                                       async_op=True))
        for k in range(C):
            if not arrived[k]:                        # W = 1: nothing read from it
                gathers[k].wait()
        # MLP half: chunk k's all_gather posted as soon as its h rows are summed.
        mlp_gathers = []
        for k in range(C):
            scatters[k].wait()
            self.reduce_into(p.attn_received[k], p.h_blocks[k], p.x_blocks[k])
            p.hn_blocks[k] = F.layer_norm(p.h_blocks[k], [self.H], *self.ln2, EPS)
            mlp_gathers.append(dist.all_gather(list(p.mlp_gathered[k].unbind(0)),
                                               p.hn_blocks[k], async_op=True))
        mlp_scatters = []
        for k in range(C):
            mlp_gathers[k].wait()
            p.mlp_partials[k] = self.mlp(p.mlp_gathered[k].view(W * p.m, self.H))
            mlp_scatters.append(dist.all_to_all_single(
                p.mlp_received[k], p.mlp_partials[k].view(W, p.m, self.H), async_op=True))
        for k in range(C):
            mlp_scatters[k].wait()
            self.reduce_into(p.mlp_received[k], p.y_blocks[k], p.h_blocks[k])
        return self.y

    # ---- the two halves on their own, for the breakdown ----------------------
    # The same computation / collectives as serial() (chunks = 1) or
    # pipelined(chunks), on buffers a checked run has filled.
    def compute_only(self, chunks):
        if chunks == 1:
            xn = F.layer_norm(self.x_local, [self.H], *self.ln1, EPS)
            self.attention_serial(self.gathered)
            self.reduce_into(self.received, self.h, self.x_local)
            F.layer_norm(self.h, [self.H], *self.ln2, EPS)
            self.mlp(self.gathered)
            self.reduce_into(self.received, self.y, self.h)
            return xn
        p = self.plan(chunks)
        W, C = self.world, chunks
        for k in range(C):
            F.layer_norm(p.x_blocks[k], [self.H], *self.ln1, EPS)
        for b in range(W * C):
            r, k = divmod(b, C)
            self.attention_block(p, b, p.attn_gathered[k, r], p.attn_partial[k, r])
        for k in range(C):
            self.reduce_into(p.attn_received[k], p.h_blocks[k], p.x_blocks[k])
            F.layer_norm(p.h_blocks[k], [self.H], *self.ln2, EPS)
        for k in range(C):
            self.mlp(p.mlp_gathered[k].view(W * p.m, self.H))
        for k in range(C):
            self.reduce_into(p.mlp_received[k], p.y_blocks[k], p.h_blocks[k])
        return None

    def comm_only(self, chunks):
        if chunks == 1:
            xn, hn = self.serial_inputs
            partial = self.gathered.view(self.world, self.rows, self.H)
            for local in (xn, hn):
                dist.all_gather(self.gathered_views, local)
                dist.all_to_all_single(self.received, partial)
            return
        p = self.plan(chunks)
        works = []
        for k in range(chunks):
            works.append(dist.all_gather(list(p.attn_gathered[k].unbind(0)), p.xn_blocks[k],
                                         async_op=True))
        for k in range(chunks):
            works.append(dist.all_to_all_single(p.attn_received[k], p.attn_partial[k],
                                                async_op=True))
        for k in range(chunks):
            works.append(dist.all_gather(list(p.mlp_gathered[k].unbind(0)), p.hn_blocks[k],
                                         async_op=True))
        for k in range(chunks):
            partial = p.mlp_partials[k].view(self.world, p.m, self.H)
            works.append(dist.all_to_all_single(p.mlp_received[k], partial, async_op=True))
        for w in works:
            w.wait()


def main(argv):
    args = parse_args(argv)
    rank, world = join_ranks(__file__, args, argv)
    layer = Layer(args, rank, world)
    chunk_list = [c for c in args.chunk_list if layer.rows % c == 0]
    skipped = [c for c in args.chunk_list if layer.rows % c != 0]
    if rank == 0 and skipped:
        print(f"torch_sp_layer: skipping chunk counts {skipped}: they do not divide the "
              f"{layer.rows} tokens of each rank", file=sys.stderr, flush=True)

    def check(name, out):
        diff = float((out - layer.expected).abs().max())
        ok = bool(torch.allclose(out, layer.expected, rtol=1e-4, atol=1e-4))
        print(f"[rank {rank}] check {name} against the single-process torch layer: "
              f"max |diff| = {diff:.3g} {'OK' if ok else 'MISMATCH'}", flush=True)
        flags = torch.tensor([0.0 if ok else 1.0, diff])
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)   # every rank's shard must match
        return flags[0].item() == 0.0, flags[1].item()

    serial_ok, serial_diff = check("serial", layer.serial().clone())
    all_ok = serial_ok
    checks = {}
    programs = {"serial": layer.serial}
    for c in chunk_list:
        checks[c] = check(f"pipelined {c}", layer.pipelined(c).clone())
        all_ok = all_ok and checks[c][0]
        programs[f"pipelined {c}"] = lambda c=c: layer.pipelined(c)
    breakdown_chunks = add_breakdown_programs(args, programs, chunk_list, layer)
    measured = timed(args, programs)
    serial_ms, serial_runs = measured["serial"]
    pipelined = []
    for c in chunk_list:
        ms, runs = measured[f"pipelined {c}"]
        pipelined.append({"chunks": c, "schedule": "all-ahead", "median_ms": ms,
                          "runs_ms": runs, "check": checks[c][0], "max_abs_diff": checks[c][1]})
    breakdown = breakdown_of(measured, breakdown_chunks)
    best = min(pipelined, key=lambda p: p["median_ms"]) if pipelined else None
    result = {
        "serial_ms": serial_ms,
        "pipelined_ms": best["median_ms"] if best else None,
        "chunks": best["chunks"] if best else None,
        "schedule": "all-ahead",
        "check": all_ok,
        "serial_runs_ms": serial_runs, "serial_max_abs_diff": serial_diff,
        "max_abs_diff": max([serial_diff] + [checks[c][1] for c in chunk_list]),
        "pipelined": pipelined,
        "breakdown": breakdown,
        "config": {"program": "layer", "ranks": world, "tokens": args.tokens,
                   "hidden": args.hidden, "heads": args.heads, "ffn": args.ffn,
                   "runs": args.runs, "warmup": args.warmup, "threads": args.threads,
                   "torch": torch.__version__, "backend": "gloo",
                   "gloo_socket_ifname": os.environ.get("GLOO_SOCKET_IFNAME", "")},
    }
    if rank == 0:
        print(f"check: {'PASSED' if all_ok else 'FAILED'} (max |diff| over every rank and "
              f"program {result['max_abs_diff']:.3g}, rtol = atol = 1e-4)", flush=True)
    return finish(args, rank, result, all_ok)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
