#!/usr/bin/env python3
"""Train a small character-level GPT whose transformer layers are hostir modules.

    /usr/bin/python3 examples/train_gpt.py                      # a world of one
    build/tools/hostir launch -n 2 -- /usr/bin/python3 examples/train_gpt.py \
        --steps 100 --plot loss.png --json loss.json
    build/tools/hostir launch -n 4 -- /usr/bin/python3 examples/train_gpt.py --chunks 2

A decoder-only model on the characters of /usr/share/common-licenses/GPL-3
(every Debian system has it): token embedding + learned position embedding,
--layers transformer layers, a final layer norm and the LM head with the
cross-entropy loss. The embeddings, the final layer norm, the head and the
loss are plain torch; each transformer layer is a hostir.autograd.Module of
examples/transformer_layer.py's TransformerLayer, sharded as Megatron's
sequence + tensor parallelism: every rank holds its token shard of the
activations, its heads of the attention projections and its slice of the MLP
weights as nn.Parameters, and hostir differentiates the layer itself (its
backward program runs on loss.backward(), with the collectives the sharding
passes insert). torch.optim.AdamW updates every parameter.

Each rank computes the embeddings, head and loss of its own tokens, so the
replicated parameters (the embeddings, the final layer norm, the head) get a
partial grad per rank: they are summed over the ranks (an allgather of one
flat vector of those grads, summed, in the same order on every rank) before
the optimizer step. The layer norms inside the layers are replicated inputs
of the hostir fusion: hostir's backward already sums their grads over the
ranks, so they are not summed again. Each rank's loss is the sum of its
tokens' cross-entropy divided by all the tokens of the sequence, so the sum
over the ranks is the mean over every token.

Every rank also trains the same model written the usual way in plain
single-process torch (torch.nn.functional, [H, H] projections, heads by view;
same seed, same init, same data order) and the progress line prints both
losses; after the first step every rank checks the grads of all its
parameters against the reference's, after the last the parameters
themselves. The run fails when the losses differ by more than --tolerance
(1e-3) in the first 100 steps. --plot PATH writes the loss curve (PNG),
--json PATH every step's figures (rank 0).

--save PATH writes a checkpoint (hostir.checkpoint: the weights whole, the
AdamW state, the step, the data order's position and the reference model)
after the last step and every --save-every steps; --load PATH continues from
one, on any number of ranks, up to --steps in all (on the ranks it was saved
on, the losses are those of an uninterrupted run, bit for bit); --resume PATH
loads PATH when it exists and starts from step 1 when it does not.
"""

import argparse
import importlib.util
import json
import math
import os
import sys
import time

import torch

import hostir
import hostir.checkpoint
import hostir.distributed as dist
from hostir.autograd import Module

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transformer_layer import TransformerLayer, fusion_inputs  # noqa: E402

TEXT = "/usr/share/common-licenses/GPL-3"
F = torch.nn.functional

# The hostir layer's inputs after x (fusion_inputs' order) and their names.
LAYER_PARAMETERS = ["ln1_w", "ln1_b", "wq", "wk", "wv", "wo", "ln2_w", "ln2_b", "w1", "w2"]
# Parameters outside the hostir layers: every rank holds them whole.
REPLICATED = ["tok_emb", "pos_emb", "lnf_w", "lnf_b", "head_w", "head_b"]
# The flags a checkpoint must agree with (the model's sizes and its data).
MODEL_FLAGS = ["layers", "hidden", "heads", "ffn", "context", "text"]


def parse_arguments():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    positive = dict(type=int, metavar="N")
    parser.add_argument("--steps", default=100, help="optimizer steps", **positive)
    parser.add_argument("--layers", default=2, help="transformer layers", **positive)
    parser.add_argument("--hidden", default=64, help="model width", **positive)
    parser.add_argument("--heads", default=4, help="attention heads (sharded over the ranks)",
                        **positive)
    parser.add_argument("--ffn", default=256, help="the MLP's inner width (sharded)", **positive)
    parser.add_argument("--context", default=64,
                        help="tokens per sequence (one sequence per step; sharded over the "
                             "ranks, each rank's shard in --chunks Stream chunks)", **positive)
    parser.add_argument("--batch", default=4, help="sequences per step", **positive)
    parser.add_argument("--chunks", default=1, help="Stream chunks per layer", **positive)
    parser.add_argument("--lr", type=float, default=3e-3, help="AdamW learning rate")
    parser.add_argument("--weight-decay", type=float, default=0.01, help="AdamW weight decay")
    parser.add_argument("--seed", type=int, default=0, help="init and data order")
    parser.add_argument("--text", default=TEXT, help="the training text (characters)")
    parser.add_argument("--no-reference", dest="reference", action="store_false",
                        help="skip the single-process torch model (no loss check)")
    parser.add_argument("--tolerance", type=float, default=1e-3,
                        help="the largest |loss - reference loss| allowed in the first 100 steps")
    parser.add_argument("--plot", metavar="PATH", help="write the loss curve as a PNG (rank 0)")
    parser.add_argument("--json", metavar="PATH", help="write every step's figures (rank 0)")
    parser.add_argument("--quiet", action="store_true", help="no line per step")
    parser.add_argument("--save", metavar="PATH",
                        help="write a checkpoint after the last step (and every --save-every)")
    parser.add_argument("--save-every", type=int, default=0, metavar="N",
                        help="also write the --save checkpoint every N steps (0: at the end only)")
    parser.add_argument("--load", metavar="PATH",
                        help="continue from this checkpoint (any number of ranks) up to --steps")
    parser.add_argument("--resume", metavar="PATH",
                        help="as --load when PATH exists; else start from step 1")
    return parser, parser.parse_args()


def check_sizes(parser, args, ranks):
    if args.heads % ranks or args.ffn % ranks:
        parser.error(f"--heads ({args.heads}) and --ffn ({args.ffn}) must divide by the number "
                     f"of ranks ({ranks})")
    if args.hidden % args.heads:
        parser.error(f"--hidden ({args.hidden}) must divide by --heads ({args.heads})")
    if args.context % ranks:
        parser.error(f"--context ({args.context}) must divide by the number of ranks ({ranks}): "
                     f"each rank holds an equal share of the tokens (any --chunks splits them)")
    if args.load and args.resume:
        parser.error("give --load or --resume, not both")
    if args.load and not os.path.isfile(args.load):
        parser.error(f"--load {args.load}: no such file")
    if args.save_every < 0 or (args.save_every and not args.save):
        parser.error("--save-every N needs --save PATH and N >= 0")
    for flag in ("plot", "json", "save"):
        path = getattr(args, flag)
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            parser.error(f"--{flag} {path}: its folder does not exist")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        parser.error(f"--plot {args.plot}: matplotlib is not installed for {sys.executable} "
                     f"(Debian: apt-get install python3-matplotlib)")
    if not os.path.isfile(args.text):
        parser.error(f"--text {args.text}: no such file")


# --- data ------------------------------------------------------------------------------


def load_text(path):
    with open(path, encoding="utf-8") as file:
        text = file.read()
    vocabulary = sorted(set(text))
    index = {c: i for i, c in enumerate(vocabulary)}
    return torch.tensor([index[c] for c in text], dtype=torch.long), vocabulary


class Batches:
    """`batch` sequences of context + 1 characters per step, at random
    offsets drawn from a generator of its own: the same order on every rank
    and for the reference. next() gives [(tokens, targets)] of a step;
    state() / restore() carry the position through a checkpoint."""

    def __init__(self, data, context, batch, seed):
        self.data, self.context, self.batch = data, context, batch
        self.generator = torch.Generator().manual_seed(seed + 1)

    def __next__(self):
        starts = torch.randint(len(self.data) - self.context - 1, (self.batch,),
                               generator=self.generator)
        windows = [self.data[int(s):int(s) + self.context + 1] for s in starts]
        return [(w[:-1], w[1:]) for w in windows]

    def state(self):
        return self.generator.get_state()

    def restore(self, state):
        self.generator.set_state(state)


# --- parameters ------------------------------------------------------------------------


def draw_model(args, vocab):
    """Every rank draws the same full tensors (fixed seed), in the usual
    layout ([out, in] projections)."""
    torch.manual_seed(args.seed)
    H, Fw = args.hidden, args.ffn
    residual_scale = 1.0 / math.sqrt(2 * args.layers)  # GPT-2's scaled residual projections
    model = {"tok_emb": 0.02 * torch.randn(vocab, H),
             "pos_emb": 0.02 * torch.randn(args.context, H),
             "lnf_w": torch.ones(H), "lnf_b": torch.zeros(H),
             "head_w": torch.randn(vocab, H) / math.sqrt(H), "head_b": torch.zeros(vocab),
             "layers": []}
    for _ in range(args.layers):
        layer = {"ln1_w": torch.ones(H), "ln1_b": torch.zeros(H),
                 "ln2_w": torch.ones(H), "ln2_b": torch.zeros(H)}
        for name, (out, inner, scale) in {"wq": (H, H, 1), "wk": (H, H, 1), "wv": (H, H, 1),
                                          "wo": (H, H, residual_scale), "w1": (Fw, H, 1),
                                          "w2": (H, Fw, residual_scale)}.items():
            layer[name] = torch.randn(out, inner) * (scale / math.sqrt(inner))
        model["layers"].append(layer)
    return model


def hostir_layout(layer, heads, context):
    """A layer's tensors in the fusion's input order and layout (per-head
    projections), x a placeholder."""
    hidden = layer["ln1_w"].shape[0]
    return fusion_inputs(dict(layer, x=torch.zeros(context, hidden)), heads)


# --- the model, sharded with hostir layers ---------------------------------------------


class ShardedGPT(torch.nn.Module):
    """This rank's part: its token shard of the activations, its shard of
    each layer's weights (hostir Modules), the replicated rest."""

    def __init__(self, model, args, rank, ranks):
        super().__init__()
        self.rank, self.ranks = rank, ranks
        self.context = args.context
        self.local = args.context // ranks
        head_dim = args.hidden // args.heads
        for name in REPLICATED:
            self.register_parameter(name, torch.nn.Parameter(model[name].clone()))
        self.layers = torch.nn.ModuleList()
        self.definitions = []
        for layer in model["layers"]:
            fd = TransformerLayer(head_dim, ranks, args.chunks)
            shards = dist.shard_inputs(fd, hostir_layout(layer, args.heads, args.context))
            self.layers.append(Module(fd, {name: (position, shard) for position, (name, shard)
                                           in enumerate(zip(LAYER_PARAMETERS, shards[1:]), 1)}))
            self.definitions.append(fd)

    def forward(self, batch):
        """This rank's share of the loss of [(tokens, targets)]: the
        cross-entropy summed over its tokens of each sequence, divided by all
        the tokens of the batch (the sum over the ranks is the mean)."""
        mine = slice(self.rank * self.local, (self.rank + 1) * self.local)
        total = 0
        for tokens, targets in batch:  # one sequence at a time: a layer is [T, H]
            x = self.tok_emb[tokens[mine]] + self.pos_emb[mine]
            for layer in self.layers:
                x = layer(x)
            x = F.layer_norm(x, [x.shape[1]], self.lnf_w, self.lnf_b, 1e-5)
            logits = F.linear(x, self.head_w, self.head_b)
            total = total + F.cross_entropy(logits, targets[mine], reduction="sum")
        return total / (self.context * len(batch))

    def replicated(self):
        return [getattr(self, name) for name in REPLICATED]


def sum_over_ranks(ranks, tensors):
    """The sum over the ranks of each tensor, on every rank (an allreduce):
    hostir.distributed has no allreduce, so one allgather of a flat vector of
    all of them, summed in rank order (the same on every rank, so the
    replicated parameters stay equal bit for bit)."""
    flat = torch.cat([t.reshape(-1) for t in tensors])
    if ranks > 1:
        flat = dist.all_gather_tensor(flat).view(ranks, -1).sum(0)
    sums, offset = [], 0
    for t in tensors:
        sums.append(flat[offset:offset + t.numel()].view_as(t))
        offset += t.numel()
    return sums


# --- the reference: the same model in plain single-process torch ------------------------


class ReferenceGPT(torch.nn.Module):
    def __init__(self, model, args):
        super().__init__()
        self.heads = args.heads
        for name in REPLICATED:
            self.register_parameter(name, torch.nn.Parameter(model[name].clone()))
        self.layers = torch.nn.ModuleList()
        for layer in model["layers"]:
            module = torch.nn.Module()
            for name in LAYER_PARAMETERS:
                module.register_parameter(name, torch.nn.Parameter(layer[name].clone()))
            self.layers.append(module)

    def block(self, p, x):
        tokens, hidden = x.shape
        hd = hidden // self.heads

        def split_heads(a):
            return a.view(tokens, self.heads, hd).transpose(0, 1)

        xn = F.layer_norm(x, [hidden], p.ln1_w, p.ln1_b, 1e-5)
        q, k, v = (split_heads(F.linear(xn, w)) for w in (p.wq, p.wk, p.wv))
        scores = q @ k.transpose(1, 2) / math.sqrt(hd)
        future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
        attention = torch.softmax(scores.masked_fill(future, float("-inf")), -1) @ v
        h = x + F.linear(attention.transpose(0, 1).reshape(tokens, hidden), p.wo)
        hn = F.layer_norm(h, [hidden], p.ln2_w, p.ln2_b, 1e-5)
        return h + F.linear(F.gelu(F.linear(hn, p.w1)), p.w2)

    def forward(self, batch):
        """The mean cross-entropy over every token of [(tokens, targets)]."""
        tokens = torch.stack([t for t, _ in batch])  # [B, T]
        targets = torch.stack([t for _, t in batch])
        x = self.tok_emb[tokens] + self.pos_emb[:tokens.shape[1]]
        for layer in self.layers:
            x = torch.stack([self.block(layer, sequence) for sequence in x])
        x = F.layer_norm(x, [x.shape[-1]], self.lnf_w, self.lnf_b, 1e-5)
        logits = F.linear(x, self.head_w, self.head_b)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())

    def as_sharded(self, sharded, values):
        """values(parameter) of every parameter, cut as `sharded` holds them:
        [(name, tensor)] in sharded.named_parameters() order."""
        cut = [(name, values(getattr(self, name))) for name in REPLICATED]
        context = sharded.context
        for i, (layer, fd) in enumerate(zip(self.layers, sharded.definitions)):
            full = {name: values(getattr(layer, name)) for name in LAYER_PARAMETERS}
            shards = dist.shard_inputs(fd, hostir_layout(full, self.heads, context))
            cut += [(f"layers.{i}.{name}", shard)
                    for name, shard in zip(LAYER_PARAMETERS, shards[1:])]
        return cut


def compare(sharded, expected, relative):
    """The worst difference of sharded's parameters (or grads) from the
    reference's: [(name, |diff|, scale)] sorted worst first."""
    mine = dict(sharded.named_parameters())
    rows = []
    for name, want in expected:
        got = mine[name].grad if relative else mine[name].detach()
        scale = want.abs().max().item() if relative else 1.0
        rows.append((name, (got - want).abs().max().item(), scale))
    return sorted(rows, key=lambda r: r[1] / max(r[2], 1e-30), reverse=True)


# --- output ----------------------------------------------------------------------------


def plot(path, steps, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    xs = [s["step"] for s in steps]
    axes.plot(xs, [s["loss"] for s in steps], label="hostir (sharded)", linewidth=1.5)
    reference = [s["reference_loss"] for s in steps if s["reference_loss"] is not None]
    if reference:
        axes.plot(xs, reference, "--", label="torch (single process)", linewidth=1)
    axes.set_xlabel("step")
    axes.set_ylabel("cross-entropy loss (nats / char)")
    axes.set_title(title, fontsize=9)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def save_checkpoint(args, path, step, sharded, optimizer, stream, reference,
                    reference_optimizer):
    """The weights and AdamW state (hostir.checkpoint), the step, the data's
    position, the reference model: all a later run needs to go on."""
    extra = {"step": step, "ranks": dist.world_size(), "data": stream.state(),
             "flags": {flag: getattr(args, flag) for flag in MODEL_FLAGS}}
    if reference is not None:
        extra["reference"] = reference.state_dict()
        extra["reference_optimizer"] = reference_optimizer.state_dict()
    hostir.checkpoint.save(path, sharded, optimizer, extra=extra)


def load_checkpoint(parser, args, path, sharded, optimizer, stream, reference,
                    reference_optimizer):
    """Restores what save_checkpoint wrote; returns (the step it was saved
    after, the ranks it was saved on)."""
    try:
        extra = hostir.checkpoint.load(path, sharded, optimizer)
    except hostir.Error as error:
        parser.error(f"--load {path}: {error}")
    differ = [f"--{flag} {extra['flags'][flag]} (now {getattr(args, flag)})"
              for flag in MODEL_FLAGS if extra["flags"][flag] != getattr(args, flag)]
    if differ:
        parser.error(f"--load {path}: saved with {', '.join(differ)}; give the same flags")
    if extra["step"] >= args.steps:
        parser.error(f"--load {path}: saved after step {extra['step']}, but --steps is "
                     f"{args.steps}; give more steps in all")
    stream.restore(extra["data"])
    if reference is not None:
        if "reference" not in extra:
            parser.error(f"--load {path}: saved with --no-reference; give --no-reference")
        reference.load_state_dict(extra["reference"])
        reference_optimizer.load_state_dict(extra["reference_optimizer"])
    return extra["step"], extra["ranks"]


def main():
    parser, args = parse_arguments()
    rank, ranks = dist.rank(), dist.world_size()
    check_sizes(parser, args, ranks)
    dist.init()
    budget = dist.thread_budget()
    torch.set_num_threads(budget["intra_op_threads"])

    data, vocabulary = load_text(args.text)
    model = draw_model(args, len(vocabulary))
    sharded = ShardedGPT(model, args, rank, ranks)
    optimizer = torch.optim.AdamW(sharded.parameters(), lr=args.lr,
                                  weight_decay=args.weight_decay)
    reference, reference_optimizer = None, None
    if args.reference:
        reference = ReferenceGPT(model, args)
        reference_optimizer = torch.optim.AdamW(reference.parameters(), lr=args.lr,
                                                weight_decay=args.weight_decay)
    stream = Batches(data, args.context, args.batch, args.seed)
    checkpoint = args.load or (args.resume if args.resume and os.path.isfile(args.resume)
                               else None)
    first = 1
    if checkpoint:
        saved_step, saved_ranks = load_checkpoint(parser, args, checkpoint, sharded, optimizer,
                                                  stream, reference, reference_optimizer)
        first = saved_step + 1
        if rank == 0:
            print(f"loaded {checkpoint}: saved after step {saved_step} on {saved_ranks} rank(s), "
                  f"resharded onto {ranks}; going on from step {first}")
    count = sum(t.numel() for t in model.values() if isinstance(t, torch.Tensor))
    count += sum(t.numel() for layer in model["layers"] for t in layer.values())
    title = (f"{args.layers} layers, hidden {args.hidden}, {args.heads} heads, ffn {args.ffn}, "
             f"context {args.context}, batch {args.batch}, {ranks} rank(s), {args.chunks} chunk(s)")
    if rank == 0:
        print(f"== a character-level GPT on {args.text} ({len(data)} characters, vocabulary "
              f"{len(vocabulary)}): {title}, {count} parameters; AdamW lr {args.lr}")
        print(f"each rank: {args.context // ranks} tokens of each sequence, "
              f"{args.heads // ranks} head(s) and {args.ffn // ranks} ffn columns of each layer "
              f"(hostir modules), the embeddings and the head replicated (grads summed over "
              f"the ranks)")
        print(f"machine: {dist.machine(args.hidden, args.ffn // ranks)}; thread budget per rank: "
              f"{budget['description']}")

    steps, worst, ok = [], 0.0, True
    started = time.perf_counter()
    for step in range(first, args.steps + 1):
        batch = next(stream)
        reference_loss, reference_ms = None, None
        if reference is not None:
            reference_begin = time.perf_counter()
            reference_optimizer.zero_grad()
            loss = reference(batch)
            loss.backward()
            reference_optimizer.step()
            reference_ms = (time.perf_counter() - reference_begin) * 1e3
            reference_loss = loss.item()

        if ranks > 1:
            dist.barrier()  # time the step from every rank ready
        begin = time.perf_counter()
        optimizer.zero_grad()
        local_loss = sharded(batch)
        local_loss.backward()  # the layers' grads: hostir's backward programs
        # One allgather per step: the replicated parameters' grads and the loss.
        replicated = sharded.replicated()
        *sums, loss = sum_over_ranks(ranks, [p.grad for p in replicated]
                                     + [local_loss.detach().view(1)])
        for p, total in zip(replicated, sums):
            p.grad.copy_(total)
        if step == first and reference is not None:
            # Every parameter's grad (summed over ranks where it must be)
            # against the reference's, cut as this rank holds it.
            rows = compare(sharded, reference.as_sharded(sharded, lambda p: p.grad), True)
            grads_ok = all(diff <= 1e-4 * scale for _, diff, scale in rows)
            ok = ok and grads_ok
            groups = {"weight shards": [], "layer norms (summed by hostir)": [],
                      "replicated (summed here)": []}
            for row in rows:
                group = ("replicated (summed here)" if "." not in row[0] else
                         "layer norms (summed by hostir)" if ".ln" in row[0] else "weight shards")
                groups[group].append(row)
            per_group = ", ".join(f"{group} {max(d / m for _, d, m in members):.1e}"
                              for group, members in groups.items())
            print(f"rank {rank} of {ranks}: step {step} grads against torch, max |diff| / max |grad| "
                  f"of the worst parameter: {per_group} {'OK' if grads_ok else 'MISMATCH'}")
        optimizer.step()
        elapsed = time.perf_counter() - begin
        if args.save and (step == args.steps or (args.save_every and step % args.save_every == 0)):
            save_checkpoint(args, args.save, step, sharded, optimizer, stream, reference,
                            reference_optimizer)

        loss = loss.item()
        entry = {"step": step, "loss": loss, "reference_loss": reference_loss,
                 "ms": elapsed * 1e3, "reference_ms": reference_ms, "tokens_per_s": args.batch * args.context / elapsed}
        if reference_loss is not None:
            entry["diff"] = abs(loss - reference_loss)
            if step <= 100:
                worst = max(worst, entry["diff"])
        steps.append(entry)
        if rank == 0 and not args.quiet:
            line = f"step {step:>4}/{args.steps}  loss {loss:.4f}"
            if reference_loss is not None:
                line += f"  reference {reference_loss:.4f}  |diff| {entry['diff']:.1e}"
            line += f"  {entry['tokens_per_s']:7.0f} tokens/s"
            print(line, flush=True)

    wall = time.perf_counter() - started
    summary = {"first_loss": steps[0]["loss"], "last_loss": steps[-1]["loss"]}
    if reference is not None:
        loss_ok = worst <= args.tolerance
        rows = compare(sharded, reference.as_sharded(sharded, lambda p: p.detach()), False)
        summary.update({"max_loss_diff_first_100": worst, "loss_check": loss_ok,
                        "worst_parameter": rows[0][0], "max_parameter_diff": rows[0][1]})
        ok = ok and loss_ok
        print(f"rank {rank} of {ranks}: after {args.steps} steps: max |parameter - torch| "
              f"{rows[0][1]:.2e} ({rows[0][0]})")
    if rank == 0:
        timed = [s["ms"] for s in steps[1:]] or [steps[0]["ms"]]
        median_ms = sorted(timed)[len(timed) // 2]
        summary["median_step_ms"] = median_ms
        summary["tokens_per_s"] = args.batch * args.context / median_ms * 1e3
        print(f"loss {summary['first_loss']:.4f} -> {summary['last_loss']:.4f} in "
              f"{len(steps)} steps ({wall:.1f} s); median step {median_ms:.1f} ms, "
              f"{summary['tokens_per_s']:.0f} tokens/s (hostir step: forward, backward, "
              f"grad sum, AdamW)")
        if reference is not None:
            timed = [s["reference_ms"] for s in steps[1:]] or [steps[0]["reference_ms"]]
            summary["reference_median_step_ms"] = sorted(timed)[len(timed) // 2]
            print(f"the torch model in this process (one rank's threads): median step "
                  f"{summary['reference_median_step_ms']:.1f} ms")
            print(f"max |loss - torch loss| over steps {first}-{min(100, args.steps)}: "
                  f"{worst:.2e} (tolerance {args.tolerance:g}) "
                  f"{'OK' if summary['loss_check'] else 'MISMATCH'}")
        if args.plot:
            plot(args.plot, steps, title)
            print(f"loss curve written to {args.plot}")
        if args.json:
            report = {"config": {"ranks": ranks, "steps": args.steps, "layers": args.layers,
                                 "hidden": args.hidden, "heads": args.heads, "ffn": args.ffn,
                                 "context": args.context, "batch": args.batch,
                                 "chunks": args.chunks, "lr": args.lr,
                                 "weight_decay": args.weight_decay, "seed": args.seed,
                                 "text": args.text, "vocabulary": len(vocabulary),
                                 "first_step": first, "loaded": checkpoint,
                                 "parameters": count,
                                 "machine": dist.machine(args.hidden, args.ffn // ranks),
                                 "thread_budget": budget["description"]},
                      "summary": summary, "steps": steps}
            with open(args.json, "w") as file:
                json.dump(report, file, indent=2)
                file.write("\n")
    print(f"rank {rank} of {ranks}: {'PASSED' if ok else 'FAILED'}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
