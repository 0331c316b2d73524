#!/usr/bin/env python3
"""A whole transformer layer, sharded like Megatron sequence + tensor parallelism.

    build/tools/hostir launch -n 2 -- /usr/bin/python3 examples/transformer_layer.py \
        --chunks none,4,auto --baselines --trace layer --json layer.json
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

By default (--chunks none) that is all it writes, and hostir's automatic
stream splits (on by default) decide at the first execute which
collectives to pipeline with their GEMMs and in how many chunks, from the
sizes and this rank's measured link and GEMM rate, or leave the program as
written where pipelining does not pay (fd.overlap_report() says why; rank 0
prints it). A chunk count instead (--chunks 4) adds the Stream splits by
hand (schedule()), for comparison.

The flags and the output are `hostir sp-layer`'s (docs/transformer_layer.md):
sizes, --chunks as none, counts and/or auto (hostir.chunk_choice picks the
count for the hand-written splits from this rank's measured link and GEMM
rate), each program and
the unchunked layer timed interleaved (--runs, medians), --baselines (the
layer's collectives alone; each program's own compute alone, its collectives
replaced by local copies; the compute as plain torch for reference, with the
thread count hostir gives its ops; each pipelined program's fraction of the
ideal gain against its bound), --trace PATH (PATH.json, or PATH.rankN.json
per rank) and --json PATH. Rank 0 prints which ISA and GEMM path ran
("machine: ...").
"""

import argparse
import json
import math
import os
import time

import torch

import hostir
import hostir.distributed as dist

DIDx = hostir.ParallelType.DIDx


class TransformerLayer(hostir.FusionDefinition):
    """Inputs: x [T, H]; ln1 weight, bias [H]; wq, wk, wv [heads, H, hd];
    wo [heads, hd, H]; ln2 weight, bias [H]; w1 [F, H]; w2 [H, F]."""

    def __init__(self, head_dim, devices, chunks=1):
        """chunks: a count for the hand-written Stream splits (1: none), or
        "none": shardings only, hostir's automatic stream splits decide."""
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
        chunked = self.chunks != "none" and self.chunks > 1
        if self.chunks == 1:
            # The unchunked baseline, as written: hostir's automatic stream
            # splits (on by default) would pipeline a program without splits.
            self.sched.automatic_stream_splits(False)
        self.shard(self.gathered, None)  # replicated: the allgather
        for tensor in (self.q, self.k, self.v):
            self.shard(tensor, 0)  # this rank's heads
            if chunked:
                # The tokens in Stream chunks (loop axes [DIDx, heads/d, T, hd]): the
                # allgather pipelines with the projections, each query chunk attends to
                # the keys it sees, its sums over the heads are reduced in the loop.
                self.sched.split(tensor, 2, self.chunks, inner_split=False)
                self.sched.parallelize(tensor, 2, hostir.ParallelType.Stream)
        self.shard(self.attention, 1)  # the heads' sum, reduce-scattered onto the tokens
        self.shard(self.m, 1)
        if chunked:
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


def parse_chunks(text):
    """--chunks: comma-separated none, counts and/or auto, as hostir
    sp-layer's."""
    requests = []
    for item in text.split(","):
        if item not in ("none", "auto") and not (item.isdigit() and int(item) >= 1):
            raise argparse.ArgumentTypeError(
                f"--chunks {text!r}: {item!r} is neither none, a positive count nor auto")
        requests.append(item if item in ("none", "auto") else int(item))
    return requests


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    positive = dict(type=int, metavar="N")
    parser.add_argument("--tokens", default=128, help="rows of x (sequence length)", **positive)
    parser.add_argument("--hidden", default=64, help="columns of x", **positive)
    parser.add_argument("--heads", default=4, help="attention heads (sharded over the ranks)",
                        **positive)
    parser.add_argument("--ffn", default=256, help="the MLP's inner width", **positive)
    parser.add_argument("--chunks", type=parse_chunks, default=["none"],
                        help="programs besides the unchunked one: none (shardings only, hostir "
                        "pipelines where it pays; the default), chunk counts of hand-written "
                        "Stream splits and/or auto (a count chosen for them), e.g. none,4,auto")
    parser.add_argument("--streams", default=hostir.fusion_definition._DEFAULT_STREAMS,
                        help="worker streams", **positive)
    parser.add_argument("--runs", default=5, help="timed runs per program (median)", **positive)
    parser.add_argument("--dump", action="store_true",
                        help="also print the unchunked host program")
    parser.add_argument("--baselines", action="store_true",
                        help="also time the communication alone and the compute alone")
    parser.add_argument("--trace", metavar="PATH",
                        help="trace the first pipelined variant into PATH.json (PATH.rankN.json)")
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON (rank 0)")
    parser.add_argument("--link", default="loopback", help="how the output names the link")
    args = parser.parse_args()
    for name in ("tokens", "hidden", "heads", "ffn", "streams", "runs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} {getattr(args, name)} must be at least 1")
    return parser, args


def check_sizes(parser, args, devices):
    if args.heads % devices or args.tokens % devices or args.ffn % devices:
        parser.error(f"--heads ({args.heads}), --tokens ({args.tokens}) and --ffn ({args.ffn}) "
                     f"must divide by the number of ranks ({devices})")
    if args.hidden % args.heads:
        parser.error(f"--hidden ({args.hidden}) must divide by --heads ({args.heads}): every "
                     f"head has hidden / heads features")
    # Any chunk count: chunk j of a rank's rows holds ceil(rows / chunks) of
    # them, the last ones fewer or none.
    for flag in ("trace", "json"):
        path = getattr(args, flag)
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            parser.error(f"--{flag} {path}: its folder does not exist")


def draw_layer(args):
    """Every rank draws the same full tensors (fixed seed)."""
    torch.manual_seed(0)
    hidden = args.hidden
    t = {"x": torch.randn(args.tokens, hidden)}
    for name in ("ln1", "ln2"):
        t[name + "_w"] = 1 + 0.1 * torch.randn(hidden)
        t[name + "_b"] = 0.1 * torch.randn(hidden)
    for name, (out, inner) in {"wq": (hidden, hidden), "wk": (hidden, hidden),
                               "wv": (hidden, hidden), "wo": (hidden, hidden),
                               "w1": (args.ffn, hidden), "w2": (hidden, args.ffn)}.items():
        t[name] = torch.randn(out, inner) / inner**0.5
    return t


def fusion_inputs(t, heads):
    """The layer's inputs in the fusion's order, the projections regrouped per
    head: q = x @ wq[h], out = sum_h attn[h] @ wo[h]."""
    hidden = t["x"].shape[1]
    hd = hidden // heads

    def per_head(w):
        return w.view(heads, hd, hidden).transpose(1, 2).contiguous()

    return [t["x"], t["ln1_w"], t["ln1_b"], per_head(t["wq"]), per_head(t["wk"]),
            per_head(t["wv"]), t["wo"].t().contiguous().view(heads, hd, hidden),
            t["ln2_w"], t["ln2_b"], t["w1"], t["w2"]]


def compute_only(x_full, local, head_dim):
    """One rank's compute as plain torch on the whole (gathered) tokens: its
    heads' attention and its share of the FFN, no communication. Returns the
    rank's partial output (before the reduce-scatter)."""
    _, ln1_w, ln1_b, wq, wk, wv, wo, ln2_w, ln2_b, w1, w2 = local
    F = torch.nn.functional
    tokens, hidden = x_full.shape
    xn = F.layer_norm(x_full, [hidden], ln1_w, ln1_b, 1e-5)
    q, k, v = xn @ wq, xn @ wk, xn @ wv
    scores = q @ k.transpose(1, 2) / math.sqrt(head_dim)
    future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
    probs = torch.softmax(scores.masked_fill(future, float("-inf")), -1)
    h = x_full + ((probs @ v) @ wo).sum(0)
    hn = F.layer_norm(h, [hidden], ln2_w, ln2_b, 1e-5)
    return F.linear(F.gelu(F.linear(hn, w1)), w2)


def timed(body):
    """Milliseconds from every rank ready to every rank done."""
    dist.barrier()
    start = time.perf_counter()
    body()
    dist.barrier()
    return (time.perf_counter() - start) * 1e3


def title(program):
    if program["name"] == "unchunked":
        return "unchunked"
    if program["name"] == "automatic":
        chunks = program["chunks"]
        return "automatic (" + ("not pipelined" if chunks == 1 else f"{chunks} chunks") + ")"
    auto = ", auto" if program["name"] == "pipelined-auto" else ""
    return f"pipelined{auto} ({program['chunks']} chunks)"


def show_programs(args, programs, inputs):
    """Rank 0: what the automatic stream splits chose and why, the first
    program's definition and host program (known once it has run)."""
    for program in programs:
        if program["name"] == "automatic":
            report = program["fd"].overlap_report()
            print("== what hostir pipelined (automatic stream splits), per collective:")
            print(report if report else "nothing: a world of one has no collectives")
    shown = programs[0]
    print("== the definition:")
    print(shown["fd"])
    # The top level (each HostUnit's own fusion follows it in host_ir()).
    print(f"== host program, {title(shown)}:")
    print(shown["fd"].host_ir(inputs, args.streams).split("\nHostUnit ")[0])
    if args.dump:
        print("== without stream chunking:")
        print(programs[-1]["fd"].host_ir(inputs, args.streams).split("\nHostUnit ")[0])


def main():
    parser, args = parse_arguments()
    rank, devices = dist.rank(), dist.world_size()
    check_sizes(parser, args, devices)
    heads, hidden, tokens = args.heads, args.hidden, args.tokens
    hd = hidden // heads
    dist.init()
    # hostir's ops and the torch baselines get the same cores.
    budget = dist.thread_budget(args.streams)
    torch.set_num_threads(budget["intra_op_threads"])

    t = draw_layer(args)
    expected = reference(t, heads).chunk(devices, 0)[rank]
    full = fusion_inputs(t, heads)

    # Which ISA and GEMM path run (the GEMM of w1's shard, as sp-layer says).
    machine = dist.machine(hidden, args.ffn // devices)

    local_rows = tokens // devices
    # No chunk of a rank's rows left empty (an iteration for nothing).
    candidates = [c for c in (1, 2, 4, 8, 16) if c <= local_rows]
    choice = None
    programs = []
    for request in args.chunks:
        if request == "none":
            # Its chunk count is known after its first execute.
            programs.append({"name": "automatic", "chunks": "none"})
        elif request == "auto":
            cost = hostir.chunk_choice.transformer_layer_cost(tokens, hidden, args.ffn, devices)
            choice = hostir.chunk_choice.choose(cost, candidates)
            programs.append({"name": "pipelined-auto", "chunks": choice["chunks"]})
        else:
            programs.append({"name": "pipelined", "chunks": request})
    programs.append({"name": "unchunked", "chunks": 1})
    for program in programs:
        program["fd"] = TransformerLayer(hd, devices, program["chunks"])
    inputs = dist.shard_inputs(programs[0]["fd"], full)  # this rank's shard of each

    if rank == 0:
        print(f"== sequence + tensor-parallel transformer layer on {devices} ranks over "
              f"{args.link}: x[{tokens}, {hidden}] sharded on tokens, {heads} heads of {hd} "
              f"sharded over the ranks, ffn {args.ffn} sharded; --chunks pipeline both halves; "
              f"{args.streams} streams")
        print(f"thread budget per rank: {budget['description']}")
        print(f"machine: {machine}")
        if choice is not None:
            print(f"auto chunks: {choice['chunks']} ({choice['reason']})")

    ok = True
    for program in programs:
        (y,) = program["fd"].execute(inputs, args.streams)
        if program["name"] == "automatic":  # chosen by this first execute
            program["chunks"] = program["fd"].automatic_chunks()
        error = (y - expected).abs().max().item()
        program["check"] = bool(torch.allclose(y, expected, rtol=1e-4, atol=1e-4))
        ok = ok and program["check"]
        print(f"[rank {rank}] check {title(program)} against single-process torch: "
              f"max |y - torch| = {error:.2e} {'OK' if program['check'] else 'MISMATCH'}, "
              f"output sharding {program['fd'].last_output_shardings[0]}")
    if rank == 0:
        show_programs(args, programs, inputs)

    # --baselines: the layer's two blocks of collectives alone, as the
    # unchunked program and each chunked program (auto's too) move them, each
    # of those programs' compute alone (its collectives replaced by local
    # copies: fd.execute_compute_only), and the compute as plain torch for
    # reference; timed with the programs below. Keys: (name, chunks).
    baselines, bodies = {}, []
    if args.baselines:
        x_full = dist.all_gather_tensor(inputs[0])
        communication = dist.BlockCommunication(inputs[0], tokens, blocks=2)
        comm_chunks = [1] + sorted({p["chunks"] for p in programs if p["chunks"] > 1})
        by_chunks = {p["chunks"]: p["fd"] for p in reversed(programs)}
        bodies = [(("comm-only", c), lambda c=c: communication.run(c)) for c in comm_chunks]
        bodies += [(("compute-only", c),
                    lambda c=c: by_chunks[c].execute_compute_only(inputs, args.streams))
                   for c in comm_chunks]
        bodies.append((("compute-only-aten", 1), lambda: compute_only(x_full, inputs, hd)))

    # Runs of the programs and of the baselines interleave, so a change in the
    # machine's load hits them alike.
    for program in programs:
        program["runs_ms"] = []
    for _ in range(args.runs):
        for program in programs:
            program["runs_ms"].append(
                timed(lambda: program["fd"].execute(inputs, args.streams)))
        for key, body in bodies:
            baselines.setdefault(key, []).append(timed(body))
    if args.trace:
        # One more run of the first program, traced.
        with hostir.trace(args.trace + ".json") as trace:
            timed(lambda: programs[0]["fd"].execute(inputs, args.streams))
        print(f"[rank {rank}] trace of {title(programs[0])} written to {trace.path} "
              f"({trace.events} work items)")
    if rank == 0:
        report_figures(args, devices, budget, machine, choice, programs, baselines)
    print(f"[rank {rank}] {'PASSED' if ok else 'FAILED'}")
    if not ok:
        raise SystemExit(1)


# A program within this fraction below its bound is at the bound (1.00); further
# below, it gets no fraction; an unchunked program within it above the bound
# leaves nothing to gain (as hostir sp-layer: tools/sharded_job.h, IdealGain).
BOUND_NOISE = 0.03


def ideal_gain(unchunked_ms, program_ms, bound_ms):
    """(fraction or None, how far below the bound the program ran, 0 if not)."""
    below = max(0.0, (bound_ms - program_ms) / bound_ms)
    if unchunked_ms <= bound_ms * (1 + BOUND_NOISE) or below > BOUND_NOISE:
        return None, below
    return min(1.0, (unchunked_ms - program_ms) / (unchunked_ms - bound_ms)), below


def ideal_gain_line(name, unchunked_ms, program_ms, bound_ms):
    """The line sp-layer prints for a program's fraction of the ideal gain."""
    fraction, below = ideal_gain(unchunked_ms, program_ms, bound_ms)
    if fraction is not None:
        line = f"fraction of the ideal gain, {name}: {fraction:.2f}"
        if below > 0:
            line += (f" (at the bound: {100 * below:.1f} % below it, within the "
                     f"{100 * BOUND_NOISE:.1f} % noise)")
        return line
    if below > BOUND_NOISE:
        return (f"{name} ran {100 * below:.1f} % below its measured bound ({bound_ms:.1f} ms, "
                f"the longer of its communication alone and its compute alone): those were "
                f"timed apart, not overlapped as the program runs them, so no fraction of the "
                f"ideal gain")
    return (f"fraction of the ideal gain, {name}: none (the unchunked program is already at "
            f"the bound, {bound_ms:.1f} ms, within the noise)")


def report_figures(args, devices, budget, machine, choice, programs, baselines):
    """Rank 0: the table (as hostir sp-layer prints it) and --json."""
    def median(values):
        return sorted(values)[len(values) // 2]

    def row(name, ms):
        return f"  {name:<34}{ms:9.1f} ms"

    def with_chunks(name, chunks):
        return name if chunks == 1 else f"{name}, {chunks} chunks"

    unchunked_ms = median(programs[-1]["runs_ms"])
    print(f"time (median of {args.runs} runs, link: {args.link}):")
    for program in programs:
        ms = median(program["runs_ms"])
        print(f"{row(title(program), ms)}   {ms / unchunked_ms:.2f} x unchunked")
    if baselines:
        for label, key in (("communication only", "comm-only"),
                           ("compute only (hostir)", "compute-only")):
            for (name, chunks), runs in baselines.items():
                if name == key:
                    print(row(with_chunks(label, chunks), median(runs)))
        print(row("compute only (ATen)", median(baselines[("compute-only-aten", 1)])))
        # A program's bound: the longer of its own communication alone and its
        # own compute alone (every chunk count's is timed).
        for program in programs[:-1]:
            chunks = program["chunks"]
            program["bound_ms"] = max(median(baselines[("comm-only", chunks)]),
                                      median(baselines[("compute-only", chunks)]))
            ms = median(program["runs_ms"])
            program["ideal_gain_fraction"], program["below_bound"] = ideal_gain(
                unchunked_ms, ms, program["bound_ms"])
            print("  " + ideal_gain_line(title(program), unchunked_ms, ms, program["bound_ms"]))
    if args.json:
        report = {"config": {"ranks": devices, "tokens": args.tokens, "hidden": args.hidden,
                             "ffn": args.ffn, "heads": args.heads, "streams": args.streams,
                             "runs": args.runs, "link": args.link,
                             "thread_budget": budget["description"], "frontend": "python",
                             "machine": machine.split(", GEMMs: ")[0],
                             "isa": machine.split(" ")[0],
                             "gemm_path": machine.split(", GEMMs: ")[-1]},
                  "programs": []}
        for p in programs:
            entry = {"name": p["name"], "chunks": p["chunks"], "median_ms": median(p["runs_ms"]),
                     "runs_ms": p["runs_ms"], "check": p["check"]}
            for key in ("bound_ms", "ideal_gain_fraction", "below_bound"):
                if key in p:
                    entry[key] = p[key]
            report["programs"].append(entry)
        if choice is not None:
            report["auto"] = choice
        for (name, chunks), runs in baselines.items():
            entry = {"name": name, "median_ms": median(runs), "runs_ms": runs}
            if chunks > 1:
                entry["chunks"] = chunks
            report["programs"].append(entry)
        with open(args.json, "w") as file:
            json.dump(report, file, indent=2)
            file.write("\n")


if __name__ == "__main__":
    main()
