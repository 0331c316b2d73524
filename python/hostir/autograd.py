"""hostir programs inside torch autograd (docs/training.md).

`Differentiable(fd)` differentiates a FusionDefinition once, with hostir's own
rules (C++ `hostir::differentiate`): a forward program that also returns what
the backward reads, and a backward program from the grads of the outputs to
the grads of the inputs. Calling it runs the forward and records one autograd
node, whose backward runs hostir's backward program, so `loss.backward()`
works as with any torch op and grads accumulate in `.grad` as torch's do.
`Module` wraps one as an `nn.Module` whose weights are `nn.Parameter`s.
`detect_anomaly()` checks every op and segment these programs compute for
NaN and Inf (as torch.autograd.detect_anomaly).
"""

import contextlib

import torch

from . import _C
from .distributed import input_placements
from .fusion_state import Error, _streams

__all__ = ["Differentiable", "Module", "detect_anomaly"]


class Differentiable:
    """A FusionDefinition and its backward program.

    outputs: positions of the outputs to differentiate (default: every
    floating-point one); inputs: positions of the inputs that get grads
    (default: every floating-point tensor input); save: "gemm_outputs" (keep
    what matmul and linear compute, recompute everything else in the
    backward, re-gathering sharded inputs), "gathered" (also keep each
    GEMM's gathered input: one allgather a step fewer, a gathered
    activation more in memory) or "nothing" (recompute everything: least
    memory).
    """

    def __init__(self, fd, outputs=None, inputs=None, save="gemm_outputs",
                 number_of_streams=None):
        fd._ensure_defined()
        try:
            (self._forward, self._backward, self.differentiated_outputs, self.grad_inputs,
             self.saved_outputs) = fd._cdef.differentiate(list(outputs or []),
                                                         list(inputs or []), save)
        except _C.Error as error:
            raise Error(str(error)) from None
        self.num_inputs = len(fd._cdef.input_fids())
        self.num_outputs = len(fd._cdef.output_fids())
        self.number_of_streams = _streams(number_of_streams)

    def __call__(self, *inputs):
        if len(inputs) != self.num_inputs:
            raise Error(f"Differentiable: the definition has {self.num_inputs} inputs but "
                        f"{len(inputs)} were given")
        outputs = _Apply.apply(self, *inputs)
        return outputs[0] if self.num_outputs == 1 else outputs

    @property
    def forward_host_ir(self):
        """The forward's host program (it also returns the saved tensors)."""
        return self._forward.host_ir()

    @property
    def backward_host_ir(self):
        """The backward's host program, with the collectives the sharding
        passes inserted for the grads."""
        return self._backward.host_ir()

    @property
    def backward_fusion_ir(self):
        return self._backward.fusion_ir()

    def _run(self, definition, values):
        try:
            return definition.execute(values, [], self.number_of_streams)
        except Error as error:
            if not str(error).startswith("non-finite values"):
                raise
            which = "forward" if definition is self._forward else "backward"
            raise Error(f"{error}\n(in the {which} program of a hostir.autograd.Differentiable; "
                        f"its {which}_host_ir prints the whole program)") from None


@contextlib.contextmanager
def detect_anomaly(enabled=True):
    """Within the block, every op and segment a hostir program computes
    (forward and backward, every rank) has its floating-point outputs
    checked for NaN and Inf once it ran; the first that holds one fails the
    run with a hostir.Error naming it in IR notation, its count of NaN and
    Inf, and whether its inputs were finite (it produced them) or not. As
    torch.autograd.detect_anomaly: for finding where a NaN comes from, not
    for every step (each check reads every output once). HOSTIR_CHECK_FINITE=1
    turns it on for the whole process; off, nothing is checked."""
    previous = _C.check_finite()
    _C.set_check_finite(bool(enabled))
    try:
        yield
    finally:
        _C.set_check_finite(previous)


def _detached(value):
    return value.detach() if isinstance(value, torch.Tensor) else value


class _Apply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, program, *inputs):
        values = [_detached(value) for value in inputs]
        results = program._run(program._forward, values)
        saved = [results[i] for i in program.saved_outputs]
        ctx.program = program
        ctx.scalars = [None if isinstance(v, torch.Tensor) else v for v in values]
        # save_for_backward makes torch refuse a backward after an input was
        # modified in place (the backward would read the new values).
        ctx.save_for_backward(*[v for v in inputs if isinstance(v, torch.Tensor)], *saved)
        ctx.num_tensor_inputs = sum(isinstance(v, torch.Tensor) for v in values)
        outputs = results[:program.num_outputs]
        differentiated = set(program.differentiated_outputs)
        ctx.mark_non_differentiable(*[out for i, out in enumerate(outputs)
                                      if i not in differentiated])
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *output_grads):
        program = ctx.program
        tensors = ctx.saved_tensors
        tensor_inputs = iter(tensors[:ctx.num_tensor_inputs])
        inputs = [next(tensor_inputs).detach() if scalar is None else scalar
                  for scalar in ctx.scalars]
        saved = [t.detach() for t in tensors[ctx.num_tensor_inputs:]]
        grads = [output_grads[i].contiguous() for i in program.differentiated_outputs]
        input_grads = program._run(program._backward, inputs + grads + saved)
        result = [None] * len(inputs)
        for position, grad in zip(program.grad_inputs, input_grads):
            result[position] = grad
        return (None, *result)


class Module(torch.nn.Module):
    """A FusionDefinition as an nn.Module: `parameters` maps a name to
    (input position, initial tensor); each becomes an nn.Parameter (on a
    sharded definition: this rank's shard). `forward(*activations)` fills the
    other inputs, in position order. Optimizers update the parameters in
    place; the next call reads the new values."""

    def __init__(self, fd, parameters, **options):
        super().__init__()
        self.program = Differentiable(fd, **options)
        self._parameter_at = {}
        self._placements = {}
        for name, (position, tensor) in parameters.items():
            if not 0 <= position < self.program.num_inputs:
                raise Error(f"Module: parameter {name!r} at input {position}, but the definition "
                            f"has inputs 0..{self.program.num_inputs - 1}")
            if position in self._parameter_at:
                raise Error(f"Module: parameters {self._parameter_at[position]!r} and {name!r} "
                            f"both name input {position}")
            self.register_parameter(name, torch.nn.Parameter(tensor.detach().clone()))
            self._parameter_at[position] = name
            self._placements[name] = input_placements(fd, position)

    def parameter_placements(self):
        """{parameter name: (mesh, placements)} as the definition shards each
        parameter's input (mesh None: not sharded, every rank holds all of
        it); hostir.checkpoint saves and reshards by it."""
        return dict(self._placements)

    def forward(self, *activations):
        expected = self.program.num_inputs - len(self._parameter_at)
        if len(activations) != expected:
            raise Error(f"Module: forward takes the {expected} inputs that are not parameters, "
                        f"got {len(activations)}")
        given = iter(activations)
        inputs = [getattr(self, self._parameter_at[i]) if i in self._parameter_at
                  else next(given) for i in range(self.program.num_inputs)]
        return self.program(*inputs)
