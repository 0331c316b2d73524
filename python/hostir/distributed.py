"""hostir.distributed: ranks, meshes and shards from Python.

Follows torch.distributed and DTensor where they fit:

    import hostir.distributed as dist
    dist.init()                                   # joins the job the launcher started
    rank, world = dist.rank(), dist.world_size()
    mesh = hostir.DeviceMesh(torch.arange(world))
    local = dist.distribute_tensor(full, mesh, [dist.Shard(0)])
    full_again = dist.full_tensor(local, mesh, [dist.Shard(0)])

and, for a FusionDefinition whose inputs and outputs carry shardings:

    x_local = dist.shard_for(fd, 0, x_full)       # this rank's shard of input 0
    (y_local,) = fd.execute([x_local])
    y_full = dist.gather_output(fd, 0, y_local)   # every rank of y's mesh gets all of y
    (y_full,) = fd.execute([x_full], global_tensors=True)   # both steps in one

The rank, world size and rendezvous come from the environment of the
launcher: `hostir launch`, torchrun, Open MPI's mpirun or Slurm's srun (see
docs/python.md, "Several ranks"). Without one the process is a world of one.
"""

import dataclasses

import torch

from . import _C
from .fusion_state import DeviceMesh, Error, ParallelType, _streams

__all__ = [
    "BlockCommunication",
    "DeviceMesh",
    "Placement",
    "Replicate",
    "Shard",
    "all_gather_tensor",
    "barrier",
    "distribute_tensor",
    "execute",
    "full_tensor",
    "gather_output",
    "gather_outputs",
    "init",
    "input_placements",
    "is_initialized",
    "launcher",
    "local_rank",
    "local_world_size",
    "output_placements",
    "rank",
    "reduce_scatter_tensor",
    "shard_for",
    "shard_inputs",
    "thread_budget",
    "world_size",
]

_initialized = False


def _environment():
    return _C.launch_environment()


def init():
    """Joins the job the launcher started (the rendezvous at MASTER_ADDR:
    MASTER_PORT; a world of one needs none) and returns this rank. Reads the
    variables of `hostir launch` and torchrun (RANK, WORLD_SIZE, LOCAL_RANK),
    Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK) or Slurm
    (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID). Calling it is optional: the
    first sharded execute joins too. Raises hostir.Error for a bad
    environment or unreachable ranks."""
    global _initialized
    my_rank, _ = _C.init_communicator()
    _initialized = True
    return my_rank


def is_initialized():
    return _initialized


def rank():
    """This process's rank in the job (0 without a launcher)."""
    return _environment()["rank"]


def world_size():
    """The number of ranks in the job (1 without a launcher)."""
    return _environment()["world_size"]


def local_rank():
    """This process's rank among the ranks on its machine."""
    return _environment()["local_rank"]


def local_world_size():
    return _environment()["local_world_size"]


def launcher():
    """Which launcher's variables were read: "torchrun" (also `hostir
    launch`), "Open MPI", "Slurm" or "none"."""
    return _environment()["launcher"]


def barrier():
    """Waits until every rank reaches it (within HOSTIR_COMM_TIMEOUT_S)."""
    _C.barrier()


def thread_budget(number_of_streams=None, communicates=None):
    """How hostir shares this rank's cores (docs/streams.md, "Thread budget"):
    a dict with intra_op_threads (what each compute op gets), compute_slots,
    cores and a description. A hand-written baseline run next to hostir should
    use torch.set_num_threads(thread_budget()["intra_op_threads"]), so both
    sides get the same cores. communicates defaults to world_size() > 1."""
    if communicates is None:
        communicates = world_size() > 1
    return _C.thread_budget(_streams(number_of_streams), bool(communicates))


def machine(k=None, n=None):
    """Which ISA and GEMM path run on this rank, as the benchmarks print them:
    "cpu:avx512 (AMD EPYC 9R14), GEMMs: oneDNN on packed weights, epilogues as
    post-ops (brg:avx512_core)". The GEMM path is that of a linear with a
    [n, k] weight (oneDNN decides per shape); without k and n only the ISA."""
    text = _C.describe_machine()
    if k is not None and n is not None:
        text += ", GEMMs: " + _C.describe_gemm_path(int(k), int(n))
    return text


# --- collectives on plain tensors ----------------------------------------------------


def _check_tensor(what, tensor, dim):
    if not isinstance(tensor, torch.Tensor):
        raise Error(f"{what}: expected a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() == 0 or not -tensor.dim() <= dim < tensor.dim():
        raise Error(f"{what}: dim {dim} is not an axis of a tensor of shape "
                    f"{tuple(tensor.shape)}; give one in [-{tensor.dim()}, {tensor.dim()})")
    return dim % tensor.dim()


def all_gather_tensor(local, gather_dim=0):
    """Every rank's `local` (equal shapes) concatenated along gather_dim in
    rank order, on every rank: an allgather over the job (as torch's
    functional all_gather_tensor). Every rank must call it."""
    dim = _check_tensor("all_gather_tensor", local, gather_dim)
    return torch.cat(_C.allgather(local, list(range(world_size()))), dim=dim)


def reduce_scatter_tensor(partial, scatter_dim=0):
    """The sum over the ranks of `partial` (equal shapes), of which rank r
    keeps block r of scatter_dim (its extent must divide by the ranks): a
    reduce-scatter over the job (as torch's functional reduce_scatter_tensor
    with "sum"). Every rank must call it. On Gloo, which has no
    reduce-scatter, hostir posts an all-to-all and sums (docs/multidevice.md)."""
    dim = _check_tensor("reduce_scatter_tensor", partial, scatter_dim)
    if partial.shape[dim] % world_size():
        raise Error(f"reduce_scatter_tensor: dim {dim} of shape {tuple(partial.shape)} "
                    f"({partial.shape[dim]}) does not divide by the {world_size()} ranks; "
                    f"give a tensor whose scattered dim is a multiple of the ranks")
    if dim == 0:
        return _C.reduce_scatter(partial)
    return _C.reduce_scatter(partial.movedim(dim, 0)).movedim(0, dim).contiguous()


class BlockCommunication:
    """The collectives of `blocks` sequence-parallel blocks with their compute
    taken away: each block allgathers the token-sharded rows `local` (this
    rank's [tokens / ranks, hidden]) and reduce-scatters a [tokens, hidden]
    partial back onto the tokens. `run(chunks)` moves those bytes as the
    program of that many chunks does: 1, an allgather then a reduce-scatter;
    C > 1, the C allgathers of row chunks at once and each chunk's
    reduce-scatter once its allgather is done. What the link costs a block,
    the "communication only" baseline of hostir sp-mlp / sp-layer. Every rank
    must construct it and call run alike."""

    def __init__(self, local, tokens, blocks=1):
        _check_tensor("BlockCommunication", local, 0)
        self._impl = _C.BlockCommunication(local, int(tokens), int(blocks))

    def run(self, chunks=1):
        self._impl.run(int(chunks))


# --- placements -----------------------------------------------------------------------


class Placement:
    """How a tensor lies along one dimension of a DeviceMesh (as DTensor's)."""

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False


@dataclasses.dataclass(frozen=True)
class Shard(Placement):
    """The tensor's dimension `dim` is cut into equal contiguous blocks, one per
    device along this mesh dimension, in mesh order."""

    dim: int

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim


@dataclasses.dataclass(frozen=True)
class Replicate(Placement):
    """Every device along this mesh dimension holds the whole tensor."""

    def is_replicate(self):
        return True


def _mesh_shape(mesh):
    return list(mesh.shape) if len(mesh.shape) > 0 else [len(mesh.devices)]


def _mesh_dim_of(mesh, parallel_type):
    """The mesh dimension a parallel type indexes: DIDx the last, DIDy the
    first of a 2-D mesh."""
    dims = len(_mesh_shape(mesh))
    if parallel_type == ParallelType.DIDx:
        return dims - 1
    if parallel_type == ParallelType.DIDy and dims == 2:
        return 0
    raise Error(f"{parallel_type} does not index a dimension of {mesh!r}")


def _placements(mesh, dims):
    """DTensor placements, one per mesh dimension, from {ParallelType: tensor dim}."""
    placements = [Replicate()] * len(_mesh_shape(mesh))
    for parallel_type, dim in dims.items():
        placements[_mesh_dim_of(mesh, parallel_type)] = Shard(int(dim))
    return placements


def _mesh_index(mesh, device):
    """`device`'s coordinates in the mesh (row-major), or None if absent."""
    devices = list(mesh.devices)
    if device not in devices:
        return None
    flat = devices.index(device)
    shape = _mesh_shape(mesh)
    index = []
    for extent in reversed(shape):
        index.append(flat % extent)
        flat //= extent
    return list(reversed(index))


def _check_placements(mesh, placements, what):
    if isinstance(placements, Placement):
        placements = [placements]
    placements = list(placements)
    shape = _mesh_shape(mesh)
    if len(placements) != len(shape):
        raise Error(f"{what}: {len(placements)} placements for {mesh!r} with {len(shape)} "
                    "dimension(s); give one Shard(dim) or Replicate() per mesh dimension")
    for placement in placements:
        if not isinstance(placement, Placement):
            raise Error(f"{what}: {placement!r} is not a placement; use "
                        "hostir.distributed.Shard(dim) or Replicate()")
    return placements


def _as_mesh(mesh):
    return mesh if isinstance(mesh, DeviceMesh) else DeviceMesh(mesh)


def _row_chunk(size, parts, index):
    """(start, rows) of piece `index` when `size` rows are cut into `parts`
    as torch.chunk and DTensor's Shard cut them: ceil(size / parts) rows
    each, the last fewer or none (multidevice/row_chunks.h's rowChunk)."""
    block = -(-size // parts)
    start = min(index * block, size)
    return start, min(start + block, size) - start


def distribute_tensor(full, mesh, placements, device=None):
    """This rank's piece of the whole tensor `full` laid out on `mesh` by
    `placements` (one per mesh dimension): along a Shard(d) mesh dimension of
    n devices, the rank keeps piece i of dim d cut as torch.chunk (and
    DTensor's Shard) cut it: ceil(size / n) rows each, the last ones fewer or
    none (i: its index along that mesh dimension). Returns None when the mesh
    does not hold this rank (pass that None to execute). `device`: the rank
    to cut for (default this process's)."""
    mesh = _as_mesh(mesh)
    placements = _check_placements(mesh, placements, "distribute_tensor")
    if not isinstance(full, torch.Tensor):
        raise Error(f"distribute_tensor: expected a torch.Tensor, got {type(full).__name__}")
    device = rank() if device is None else int(device)
    index = _mesh_index(mesh, device)
    if index is None:
        return None
    shape = _mesh_shape(mesh)
    local = full
    for mesh_dim, placement in enumerate(placements):
        if not isinstance(placement, Shard):
            continue
        dim = placement.dim
        if not -full.dim() <= dim < full.dim():
            raise Error(f"distribute_tensor: Shard({dim}) of a tensor of shape "
                        f"{tuple(full.shape)}: dim out of range")
        start, rows = _row_chunk(local.shape[dim], shape[mesh_dim], index[mesh_dim])
        local = local.narrow(dim, start, rows)
    return local.contiguous()


def _allgather_pieces(local, devices):
    """Every device's `local`, in the order of `devices`; the pieces may
    differ in size (torch.chunk's uneven pieces): their shapes are
    allgathered first, and only when they differ is each piece padded, for
    the allgather of equal blocks alone, and cut back to its own shape."""
    shapes = _C.allgather(torch.tensor(local.shape, dtype=torch.int64), devices)
    if all(torch.equal(s, shapes[0]) for s in shapes):
        return _C.allgather(local, devices)
    largest = torch.stack(shapes).amax(0).tolist()
    padded = local.new_zeros(largest)
    padded[tuple(slice(0, extent) for extent in local.shape)] = local
    return [piece[tuple(slice(0, int(extent)) for extent in piece_shape)]
            for piece, piece_shape in zip(_C.allgather(padded, devices), shapes)]


def full_tensor(local, mesh, placements):
    """The whole tensor from every rank's piece (`local` laid out on `mesh` by
    `placements`): an allgather over the mesh's devices, so every rank of the
    mesh must call it. Returns `local` itself when nothing is sharded, and
    None on a rank outside the mesh (which takes no part)."""
    mesh = _as_mesh(mesh)
    placements = _check_placements(mesh, placements, "full_tensor")
    if _mesh_index(mesh, rank()) is None:
        return None
    if not any(isinstance(p, Shard) for p in placements):
        return local
    if not isinstance(local, torch.Tensor):
        raise Error(f"full_tensor: expected this rank's piece as a torch.Tensor, got "
                    f"{type(local).__name__}")
    devices = list(mesh.devices)
    if world_size() < max(devices) + 1:
        raise Error(f"full_tensor: {mesh!r} needs {max(devices) + 1} ranks but this job has "
                    f"{world_size()}; run it under a launcher (docs/python.md)")
    pieces = _allgather_pieces(local, devices)
    shape = _mesh_shape(mesh)

    def assemble(mesh_dim, prefix):
        if mesh_dim == len(shape):
            flat = 0
            for extent, i in zip(shape, prefix):
                flat = flat * extent + i
            return pieces[flat]
        placement = placements[mesh_dim]
        if isinstance(placement, Shard):
            return torch.cat([assemble(mesh_dim + 1, prefix + [i])
                              for i in range(shape[mesh_dim])], dim=placement.dim)
        return assemble(mesh_dim + 1, prefix + [0])  # replicated: any copy

    return assemble(0, [])


# --- with a FusionDefinition ------------------------------------------------------------


def _input_sharding(fd, i):
    shardings = fd._input_shardings()
    if not -len(shardings) <= i < len(shardings):
        raise Error(f"input {i}: the fusion has {len(shardings)} inputs")
    sharding = shardings[i]
    if sharding is None:
        raise Error(f"input {i} of the fusion is a scalar; only tensors are sharded")
    return sharding


def input_placements(fd, i):
    """(mesh, placements) of input `i` as the definition annotates it; mesh
    None for an input without a mesh (every rank passes all of it)."""
    mesh, _, dims = _input_sharding(fd, i)
    if mesh is None:
        return None, []
    return mesh, _placements(mesh, dims)


def output_placements(fd, i):
    """(mesh, placements) of output `i` of the last execute."""
    shardings = fd.last_output_shardings
    if shardings is None:
        raise Error("output_placements: the fusion has not been executed yet; its outputs' "
                    "shardings are known after fd.execute")
    sharding = shardings[i]
    if sharding.mesh is None:
        return None, []
    return sharding.mesh, _placements(sharding.mesh, sharding.dims)


def shard_for(fd, i, full):
    """This rank's shard of the whole tensor `full` for input `i` of `fd`:
    the whole tensor for a replicated input or one without a mesh, None for
    an input whose mesh does not hold this rank."""
    mesh, placements = input_placements(fd, i)
    if mesh is None:
        return full
    shape = fd._cdef.static_shape(fd.state.inputs[i])
    if isinstance(full, torch.Tensor) and len(shape) == full.dim() and any(
            fixed not in (-1, size) for fixed, size in zip(shape, full.shape)):
        raise Error(f"shard_for: input {i} {fd._cdef.ir_name(fd.state.inputs[i])} is declared "
                    f"with the global shape {tuple(s if s >= 0 else '?' for s in shape)}, but "
                    f"the tensor given has shape {tuple(full.shape)}")
    return distribute_tensor(full, mesh, placements)


def shard_inputs(fd, inputs):
    """shard_for of every tensor input; scalars pass through."""
    shardings = fd._input_shardings()
    if len(inputs) != len(shardings):
        raise Error(f"shard_inputs: the fusion has {len(shardings)} inputs but "
                    f"{len(inputs)} were given")
    return [value if sharding is None else shard_for(fd, i, value)
            for i, (value, sharding) in enumerate(zip(inputs, shardings))]


def gather_output(fd, i, local):
    """The whole of output `i` of the last execute from this rank's shard
    `local` (collective over the output's mesh; None on a rank outside it)."""
    mesh, placements = output_placements(fd, i)
    if mesh is None:
        return local
    return full_tensor(local, mesh, placements)


def gather_outputs(fd, outputs):
    return [gather_output(fd, i, out) for i, out in enumerate(outputs)]


def execute(fd, inputs, number_of_streams=None):
    """fd.execute on whole tensors: cuts this rank's shard of every input,
    runs, and gathers every output back into the whole tensor (on the ranks
    of its mesh). The same as fd.execute(inputs, global_tensors=True)."""
    local = fd.execute(shard_inputs(fd, list(inputs)), number_of_streams)
    return gather_outputs(fd, local)
