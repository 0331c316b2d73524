#!/usr/bin/env python3
"""A whole transformer layer, sharded like Megatron sequence + tensor parallelism.

    build/tools/hostir launch -n 2 -- /usr/bin/python3 examples/transformer_layer.py
    /usr/bin/python3 -m hostir.torchrun --standalone --nproc_per_node=2 \
        examples/transformer_layer.py
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29600 mpirun -np 2 -x MASTER_ADDR -x MASTER_PORT \
        /usr/bin/python3 examples/transformer_layer.py
    /usr/bin/python3 examples/transformer_layer.py      # a world of one

A pre-norm causal decoder layer, h = x + attention(layer_norm(x)),
y = h + mlp(layer_norm(h)), written as plain math with fd.ops. The schedule
only marks shardings: x, h and y on tokens, the q/k/v/out projections on
heads (each rank owns heads / ranks of them), the MLP weights on the FFN
axis; hostir's sharding propagation and lowering add the collectives (the
tokens allgathered for attention and for the MLP, the partial sums
reduce-scattered back onto the tokens). Every rank checks its shard against
the same layer written the usual way in torch in this process.
"""

import argparse
import math

import torch

import hostir
import hostir.distributed as dist

DIDx = hostir.ParallelType.DIDx


class TransformerLayer(hostir.FusionDefinition):
    """Inputs: x [T, H]; ln1 weight, bias [H]; wq, wk, wv [heads, H, hd];
    wo [heads, hd, H]; ln2 weight, bias [H]; w1 [F, H]; w2 [H, F]."""

    def __init__(self, head_dim, devices, chunks=1):
        super().__init__()
        self.head_dim, self.devices, self.chunks = head_dim, devices, chunks

    def definition(self):
        fd = self
        matrix = dict(shape=[-1, -1], contiguity=[True, True])
        vector = dict(shape=[-1], contiguity=[True])
        per_head = dict(shape=[-1, -1, -1], contiguity=[True, True, True])
        self.x = fd.define_tensor(**matrix)
        ln1_w, ln1_b = fd.define_tensor(**vector), fd.define_tensor(**vector)
        self.wq, self.wk, self.wv, self.wo = (fd.define_tensor(**per_head) for _ in range(4))
        ln2_w, ln2_b = fd.define_tensor(**vector), fd.define_tensor(**vector)
        self.w1, self.w2 = fd.define_tensor(**matrix), fd.define_tensor(**matrix)

        # Attention: one allgather of the normalized tokens feeds q, k, v.
        self.gathered = fd.ops.set(fd.ops.layer_norm(self.x, 1, ln1_w, ln1_b))
        self.q = fd.ops.matmul(self.gathered, self.wq)  # [heads, T, hd]
        self.k = fd.ops.matmul(self.gathered, self.wk)
        self.v = fd.ops.matmul(self.gathered, self.wv)
        scores = (self.q @ fd.ops.permute(self.k, [0, 2, 1])) * (1.0 / math.sqrt(self.head_dim))
        tokens = fd.ops.size(self.x, 0)
        mask = fd.ops.causal_mask(tokens, tokens)
        probs = fd.ops.softmax(fd.ops.where(mask, scores, float("-inf")), -1)
        # The out-projection per head, summed over the heads.
        self.attention = fd.ops.sum((probs @ self.v) @ self.wo, [0])
        self.h = self.x + self.attention

        # The MLP block: column-parallel, GELU, row-parallel.
        self.m = fd.ops.linear(fd.ops.layer_norm(self.h, 1, ln2_w, ln2_b), self.w1)
        self.mlp = fd.ops.linear(fd.ops.gelu(self.m), self.w2)
        fd.add_output(self.h + self.mlp)
        self.inputs = [self.x, ln1_w, ln1_b, self.wq, self.wk, self.wv, self.wo, ln2_w, ln2_b,
                       self.w1, self.w2]

    def shard(self, tensor, axis):
        mesh = hostir.DeviceMesh(list(range(self.devices)))
        self.sched.set_device_mesh(tensor, mesh)
        if axis is not None:
            self.sched.split(tensor, axis, self.devices, inner_split=False)
            self.sched.parallelize(tensor, axis, DIDx)

    def schedule(self):
        sharded_axes = [0, None, None, 0, 0, 0, 0, None, None, 0, 1]
        for tensor, axis in zip(self.inputs, sharded_axes):
            self.shard(tensor, axis)
        self.shard(self.gathered, None)  # replicated: the allgather
        for tensor in (self.q, self.k, self.v):
            self.shard(tensor, 0)  # this rank's heads
            if self.chunks > 1:
                # The tokens in Stream chunks (loop axes [DIDx, heads/d, T, hd]): the
                # allgather pipelines with the projections, each query chunk attends to
                # the keys it sees, its sums over the heads are reduced in the loop.
                self.sched.split(tensor, 2, self.chunks, inner_split=False)
                self.sched.parallelize(tensor, 2, hostir.ParallelType.Stream)
        self.shard(self.attention, 1)  # the heads' sum, reduce-scattered onto the tokens
        self.shard(self.m, 1)
        if self.chunks > 1:
            self.sched.split(self.m, 0, self.chunks, inner_split=False)
            self.sched.parallelize(self.m, 0, hostir.ParallelType.Stream)
        self.shard(self.mlp, 0)


def reference(t, heads):
    """The same layer the usual way: [H, H] projections, heads by view, tril."""
    tokens, hidden = t["x"].shape
    hd = hidden // heads
    F = torch.nn.functional

    def split_heads(a):
        return a.view(tokens, heads, hd).transpose(0, 1)

    xn = F.layer_norm(t["x"], [hidden], t["ln1_w"], t["ln1_b"], 1e-5)
    q, k, v = (split_heads(F.linear(xn, t[w])) for w in ("wq", "wk", "wv"))
    scores = q @ k.transpose(1, 2) / math.sqrt(hd)
    future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
    attention = torch.softmax(scores.masked_fill(future, float("-inf")), -1) @ v
    h = t["x"] + F.linear(attention.transpose(0, 1).reshape(tokens, hidden), t["wo"])
    hn = F.layer_norm(h, [hidden], t["ln2_w"], t["ln2_b"], 1e-5)
    return h + F.linear(F.gelu(F.linear(hn, t["w1"])), t["w2"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=256)
    parser.add_argument("--chunks", type=int, default=1, help="Stream chunks of both halves")
    args = parser.parse_args()
    rank, devices = dist.rank(), dist.world_size()
    heads, hidden = args.heads, args.hidden
    if heads % devices or args.tokens % devices or args.ffn % devices or hidden % heads:
        raise SystemExit(f"--heads {heads}, --tokens {args.tokens} and --ffn {args.ffn} must "
                         f"divide by the {devices} ranks, and --hidden {hidden} by --heads")
    hd = hidden // heads

    torch.manual_seed(0)  # every rank draws the same full tensors
    t = {"x": torch.randn(args.tokens, hidden)}
    for name in ("ln1", "ln2"):
        t[name + "_w"] = 1 + 0.1 * torch.randn(hidden)
        t[name + "_b"] = 0.1 * torch.randn(hidden)
    for name, (out, inner) in {"wq": (hidden, hidden), "wk": (hidden, hidden),
                               "wv": (hidden, hidden), "wo": (hidden, hidden),
                               "w1": (args.ffn, hidden), "w2": (hidden, args.ffn)}.items():
        t[name] = torch.randn(out, inner) / inner**0.5
    expected = reference(t, heads).chunk(devices, 0)[rank]

    # The projections regrouped per head: q = x @ wq[h], out = sum_h attn[h] @ wo[h].
    def per_head(w):
        return w.view(heads, hd, hidden).transpose(1, 2).contiguous()

    full = [t["x"], t["ln1_w"], t["ln1_b"], per_head(t["wq"]), per_head(t["wk"]),
            per_head(t["wv"]), t["wo"].t().contiguous().view(heads, hd, hidden),
            t["ln2_w"], t["ln2_b"], t["w1"], t["w2"]]

    fd = TransformerLayer(hd, devices, args.chunks)
    inputs = dist.shard_inputs(fd, full)  # this rank's shard of each
    if rank == 0:
        # The top level (each HostUnit's own fusion follows it in host_ir()).
        print("# the host program of rank 0:")
        print(fd.host_ir(inputs).split("\nHostUnit ")[0])
    (y,) = fd.execute(inputs)
    error = (y - expected).abs().max().item()
    print(f"[rank {rank}] max |y - torch| = {error:.2e}, output sharding "
          f"{fd.last_output_shardings[0]}")
    assert torch.allclose(y, expected, rtol=1e-4, atol=1e-4), error


if __name__ == "__main__":
    main()
