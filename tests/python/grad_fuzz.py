"""Gradient fuzzing (issue 38): random differentiable programs, differentiated
by hostir (hostir.autograd.Differentiable: C++ hostir::differentiate and its
rules in src/hostir/autodiff/vjp_rules.cpp) and compared with torch autograd
on the same program written in torch.

A seed draws one program: its dtype (float32 or float64), 1-3 inputs, 3-9
ops from every rule (pointwise unary and binary ops incl. transcendentals,
pow with a scalar and a tensor exponent, maximum/minimum, where, tensor-scalar
ops, broadcasts, sum/max/min/mean/var reductions with and without keep_dim,
permute, reshape, select, matmul (2-D, batched, a vector), linear with and
without bias, softmax, log_softmax, layer_norm, rms_norm, the causal mask
before a softmax, a cast round trip), 1-2 outputs, and on RANKS ranks (a
launch) a sharding of every input (replicated or DIDx on a random axis) and
maybe a Stream split (1-3 chunks) of one computed tensor. Each program runs
forward and backward once through hostir; every input's grad is compared with
torch's, per dtype:

    |hostir - torch| <= RTOL * |torch| + max(ATOL * scale, 4 * roundoff)

per grad tensor; scale: max|torch|, at least 1; roundoff: how far torch's
own float32 grad is from the grad of the same program run in float64 (its
largest difference; 0 for float64), so a program whose intermediates cancel
gets the bound its roundoff needs and no other program a looser one.
float32: RTOL 1e-4, ATOL 1e-5; float64: RTOL 1e-9, ATOL 1e-11, so a float64
grad that went through float32 anywhere (relative error ~6e-8) fails
(test_grad_fuzz.py::test_a_float64_grad_rounded_to_float32_is_caught).

A program hostir rejects with a hostir.Error (an op the sharding or the
stream lowering does not support) counts as rejected, one whose torch
reference is not finite is redrawn from the next sub-seed; a wrong grad, a
crash or a wrong-shaped grad fails.

    python3 grad_fuzz.py --programs N --first-seed S      (1 rank)
    hostir launch -n R -- python3 grad_fuzz.py ...        (R ranks)

prints "grad fuzz on R ranks: N programs (seeds ..) in T s: M matched torch,
J rejected, F failed" and each failure's seed and program; exits 1 if any
failed or too few matched.
"""

import argparse
import gc
import math
import os
import random
import sys
import time

import torch

import grad_fuzz_resize
import hostir
from hostir import distributed as dist
from hostir.autograd import Differentiable

TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-9, 1e-11)}
# Every program is new, so the cache only holds them: each cached
# definition keeps its stream worker threads. The least recently used are
# evicted past this many.
CACHED_DEFINITIONS = 50
# Refusals that are the process's fault, not the program's: counted as
# failures. Programs leaked (their outputs' grad_fn held them through the
# buffer pool) until a 5,000-program run could start no more threads (607
# programs "rejected" that way, issue 38).
RESOURCE_ERRORS = ("cannot start the worker thread",)
# Stream workers a run may leave behind once every program is dropped.
LEAK_MARGIN_THREADS = 8
# How much larger than torch's float32 roundoff hostir's may be (another
# summation order, fused kernels).
ROUNDOFF_FACTOR = 4.0
HOSTIR_DTYPES = {torch.float32: hostir.DataType.Float, torch.float64: hostir.DataType.Double}


def grad_mismatch(got, want, dtype, roundoff=0.0):
    """None when `got` matches `want` within `dtype`'s tolerances, else why.
    `roundoff`: how far torch's own float32 grad is from the float64 one."""
    if got is None:
        return "no grad"
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"grad {tuple(got.shape)} {got.dtype}, expected {tuple(want.shape)} {want.dtype}"
    if want.numel() == 0:
        return None
    rtol, atol = TOLERANCES[dtype]
    # A grad that is 0 in exact arithmetic comes out as roundoff: the scale
    # is at least that of the randn data. A program whose intermediates
    # cancel has a roundoff far above atol (6e-5 where the grad is 0, as
    # 2^-14 of intermediates near 1): hostir's may be as large as torch's.
    scale = max(want.abs().max().item(), 1.0)
    diff = (got - want).abs()
    bound = rtol * want.abs() + max(atol * scale, ROUNDOFF_FACTOR * roundoff)
    if not torch.isfinite(got).all() or (diff > bound).any():
        worst = (diff - bound).argmax()
        return (f"off by {diff.max().item():.3e} (max |grad| {scale:.3e}, torch's float32 "
                f"roundoff {roundoff:.1e}; at element {worst.item()}: "
                f"{got.flatten()[worst].item()!r} vs {want.flatten()[worst].item()!r})")
    return None


class Value:
    def __init__(self, shape):
        self.shape = tuple(shape)


class Program:
    """A drawn program: a list of values, each an input ("input", [], {},
    shape) or a step (name, operand indices, params, result shape), replayed
    once on hostir's builders and once on torch."""

    def __init__(self, seed, ranks, dtype):
        self.seed, self.ranks, self.dtype = seed, ranks, dtype
        self.steps = []         # (name, operands, params, shape), inputs too
        self.input_axes = {}    # value index of an input -> sharded axis or None
        self.outputs = []
        self.stream = None      # (value index, chunks)

    @property
    def inputs(self):
        return [v for v in range(len(self.steps)) if self.steps[v][0] == "input"]

    def shape(self, index):
        return self.steps[index][3]

    def describe(self):
        lines = [f"seed {self.seed}, {self.dtype}, {self.ranks} rank(s):"]
        for v, (name, operands, params, shape) in enumerate(self.steps):
            if name == "input":
                axis = self.input_axes[v]
                lines.append(f"  v{v}{list(shape)} = input"
                             + (f" sharded DIDx on axis {axis}" if axis is not None else ""))
                continue
            lines.append(f"  v{v}{list(shape)} = {name}"
                         f"({', '.join(f'v{o}' for o in operands)}"
                         f"{', ' if params else ''}{params if params else ''})")
        lines.append(f"  outputs {['v%d' % o for o in self.outputs]}"
                     + (f", Stream split of v{self.stream[0]} in {self.stream[1]}"
                        if self.stream else ""))
        return "\n".join(lines)


UNARY = ["neg", "abs", "exp", "relu", "sigmoid", "tanh", "gelu", "erf", "log", "sqrt",
         "rsqrt", "square_pow", "sin", "cos"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]


class Generator:
    def __init__(self, seed, ranks, resize_ops=False):
        self.resize_ops = resize_ops
        self.rng = random.Random(seed * 7919 + ranks)
        dtype = torch.float64 if self.rng.random() < 0.5 else torch.float32
        self.p = Program(seed, ranks, dtype)
        # Extents: multiples of the ranks (shards are even) and small.
        self.unit = ranks

    def extent(self):
        return self.unit * self.rng.choice([1, 2, 3, 4])

    def add(self, name, operands, params, shape):
        self.p.steps.append((name, list(operands), params, tuple(shape)))
        return len(self.p.steps) - 1

    def values(self):
        return range(len(self.p.steps))

    def pick(self, rank=None, min_rank=1):
        choices = [v for v in self.values()
                   if (rank is None and len(self.p.shape(v)) >= min_rank)
                   or len(self.p.shape(v)) == rank]
        # Later values more often, so programs are deep rather than wide.
        return max(self.rng.sample(choices, min(2, len(choices)))) if choices else None

    def generate(self):
        rng, p = self.rng, self.p
        for _ in range(rng.choice([1, 2, 2, 3])):
            rank = rng.choice([1, 2, 2, 2, 3])
            shape = tuple(self.extent() for _ in range(rank))
            if p.steps and rng.random() < 0.5 and len(p.shape(0)) >= rank:
                shape = p.shape(0)[len(p.shape(0)) - rank:]
            self.new_input(shape)
        for _ in range(rng.randint(3, 9)):
            self.step()
        computed = [v for v in self.values() if p.steps[v][0] != "input"]
        p.outputs = [computed[-1]]
        if len(computed) > 1 and rng.random() < 0.3:
            p.outputs.insert(0, rng.choice(computed[:-1]))
        if rng.random() < 0.35:
            candidates = [v for v in computed if len(p.shape(v)) >= 1]
            v = rng.choice(candidates)
            p.stream = (v, rng.choice([1, 2, 3]))
        return p

    def step(self):
        rng = self.rng
        if self.resize_ops and rng.random() < 0.35:
            return grad_fuzz_resize.draw(self)
        kind = rng.choices(
            ["unary", "binary", "scalar", "broadcast", "reduce", "view", "gemm", "norm", "where",
             "cast"], weights=[14, 14, 5, 6, 8, 8, 9, 8, 3, 2])[0]
        getattr(self, "draw_" + kind)()

    def draw_unary(self):
        v = self.pick()
        self.add(self.rng.choice(UNARY), [v], {}, self.p.shape(v))

    def draw_binary(self):
        a = self.pick()
        shape = self.p.shape(a)
        # The other operand: same shape, a trailing suffix (broadcast from
        # the left, as torch) or the same tensor.
        same = [v for v in self.values()
                if self.p.shape(v) == shape[len(shape) - len(self.p.shape(v)):]]
        b = self.rng.choice(same)
        if len(self.p.shape(b)) > len(shape):
            a, b = b, a
        result = max(self.p.shape(a), self.p.shape(b), key=len)
        if self.rng.random() < 0.5:
            a, b = b, a
        self.add(self.rng.choice(BINARY), [a, b], {}, result)

    def draw_scalar(self):
        v = self.pick()
        op = self.rng.choice(["add", "mul", "sub", "div", "pow", "rsub"])
        c = self.rng.choice([0.5, 2.0, -1.5, 3.0])
        if op == "pow":
            c = self.rng.choice([2.0, 3.0, 0.5, -1.0])
        self.add("scalar_" + op, [v], {"c": c}, self.p.shape(v))

    def draw_broadcast(self):
        v = self.pick()
        shape = self.p.shape(v)
        if len(shape) >= 3:
            return self.draw_reduce()
        at = self.rng.randrange(len(shape) + 1)
        new = shape[:at] + (self.extent(),) + shape[at:]
        # broadcast inserts a size-1 axis; adding zeros of the full shape
        # expands it, as torch's expand.
        self.add("broadcast", [v], {"at": at, "extent": new[at]}, new)

    def draw_reduce(self):
        v = self.pick()
        shape = self.p.shape(v)
        op = self.rng.choice(["sum", "sum", "max", "min", "mean", "var"])
        axes = sorted(self.rng.sample(range(len(shape)), self.rng.randint(1, len(shape))))
        keep = self.rng.random() < 0.4
        if op == "var" and any(shape[a] < 2 for a in axes):
            op = "sum"
        result = tuple(1 if i in axes else s for i, s in enumerate(shape)) if keep else tuple(
            s for i, s in enumerate(shape) if i not in axes)
        self.add(op, [v], {"axes": axes, "keep": keep}, result)

    def draw_view(self):
        v = self.pick(min_rank=1)
        shape = self.p.shape(v)
        op = self.rng.choice(["permute", "reshape", "select"])
        if op == "permute" and len(shape) >= 2:
            dims = list(range(len(shape)))
            self.rng.shuffle(dims)
            self.add("permute", [v], {"dims": dims}, tuple(shape[d] for d in dims))
        elif op == "select" and len(shape) >= 2:
            # On a sharded axis, hostir refuses it (a rejection).
            dim = self.rng.randrange(len(shape))
            index = self.rng.randrange(shape[dim])
            self.add("select", [v], {"dim": dim, "index": index},
                     shape[:dim] + shape[dim + 1:])
        else:
            numel = math.prod(shape)
            if len(shape) >= 2 and self.rng.random() < 0.5:
                new = (numel,)
            else:
                firsts = [d for d in range(1, numel + 1) if numel % d == 0]
                first = self.rng.choice(firsts)
                new = (first, numel // first)
            self.add("reshape", [v], {"sizes": list(new)}, new)

    def draw_gemm(self):
        a = self.pick(min_rank=1)
        shape = self.p.shape(a)
        k = shape[-1]
        n = self.extent()
        op = self.rng.choice(["linear", "linear_bias", "matmul"])
        if op == "matmul":
            if len(shape) == 1:
                self.add("matmul", [a, self.new_input((k, n))], {}, (n,))
                return
            other = self.new_input((k, n) if self.rng.random() < 0.7 else (k,))
            rhs_shape = self.p.shape(other)
            result = shape[:-1] + ((n,) if len(rhs_shape) == 2 else ())
            self.add("matmul", [a, other], {}, result)
            return
        weight = self.new_input((n, k))
        operands = [a, weight]
        if op == "linear_bias":
            operands.append(self.new_input((n,)))
        self.add("linear", operands, {}, shape[:-1] + (n,))

    def new_input(self, shape):
        """A weight, bias or activation: an input defined where it is drawn
        (sharded on a random axis or replicated on several ranks)."""
        v = self.add("input", [], {}, shape)
        self.p.input_axes[v] = (self.rng.randrange(len(shape))
                                if self.p.ranks > 1 and self.rng.random() < 0.7 else None)
        return v

    def draw_norm(self):
        v = self.pick(min_rank=1)
        shape = self.p.shape(v)
        op = self.rng.choice(["softmax", "log_softmax", "layer_norm", "rms_norm", "causal_softmax"])
        if op in ("softmax", "log_softmax"):
            self.add(op, [v], {"dim": self.rng.randrange(len(shape))}, shape)
        elif op == "causal_softmax":
            if len(shape) < 2 or shape[-2] > shape[-1]:
                return self.add("softmax", [v], {"dim": len(shape) - 1}, shape)
            self.add(op, [v], {}, shape)
        else:
            ndims = self.rng.randint(1, len(shape))
            operands = [v]
            affine = self.rng.random() < 0.6
            if affine:
                operands.append(self.new_input(shape[-ndims:]))
                if self.rng.random() < 0.5:
                    operands.append(self.new_input(shape[-ndims:]))
            self.add(op, operands, {"ndims": ndims}, shape)

    def draw_where(self):
        v = self.pick()
        shape = self.p.shape(v)
        same = [u for u in self.values() if self.p.shape(u) == shape]
        self.add("where_positive", [self.rng.choice(same), v, self.rng.choice(same)], {}, shape)

    def draw_cast(self):
        v = self.pick()
        if self.p.dtype == torch.float64:
            return self.draw_unary()
        self.add("cast_roundtrip", [v], {}, self.p.shape(v))


def _positive(ops, x):
    return ops.add(ops.mul(x, x), 0.5)


class HostirBuilder:
    """Replays a step on fd.ops."""

    def __init__(self, fd, dtype):
        self.fd, self.ops, self.dtype = fd, fd.ops, dtype

    def __call__(self, name, args, params):
        ops = self.ops
        if name in ("neg", "abs", "exp", "relu", "sigmoid", "tanh", "gelu", "erf", "sin",
                    "cos"):
            return getattr(ops, name)(args[0])
        if name in ("log", "sqrt", "rsqrt"):
            return getattr(ops, name)(_positive(ops, args[0]))
        if name == "square_pow":
            return ops.pow(args[0], 2.0)
        if name in ("add", "sub", "mul", "maximum", "minimum"):
            return getattr(ops, name)(args[0], args[1])
        if name == "div":
            return ops.div(args[0], _positive(ops, args[1]))
        if name == "pow":
            return ops.pow(_positive(ops, args[0]), ops.tanh(args[1]))
        if name.startswith("scalar_"):
            c, op = params["c"], name[len("scalar_"):]
            if op == "rsub":
                return ops.sub(c, args[0])
            if op == "pow":
                return ops.pow(_positive(ops, args[0]), c)
            if op == "div":
                return ops.div(c, _positive(ops, args[0]))
            return getattr(ops, op)(args[0], c)
        if name == "broadcast":
            x = args[0]
            flags = [False] * (x.ndim + 1)
            flags[params["at"]] = True
            b = ops.broadcast(x, flags)
            shape = [ops.size(b, d) if d != params["at"] else params["extent"]
                     for d in range(x.ndim + 1)]
            return ops.add(b, ops.zeros(shape, self.dtype))
        if name in ("sum", "max", "min", "mean", "var"):
            axes, keep = params["axes"], params["keep"]
            if name in ("sum", "max", "min"):
                return getattr(ops, name)(args[0], axes, keep)
            if name == "mean":
                return ops.mean(args[0], axes, keep)
            return ops.var(args[0], axes, 1, keep)
        if name == "permute":
            return ops.permute(args[0], params["dims"])
        if name == "reshape":
            return ops.reshape(args[0], params["sizes"])
        if name == "select":
            return ops.select(args[0], params["dim"], params["index"])
        if name == "matmul":
            return ops.matmul(args[0], args[1])
        if name == "linear":
            return ops.linear(*args)
        if name in ("softmax", "log_softmax"):
            return getattr(ops, name)(args[0], params["dim"])
        if name == "causal_softmax":
            x = args[0]
            mask = ops.causal_mask(ops.size(x, x.ndim - 2), ops.size(x, x.ndim - 1))
            return ops.softmax(ops.where(mask, x, float("-inf")), x.ndim - 1)
        if name in ("layer_norm", "rms_norm"):
            weight = args[1] if len(args) > 1 else None
            bias = args[2] if len(args) > 2 else None
            return getattr(ops, name)(args[0], params["ndims"], weight, bias)
        if name == "where_positive":
            return ops.where(ops.gt(args[0], 0.0), args[1], args[2])
        if name == "cast_roundtrip":
            return ops.cast(ops.cast(args[0], hostir.DataType.Double), hostir.DataType.Float)
        result = grad_fuzz_resize.hostir_step(ops, name, args, params)
        assert result is not None, name
        return result


def torch_step(name, args, params):
    """The same step in torch."""
    f = torch.nn.functional
    if name in ("neg", "abs", "exp", "relu", "sigmoid", "tanh", "erf", "sin", "cos"):
        return getattr(torch, name)(args[0])
    if name == "gelu":
        return f.gelu(args[0])
    if name in ("log", "sqrt", "rsqrt"):
        return getattr(torch, name)(args[0] * args[0] + 0.5)
    if name == "square_pow":
        return torch.pow(args[0], 2.0)
    if name in ("add", "sub", "mul", "maximum", "minimum"):
        return getattr(torch, name)(args[0], args[1])
    if name == "div":
        return args[0] / (args[1] * args[1] + 0.5)
    if name == "pow":
        return torch.pow(args[0] * args[0] + 0.5, torch.tanh(args[1]))
    if name.startswith("scalar_"):
        c, op = params["c"], name[len("scalar_"):]
        x = args[0]
        return {"add": lambda: x + c, "mul": lambda: x * c, "sub": lambda: x - c,
                "rsub": lambda: c - x, "div": lambda: c / (x * x + 0.5),
                "pow": lambda: torch.pow(x * x + 0.5, c)}[op]()
    if name == "broadcast":
        x = args[0].unsqueeze(params["at"])
        shape = list(x.shape)
        shape[params["at"]] = params["extent"]
        return x.expand(shape)
    if name in ("sum", "max", "min", "mean", "var"):
        axes, keep, x = params["axes"], params["keep"], args[0]
        if name == "sum":
            return x.sum(axes, keepdim=keep)
        if name == "max":
            return x.amax(axes, keepdim=keep)
        if name == "min":
            return x.amin(axes, keepdim=keep)
        if name == "mean":
            return x.mean(axes, keepdim=keep)
        return x.var(axes, correction=1, keepdim=keep)
    if name == "permute":
        return args[0].permute(params["dims"])
    if name == "reshape":
        return args[0].reshape(params["sizes"])
    if name == "select":
        return args[0].select(params["dim"], params["index"])
    if name == "matmul":
        return torch.matmul(args[0], args[1])
    if name == "linear":
        return f.linear(*args)
    if name == "softmax":
        return torch.softmax(args[0], params["dim"])
    if name == "log_softmax":
        return torch.log_softmax(args[0], params["dim"])
    if name == "causal_softmax":
        x = args[0]
        mask = torch.ones(x.shape[-2], x.shape[-1], dtype=torch.bool).tril()
        return torch.softmax(x.masked_fill(~mask, float("-inf")), -1)
    if name == "layer_norm":
        shape = args[0].shape[-params["ndims"]:]
        return f.layer_norm(args[0], shape, *(list(args[1:]) + [None] * (3 - len(args))))
    if name == "rms_norm":
        x, ndims = args[0], params["ndims"]
        dims = list(range(x.dim() - ndims, x.dim()))
        y = x * torch.rsqrt((x * x).mean(dims, keepdim=True) + 1e-6)
        if len(args) > 1:
            y = y * args[1]
        if len(args) > 2:
            y = y + args[2]
        return y
    if name == "where_positive":
        return torch.where(args[0] > 0, args[1], args[2])
    if name == "cast_roundtrip":
        return args[0].double().to(args[0].dtype)
    result = grad_fuzz_resize.torch_step(name, args, params)
    assert result is not None, name
    return result


class FuzzDefinition(hostir.FusionDefinition):
    def __init__(self, program):
        super().__init__()
        self.program = program

    def definition(self):
        p = self.program
        dtype = HOSTIR_DTYPES[p.dtype]
        build = HostirBuilder(self, dtype)
        self.values = []
        for name, operands, params, shape in p.steps:
            if name == "input":
                self.values.append(self.define_tensor(shape=[-1] * len(shape),
                                                      contiguity=[True] * len(shape), dtype=dtype))
            else:
                self.values.append(build(name, [self.values[o] for o in operands], params))
        for o in p.outputs:
            self.add_output(self.values[o])

    def schedule(self):
        p = self.program
        if p.ranks > 1:
            mesh = hostir.DeviceMesh(list(range(p.ranks)))
            for v, axis in p.input_axes.items():
                self.sched.set_device_mesh(self.values[v], mesh)
                if axis is not None:
                    self.sched.split(self.values[v], axis, p.ranks, inner_split=False)
                    self.sched.parallelize(self.values[v], axis, hostir.ParallelType.DIDx)
        if p.stream is not None:
            v, chunks = p.stream
            self.sched.split(self.values[v], 0, chunks, inner_split=False)
            self.sched.parallelize(self.values[v], 0, hostir.ParallelType.Stream)


class Drawn:
    """A program with its torch inputs, output grads, torch's grads of the
    inputs and, per input, the float32 roundoff of torch's grad: its largest
    distance from the grad of the same program in float64 (0 for float64)."""

    def __init__(self, program, inputs, out_grads, expected, roundoff):
        self.program, self.inputs, self.out_grads = program, inputs, out_grads
        self.expected, self.roundoff = expected, roundoff


def torch_grads(program, inputs, out_grads):
    """Every input's grad by torch autograd (zeros where unused), or None
    when an output or a grad is not finite or no output depends on an input."""
    values, leaves = [], []
    for name, operands, params, _ in program.steps:
        if name == "input":
            leaves.append(inputs[len(leaves)].clone().requires_grad_())
            values.append(leaves[-1])
        else:
            values.append(torch_step(name, [values[o] for o in operands], params))
    outputs = [values[o] for o in program.outputs]
    if not all(torch.isfinite(o).all() for o in outputs):
        return None
    used = [(o, g) for o, g in zip(outputs, out_grads) if o.requires_grad]
    if not used:
        return None
    torch.autograd.backward([o for o, _ in used], [g for _, g in used])
    grads = [leaf.grad if leaf.grad is not None else torch.zeros_like(leaf) for leaf in leaves]
    return grads if all(torch.isfinite(g).all() for g in grads) else None


def draw(seed, ranks, resize_ops=False):
    """The Drawn program of `seed`; None when five sub-seeds give no finite
    reference. resize_ops: also draw grad_fuzz_resize's steps."""
    for attempt in range(5):
        program = Generator(seed * 5 + attempt, ranks, resize_ops).generate()
        program.seed = seed
        gen = torch.Generator().manual_seed(seed * 5 + attempt)
        inputs = [torch.randn(shape, generator=gen, dtype=program.dtype)
                  for name, _, _, shape in program.steps if name == "input"]
        outputs = [program.shape(o) for o in program.outputs]
        out_grads = [torch.randn(shape, generator=gen, dtype=program.dtype) for shape in outputs]
        expected = torch_grads(program, inputs, out_grads)
        if expected is None:
            continue
        roundoff = [0.0] * len(expected)
        if program.dtype != torch.float64:
            exact = torch_grads(program, [t.double() for t in inputs],
                                [g.double() for g in out_grads])
            if exact is None:
                continue
            roundoff = [(e.double() - x).abs().max().item() if e.numel() else 0.0
                        for e, x in zip(expected, exact)]
        return Drawn(program, inputs, out_grads, expected, roundoff)
    return None


def hostir_grads(program, inputs, out_grads):
    """This rank's shard of each input's grad from hostir (raises
    hostir.Error for a program hostir rejects)."""
    fd = FuzzDefinition(program)
    f = Differentiable(fd)
    mine = [t.requires_grad_() for t in dist.shard_inputs(fd, [t.clone() for t in inputs])]
    outputs = f(*mine)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    shardings = f._forward.last_output_shardings()[:len(outputs)]
    local_grads = []
    for grad, (mesh, _, dims) in zip(out_grads, shardings):
        if mesh is not None:
            grad = dist.distribute_tensor(grad, mesh, dist._placements(mesh, dims))
        local_grads.append(grad.contiguous())
    differentiated = [(o, g) for o, g in zip(outputs, local_grads) if o.requires_grad]
    torch.autograd.backward([o for o, _ in differentiated], [g for _, g in differentiated])
    return fd, [t.grad for t in mine]


def check(drawn, round_to_float32=False):
    """None if hostir's grads of the Drawn program match torch's, else the
    failure."""
    fd, got = hostir_grads(drawn.program, drawn.inputs, drawn.out_grads)
    want = dist.shard_inputs(fd, drawn.expected)
    for i, (g, w, roundoff) in enumerate(zip(got, want, drawn.roundoff)):
        if g is None:
            g = torch.zeros_like(w)
        if round_to_float32:
            g = g.float().to(w.dtype)
        why = grad_mismatch(g, w, drawn.program.dtype, roundoff)
        if why:
            return f"grad of input {i}: {why}"
    return None


def run_programs(programs, first_seed, ranks, rank, log, resize_ops=False):
    matched = rejected = failed = 0
    rejections = {}
    start = time.monotonic()
    for seed in range(first_seed, first_seed + programs):
        drawn = draw(seed, ranks, resize_ops)
        if drawn is None:
            rejected += 1
            rejections["no finite torch reference"] = rejections.get(
                "no finite torch reference", 0) + 1
            continue
        program = drawn.program
        try:
            why = check(drawn)
        except hostir.Error as error:
            key = str(error).split("\n")[0][:110]
            if any(resource in key for resource in RESOURCE_ERRORS):
                failed += 1
                log(f"FAILED rank {rank}: {key}\n{program.describe()}")
                continue
            rejected += 1
            rejections[key] = rejections.get(key, 0) + 1
            continue
        except Exception as error:  # a crash is a failure, not a rejection
            why = f"{type(error).__name__}: {error}"
        if why is None:
            matched += 1
        else:
            failed += 1
            log(f"FAILED rank {rank}: {why}\n{program.describe()}")
    seconds = time.monotonic() - start
    log(f"grad fuzz on {ranks} rank{'s' if ranks > 1 else ''} (rank {rank}): {programs} programs "
        f"(seeds {first_seed}..{first_seed + programs - 1}) in {seconds:.1f} s: {matched} "
        f"matched torch, {rejected} rejected, {failed} failed")
    for message, count in sorted(rejections.items(), key=lambda item: -item[1]):
        log(f"  rejected {count}x: {message}")
    return matched, rejected, failed


def run(programs, first_seed, ranks, rank, log=print, resize_ops=False):
    """Fuzzes `programs` seeds from `first_seed`; (matched, rejected, failed)."""
    cache = hostir.FusionCache.get()
    max_fusions, cache.max_fusions = cache.max_fusions, CACHED_DEFINITIONS
    threads_before = _threads()
    try:
        matched, rejected, failed = run_programs(programs, first_seed, ranks, rank, log,
                                                 resize_ops)
    finally:
        cache.max_fusions = max_fusions
    cache.reset()
    gc.collect()
    leaked = _threads() - threads_before
    if leaked > LEAK_MARGIN_THREADS:
        failed += 1
        log(f"FAILED rank {rank}: {leaked} threads outlived the {programs} programs "
            f"(dropped and collected): something still holds their executors")
    return matched, rejected, failed


def _threads():
    return len(os.listdir("/proc/self/task"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--min-matched", type=float, default=0.5,
                        help="fraction of programs that must run and match")
    parser.add_argument("--resize-ops", action="store_true",
                        help="also draw pad, cat, slice, cumsum, prod and the gathers and "
                             "scatter-adds (grad_fuzz_resize.py)")
    args = parser.parse_args()
    ranks = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.set_num_threads(1)
    matched, _, failed = run(args.programs, args.first_seed, ranks, rank,
                             log=lambda line: print(line, flush=True), resize_ops=args.resize_ops)
    if failed or matched < args.min_matched * args.programs:
        print(f"rank {rank} of {ranks}: FAILED ({failed} wrong, {matched} matched)", flush=True)
        sys.exit(1)
    print(f"rank {rank} of {ranks}: OK", flush=True)


if __name__ == "__main__":
    main()
