#!/usr/bin/python3
"""Hand-written torch.distributed (Gloo) training-step baselines of the sp-layer.

One training step (forward + backward: the output and the grads of x and of
every weight) of the pre-norm causal decoder layer of torch_sp_layer.py
(h = x + attention(ln1(x)), y = h + mlp(ln2(h))), Megatron-LM sequence +
tensor parallel over W = WORLD_SIZE ranks: x token-sharded, each rank owns
nh/W heads (its rows of the fused Wq|Wk|Wv, its columns of Wo) and its F/W
rows of w1, columns of w2; the layer norms' weights are replicated, their
grads summed over the ranks (Megatron all-reduces the grads of the
sequence-parallel layer-norm weights after the backward; one blocking
all_reduce of the four [H] grads, in every version). dy = randn(T, H), drawn
after the layer's tensors (torch_sp_layer.draw).

Versions (as torch_sp_mlp_train.py, which holds the shared pieces):
  blocking   torch autograd through Megatron's sequence-parallel Functions
             (ColumnParallelLinearSP for the fused q/k/v projection and w1:
             forward allgather, backward re-gather, dgrad, reduce-scatter,
             wgrad; ReduceScatterToSequenceParallelRegion after Wo and w2:
             forward reduce-scatter, backward allgather), attention over the
             full masked [T, T] scores as Megatron's core attention, every
             collective blocking.
  async      the same with Megatron's async column-parallel backward: the
             re-gather during the dgrad GEMM, the input grad's reduce-scatter
             during the wgrad GEMM.
  pipelined  a whole-step pipeline by hand in C chunks per rank (block k of
             rank r = global block b = r*C + k, m = T/(W*C) tokens).
             Forward as torch_sp_layer.py's pipelined layer (every allgather
             up front, the attention in token order with each query block
             against its causal prefix only, each chunk's reduce-scatter
             posted when its last block is done), keeping q, K, V, the
             softmax probabilities per block, the attention context, the MLP's
             pre-GELU and GELU rows, and the layer norms' means/rstds.
             Backward, once y is complete: every chunk's allgather of dy, and
             the re-gathers of ln2(h) and ln1(x) (the wgrads' inputs), posted
             up front. MLP half in reverse chunk order (the attention's
             backward needs the last tokens first): chunk k's dgrads, its
             input-grad reduce-scatter posted at once, its wgrads under it;
             when chunk k's reduce-scatter has landed (checked after the next
             chunk's GEMMs), LN2's backward and the residual give dh_k and
             its allgather is posted. Attention half: the global blocks in
             reverse token order (so block b's dK/dV are complete once it is
             done: only query blocks >= b attend to it), each as soon as its
             dh rows are here: Wo's dgrad, the attention's backward against
             the causal prefix, the fused q/k/v dgrad into chunk k's partial,
             chunk k's reduce-scatter posted when rank 0's block k (its last
             in this order) is done, then the wgrads (Wo, q/k/v). LN1's
             backward and the residual per chunk as the reduce-scatters land.
  pipelined-keep  the same, the backward reading the gathered ln1(x) and
             ln2(h) the forward kept instead of re-gathering them.

Every rank checks its output rows and its part of every grad of every version
against single-process torch autograd on the whole layer (torch_sp_layer.
reference): max |diff| <= 1e-4 * max |reference| per tensor. Flags, launch
and timing as torch_sp_layer.py / torch_sp_mlp_train.py; rank 0 prints the
table and one JSON line {"blocking_ms", "async_ms", "pipelined_ms", "chunks",
"check", ...}.
"""

import argparse
import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

from torch_harness import (add_common_arguments, add_shape_arguments, join_ranks,
                           parse_with_common)
from torch_sp_layer import EPS, draw, reference, set_geometry
from torch_sp_mlp_train import (ColumnParallelLinearSP, add_train_arguments, all_gather_rows,
                                post_reduce_scatter, row_parallel_linear_sp, run_baselines,
                                sum_blocks)

LN_GRADS = ("dln1_w", "dln1_b", "dln2_w", "dln2_b")


def layer_norm_backward_into(grads, names, first, d_normed, x, saved, weight, bias, residual,
                             out):
    """One chunk's layer-norm backward: out = its input grad + `residual`;
    its weight and bias grads start (first chunk) or add to grads[names]."""
    _, mean, rstd = saved
    dx, dw, db = torch.ops.aten.native_layer_norm_backward(
        d_normed, x, [x.shape[-1]], mean, rstd, weight, bias, [True, True, True])
    torch.add(dx, residual, out=out)
    for name, part in zip(names, (dw, db)):
        grads[name].copy_(part) if first else grads[name].add_(part)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_shape_arguments(p, layer=True)
    add_common_arguments(
        p, "chunk counts of the pipelined versions, comma-separated; those that do not divide "
        "each rank's tokens are skipped (default 2,4,8,16)", default_port=29634)
    add_train_arguments(p)
    return parse_with_common(p, argv)


def mm_into(dst, a, b, first):
    """dst = a @ b when first, else dst += a @ b."""
    if first:
        torch.matmul(a, b, out=dst)
    else:
        dst.addmm_(a, b)


def all_reduce_ln_grads(grads):
    """Sums the replicated layer norms' grads over the ranks (one flat
    blocking all_reduce, as Megatron's coalesced all-reduce of the
    sequence-parallel parameters' grads)."""
    flat = torch.cat(grads)
    dist.all_reduce(flat)
    for g, summed in zip(grads, flat.split([g.numel() for g in grads])):
        g.copy_(summed)


class Plan:
    """The per-chunk-count buffers of the pipelined step; every [C, W, m, H]
    buffer is rank-major within a chunk, as all_gather fills it and
    all_to_all_single splits it."""

    def __init__(self, layer, chunks):
        W, H, T, C = layer.world, layer.H, layer.T, chunks
        self.m = m = layer.rows // chunks
        split = lambda t: list(t.split(m, 0))  # noqa: E731
        self.x_blocks, self.h_blocks, self.y_blocks = split(layer.x), split(layer.h), split(layer.y)
        self.dy_blocks, self.dh_blocks, self.dx_blocks = (split(layer.dy), split(layer.dh),
                                                          split(layer.dx))
        buffer = lambda: torch.empty(C, W, m, H)  # noqa: E731
        self.attn_gathered, self.attn_partial, self.attn_received = buffer(), buffer(), buffer()
        self.mlp_gathered, self.mlp_received = buffer(), buffer()
        self.dy_gathered, self.dh_gathered = buffer(), buffer()
        self.attn_regathered, self.mlp_regathered = buffer(), buffer()
        self.dhn_received, self.dxn_partial, self.dxn_received = buffer(), buffer(), buffer()
        shape = (layer.local_heads, T, layer.hd)
        self.q, self.k, self.v = torch.empty(shape), torch.empty(shape), torch.empty(shape)
        self.dk, self.dv = torch.empty(shape), torch.empty(shape)
        self.ctx = torch.empty(T, layer.local_hidden)            # global token order
        self.diagonal_future = torch.ones(m, m, dtype=torch.bool).triu(1)
        # Filled by the forward, read by the backward (and kept alive until
        # the collectives that read them are waited for).
        self.probs = [None] * (W * C)
        self.ln1 = [None] * C        # (xn, mean, rstd) per chunk
        self.ln2 = [None] * C        # (hn, mean, rstd)
        self.pre_gelu = [None] * C   # [W m, F/W]
        self.post_gelu = [None] * C
        self.keep_alive = []


class Layer:
    """One rank's shards, its part of the reference and the buffers."""

    def __init__(self, args, rank, world):
        T, H, nh, Fdim = args.tokens, args.hidden, args.heads, args.ffn
        set_geometry(self, args, rank, world)
        t = draw(T, H, Fdim)
        dy = torch.randn(T, H)
        # Single-process torch autograd on the whole layer.
        leaves = {name: v.clone().requires_grad_(True) for name, v in t.items()}
        y = reference(leaves, nh)
        y.backward(dy)
        rows = lambda a: a.chunk(world, 0)[rank].contiguous()  # noqa: E731
        grad = {name: v.grad for name, v in leaves.items()}
        self.expected = {
            "y": rows(y.detach()), "dx": rows(grad["x"]),
            "dln1_w": grad["ln1_w"], "dln1_b": grad["ln1_b"],
            "dw_qkv": torch.cat([rows(grad[w]) for w in ("wq", "wk", "wv")]),
            "dwo": grad["wo"].chunk(world, 1)[rank].contiguous(),
            "dln2_w": grad["ln2_w"], "dln2_b": grad["ln2_b"],
            "dw1": rows(grad["w1"]), "dw2": grad["w2"].chunk(world, 1)[rank].contiguous()}
        del leaves, y, grad
        # This rank's inputs and weights.
        self.x, self.dy = rows(t["x"]), rows(dy)
        self.ln1_w, self.ln1_b, self.ln2_w, self.ln2_b = (t[n].clone() for n in
                                                          ("ln1_w", "ln1_b", "ln2_w", "ln2_b"))
        self.w_qkv = torch.cat([rows(t[w]) for w in ("wq", "wk", "wv")])   # [3 H/W, H]
        self.wo = t["wo"].chunk(world, 1)[rank].contiguous()                # [H, H/W]
        self.w1 = rows(t["w1"])                                             # [F/W, H]
        self.w2 = t["w2"].chunk(world, 1)[rank].contiguous()                # [H, F/W]
        del t
        # The autograd versions' leaves.
        self.x_leaf = self.x.clone().requires_grad_(True)
        self.params = {name: torch.nn.Parameter(getattr(self, name).clone()) for name in
                       ("ln1_w", "ln1_b", "w_qkv", "wo", "ln2_w", "ln2_b", "w1", "w2")}
        self.future = torch.ones(T, T, dtype=torch.bool).triu(1)
        # The pipelined version's outputs and grads.
        self.h, self.y = torch.empty_like(self.x), torch.empty_like(self.x)
        self.dh, self.dx = torch.empty_like(self.x), torch.empty_like(self.x)
        self.grads = {"dln1_w": torch.empty(H), "dln1_b": torch.empty(H),
                      "dw_qkv": torch.empty_like(self.w_qkv), "dwo": torch.empty_like(self.wo),
                      "dln2_w": torch.empty(H), "dln2_b": torch.empty(H),
                      "dw1": torch.empty_like(self.w1), "dw2": torch.empty_like(self.w2)}
        self.plans = {}

    def split_heads(self, qkv):
        """[n, 3 H/W] -> q, k, v [local_heads, n, hd]."""
        n, Hl = qkv.shape[0], self.local_hidden
        return [qkv[:, i * Hl:(i + 1) * Hl].view(n, self.local_heads, self.hd).transpose(0, 1)
                for i in range(3)]

    def merge_heads(self, a):
        """[local_heads, n, hd] -> [n, H/W]."""
        return a.transpose(0, 1).reshape(a.shape[1], self.local_hidden)

    # ---- blocking / async: torch autograd through Megatron's Functions ----------
    def drop_grads(self):
        self.x_leaf.grad = None
        for w in self.params.values():
            w.grad = None

    def autograd_step(self, overlap):
        p = self.params
        self.drop_grads()
        H = self.H
        xn = F.layer_norm(self.x_leaf, [H], p["ln1_w"], p["ln1_b"], EPS)
        q, k, v = self.split_heads(ColumnParallelLinearSP.apply(xn, p["w_qkv"], overlap))
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale              # [nh/W, T, T]
        probs = torch.softmax(scores.masked_fill(self.future, float("-inf")), -1)
        ctx = self.merge_heads(torch.matmul(probs, v))                         # [T, H/W]
        h = self.x_leaf + row_parallel_linear_sp(ctx, p["wo"])
        hn = F.layer_norm(h, [H], p["ln2_w"], p["ln2_b"], EPS)
        a = ColumnParallelLinearSP.apply(hn, p["w1"], overlap)
        y = h + row_parallel_linear_sp(F.gelu(a), p["w2"])
        y.backward(self.dy)
        all_reduce_ln_grads([p[n].grad for n in ("ln1_w", "ln1_b", "ln2_w", "ln2_b")])
        got = {"y": y, "dx": self.x_leaf.grad}
        got.update({"d" + n: w.grad for n, w in p.items()})
        return got

    # ---- pipelined ----------------------------------------------------------
    def attention_forward(self, p, b, rows, out):
        """Global block b of rows [m, H]: q/k/v into their buffers, its queries
        against the causal prefix, its probabilities and context kept, the
        out-projection partial into `out`."""
        lo, hi = b * p.m, (b + 1) * p.m
        q, k, v = self.split_heads(F.linear(rows, self.w_qkv))
        p.q[:, lo:hi].copy_(q)
        p.k[:, lo:hi].copy_(k)
        p.v[:, lo:hi].copy_(v)
        scores = torch.matmul(p.q[:, lo:hi], p.k[:, :hi].transpose(1, 2)).mul_(self.scale)
        scores[:, :, lo:].masked_fill_(p.diagonal_future, float("-inf"))
        p.probs[b] = torch.softmax(scores, -1)
        p.ctx[lo:hi].copy_(self.merge_heads(torch.matmul(p.probs[b], p.v[:, :hi])))
        torch.matmul(p.ctx[lo:hi], self.wo.t(), out=out)

    def attention_backward(self, p, b, d_out, dxn_out, first):
        """Global block b, in reverse token order: Wo's dgrad, the attention's
        backward against the causal prefix (block b's dK/dV are then
        complete), the fused q/k/v dgrad into dxn_out; returns the wgrad
        work as a closure (run after the reduce-scatter is posted)."""
        lo, hi, m = b * p.m, (b + 1) * p.m, p.m
        dctx = torch.matmul(d_out, self.wo)                                   # [m, H/W]
        dctx_h = dctx.view(m, self.local_heads, self.hd).transpose(0, 1)
        probs = p.probs[b]                                                    # [nh/W, m, hi]
        p.dv[:, :hi].baddbmm_(probs.transpose(1, 2), dctx_h)
        dprobs = torch.matmul(dctx_h, p.v[:, :hi].transpose(1, 2))
        dscores = torch._softmax_backward_data(dprobs, probs, -1, probs.dtype).mul_(self.scale)
        dq = torch.matmul(dscores, p.k[:, :hi])
        p.dk[:, :hi].baddbmm_(dscores.transpose(1, 2), p.q[:, lo:hi])
        dqkv = torch.cat([self.merge_heads(dq), self.merge_heads(p.dk[:, lo:hi]),
                          self.merge_heads(p.dv[:, lo:hi])], 1)              # [m, 3 H/W]
        torch.matmul(dqkv, self.w_qkv, out=dxn_out)

        def wgrads(xn):
            mm_into(self.grads["dwo"], d_out.t(), p.ctx[lo:hi], first)
            mm_into(self.grads["dw_qkv"], dqkv.t(), xn, first)
        return wgrads

    def pipelined_step(self, chunks, keep):
        if chunks not in self.plans:
            self.plans[chunks] = Plan(self, chunks)
        p = self.plans[chunks]
        W, C, H, m, rank = self.world, chunks, self.H, p.m, self.rank
        g = self.grads
        p.keep_alive = []

        # ---- forward: attention half, every allgather up front ----
        gathers = []
        for k in range(C):
            p.ln1[k] = torch.native_layer_norm(p.x_blocks[k], [H], self.ln1_w, self.ln1_b, EPS)
            gathers.append(all_gather_rows(p.attn_gathered[k], p.ln1[k][0], async_op=True))
        arrived = [False] * C
        scatters = []
        for b in range(W * C):                        # token order
            r, k = divmod(b, C)
            if r == rank:
                rows = p.ln1[k][0]
            else:
                if not arrived[k]:
                    gathers[k].wait()
                    arrived[k] = True
                rows = p.attn_gathered[k, r]
            self.attention_forward(p, b, rows, p.attn_partial[k, r])
            if r == W - 1:                            # chunk k's partial is complete
                scatters.append(post_reduce_scatter(p.attn_received[k], p.attn_partial[k],
                                                    async_op=True))
        for k in range(C):
            if not arrived[k]:
                gathers[k].wait()
        # ---- forward: MLP half ----
        mlp_gathers = []
        for k in range(C):
            scatters[k].wait()
            sum_blocks(p.attn_received[k], out=p.h_blocks[k]).add_(p.x_blocks[k])
            p.ln2[k] = torch.native_layer_norm(p.h_blocks[k], [H], self.ln2_w, self.ln2_b, EPS)
            mlp_gathers.append(all_gather_rows(p.mlp_gathered[k], p.ln2[k][0], async_op=True))
        mlp_scatters = []
        for k in range(C):
            mlp_gathers[k].wait()
            p.pre_gelu[k] = torch.matmul(p.mlp_gathered[k].view(W * m, H), self.w1.t())
            p.post_gelu[k] = F.gelu(p.pre_gelu[k])
            partial = torch.matmul(p.post_gelu[k], self.w2.t())
            p.keep_alive.append(partial)
            mlp_scatters.append(post_reduce_scatter(p.mlp_received[k], partial, async_op=True))
        for k in range(C):
            mlp_scatters[k].wait()
            sum_blocks(p.mlp_received[k], out=p.y_blocks[k]).add_(p.h_blocks[k])

        # ---- backward, once y is complete: every allgather up front ----
        order = list(reversed(range(C)))             # the attention needs the last tokens first
        dy_gathers, mlp_regathers, attn_regathers = {}, {}, {}
        for k in order:
            dy_gathers[k] = all_gather_rows(p.dy_gathered[k], p.dy_blocks[k], async_op=True)
            if not keep:
                mlp_regathers[k] = all_gather_rows(p.mlp_regathered[k], p.ln2[k][0],
                                                   async_op=True)
        if not keep:
            for k in order:
                attn_regathers[k] = all_gather_rows(p.attn_regathered[k], p.ln1[k][0],
                                                    async_op=True)
        # ---- backward: MLP half ----
        dhn_scatters, dh_gathers = {}, {}

        def finish_mlp_chunk(k):
            """LN2's backward and the residual once chunk k's input grad has
            landed; then dh_k's allgather for the attention's backward."""
            dhn_scatters[k].wait()
            dhn = sum_blocks(p.dhn_received[k].view(W * m, H))
            layer_norm_backward_into(g, ("dln2_w", "dln2_b"), k == order[0], dhn, p.h_blocks[k],
                                     p.ln2[k], self.ln2_w, self.ln2_b, p.dy_blocks[k],
                                     p.dh_blocks[k])
            dh_gathers[k] = all_gather_rows(p.dh_gathered[k], p.dh_blocks[k], async_op=True)

        previous = None
        for k in order:
            first = k == order[0]
            dy_gathers[k].wait()
            d_y = p.dy_gathered[k].view(W * m, H)
            d_gelu = torch.matmul(d_y, self.w2)                                # [W m, F/W]
            d_pre = torch.ops.aten.gelu_backward(d_gelu, p.pre_gelu[k])
            dhn_partial = torch.matmul(d_pre, self.w1)                         # [W m, H]
            p.keep_alive.append(dhn_partial)
            dhn_scatters[k] = post_reduce_scatter(p.dhn_received[k], dhn_partial, async_op=True)
            mm_into(g["dw2"], d_y.t(), p.post_gelu[k], first)
            if keep:
                hn_total = p.mlp_gathered[k]
            else:
                mlp_regathers[k].wait()
                hn_total = p.mlp_regathered[k]
            mm_into(g["dw1"], d_pre.t(), hn_total.view(W * m, H), first)
            if previous is not None:
                finish_mlp_chunk(previous)
            previous = k
        finish_mlp_chunk(previous)
        # ---- backward: attention half, global blocks in reverse token order ----
        arrived = [False] * C
        dxn_scatters = {}
        p.dk.zero_()
        p.dv.zero_()
        for b in reversed(range(W * C)):
            r, k = divmod(b, C)
            if r == rank:
                d_out = p.dh_blocks[k]
            else:
                if not arrived[k]:
                    dh_gathers[k].wait()
                    arrived[k] = True
                d_out = p.dh_gathered[k, r]
            wgrads = self.attention_backward(p, b, d_out, p.dxn_partial[k, r],
                                             first=b == W * C - 1)
            if r == 0:                                # chunk k's input grad is complete
                dxn_scatters[k] = post_reduce_scatter(p.dxn_received[k], p.dxn_partial[k],
                                                      async_op=True)
            if r == rank:
                xn = p.ln1[k][0]
            elif keep:
                xn = p.attn_gathered[k, r]
            else:
                attn_regathers[k].wait()              # waiting twice is harmless
                xn = p.attn_regathered[k, r]
            wgrads(xn)
        for k in range(C):
            if not arrived[k]:
                dh_gathers[k].wait()
            if not keep:
                attn_regathers[k].wait()
        for k in order:
            dxn_scatters[k].wait()
            dxn = sum_blocks(p.dxn_received[k].view(W * m, H))
            layer_norm_backward_into(g, ("dln1_w", "dln1_b"), k == order[0], dxn, p.x_blocks[k],
                                     p.ln1[k], self.ln1_w, self.ln1_b, p.dh_blocks[k],
                                     p.dx_blocks[k])
        all_reduce_ln_grads([g[n] for n in LN_GRADS])
        got = {"y": self.y, "dx": self.dx}
        got.update(g)
        return got


def main(argv):
    args = parse_args(argv)
    rank, world = join_ranks(__file__, args, argv)
    layer = Layer(args, rank, world)
    chunk_list = [c for c in args.chunk_list if layer.rows % c == 0]
    skipped = [c for c in args.chunk_list if layer.rows % c != 0]
    if rank == 0 and skipped:
        print(f"torch_sp_layer_train: skipping chunk counts {skipped}: they do not divide the "
              f"{layer.rows} tokens of each rank", file=sys.stderr, flush=True)
    config = {"program": "layer-train", "ranks": world, "tokens": args.tokens,
              "hidden": args.hidden, "heads": args.heads, "ffn": args.ffn, "runs": args.runs,
              "warmup": args.warmup, "threads": args.threads, "torch": torch.__version__,
              "backend": "gloo", "gloo_socket_ifname": os.environ.get("GLOO_SOCKET_IFNAME", "")}
    return run_baselines(args, rank, world, layer, chunk_list, config,
                         f"sp-layer training step, T={args.tokens} H={args.hidden} "
                         f"heads={args.heads} F={args.ffn}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
