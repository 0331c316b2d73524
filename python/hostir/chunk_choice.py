"""hostir.chunk_choice: how many Stream chunks a pipelined program should use.

The model behind `hostir sp-mlp --chunks auto` (docs/streams.md, "Choosing
the chunk count"), for Python programs:

    import hostir.chunk_choice as chunk_choice
    cost = chunk_choice.transformer_layer_cost(tokens, hidden, ffn, devices)
    choice = chunk_choice.choose(cost, candidates=[1, 2, 4, 8, 16])
    fd = MyLayer(chunks=choice["chunks"])

choose() times this rank's link (two probe allgathers) and a GEMM of the
cost's shape per candidate, predicts each candidate's time and returns rank
0's pick on every rank, so every rank builds the same program. It is
collective: every rank of the job calls it.
"""

from . import _C
from .fusion_state import Error

__all__ = ["BlockCost", "choose", "mlp_block_cost", "transformer_layer_cost"]

BlockCost = _C.BlockCost
BlockCost.__doc__ = """The per-rank cost of one pipelined program before chunking:
link_bytes each rank moves, flops it computes (flops_by_chunks: what it
computes with C chunks where that differs; flops_with(C): what the model
prices, which for transformer_layer_cost skips the causal scores a query loop
never reads at any C >= 2), collectives_per_chunk and ops_per_chunk (the host
thread's walk: 0.56 µs per host instruction, 8 instructions per op unless the
block counted its own), and gemm, the [m, k, n] of its typical GEMM that the
calibration times per chunk count (m / C rows)."""


def mlp_block_cost(tokens, hidden, ffn, devices):
    """The sequence-parallel MLP block (allgather, linear, GELU, linear,
    reduce-scatter) of x [tokens, hidden] with ffn sharded over `devices`."""
    _check_sizes("mlp_block_cost", tokens=tokens, hidden=hidden, ffn=ffn, devices=devices)
    return _C.mlp_block_cost(tokens, hidden, ffn, devices)


def transformer_layer_cost(tokens, hidden, ffn, devices):
    """The sequence + tensor-parallel transformer layer
    (docs/transformer_layer.md): both halves' collectives, the projections and
    the causal attention as each chunk count computes it."""
    _check_sizes("transformer_layer_cost", tokens=tokens, hidden=hidden, ffn=ffn,
                 devices=devices)
    return _C.transformer_layer_cost(tokens, hidden, ffn, devices)


def choose(cost, candidates=(1, 2, 4, 8, 16)):
    """Calibrates and picks one of `candidates` for `cost` (a BlockCost).
    Returns a dict: chunks, reason, predicted_ms per candidate, and the
    measured inputs (bandwidth_MBps, latency_ms, comm_cpu_fraction, wake_wait_ms,
    gemm_gflops, ...). Collective over the job."""
    if not isinstance(cost, BlockCost):
        raise Error(f"choose: cost must be a hostir.chunk_choice.BlockCost (from "
                    f"mlp_block_cost, transformer_layer_cost or BlockCost(...)), got "
                    f"{type(cost).__name__}")
    candidates = list(candidates)
    if not candidates or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1
                                 for c in candidates):
        raise Error(f"choose: candidates must be positive ints, got {candidates!r}")
    return _C.choose_chunks(cost, candidates)


def _check_sizes(what, devices, **sizes):
    for name, value in dict(sizes, devices=devices).items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise Error(f"{what}: {name} must be a positive int, got {value!r}")
    for name in ("tokens", "ffn"):
        if sizes[name] % devices:
            raise Error(f"{what}: {name} ({sizes[name]}) must divide by the {devices} devices; "
                        f"each rank holds an equal share")
