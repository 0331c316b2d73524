"""Checkpoints of a model whose parameters are sharded hostir modules (docs/training.md, "Checkpoints").

    hostir.checkpoint.save("ckpt.pt", model, optimizer, extra={"step": step})
    extra = hostir.checkpoint.load("ckpt.pt", model, optimizer)

One torch.save file holds every parameter whole, with the sharding it had
when saved, and the optimizer's state per parameter name, whole too (a state
tensor of the parameter's shape is sharded as the parameter). Saving gathers
each sharded tensor over its mesh and rank 0 writes the file; loading reads
it on every rank and cuts this rank's shard by the model's own shardings, so
a checkpoint saved on N ranks loads on M: the parameters' whole shapes do not
depend on the rank count.

The write is atomic: a temporary file in the checkpoint's folder, flushed
and fsync'ed, then os.replace over the old one and the folder fsync'ed. A
process that dies while saving leaves the previous checkpoint whole (and at
most a stale `.NAME.*.tmp` beside it, removed by the next save).
"""

import glob
import os
import tempfile

import torch

from . import distributed as dist
from .autograd import Module
from .fusion_state import Error

__all__ = ["save", "load", "FORMAT"]

FORMAT = "hostir.checkpoint/1"


def _shardings(model):
    """{parameter name: (mesh, placements)} of every parameter of `model`;
    (None, []) for one outside a hostir Module (every rank holds it whole)."""
    shardings = {name: (None, []) for name, _ in model.named_parameters()}
    for prefix, module in model.named_modules():
        if isinstance(module, Module):
            for name, placement in module.parameter_placements().items():
                shardings[f"{prefix}.{name}" if prefix else name] = placement
    return shardings


def _is_sharded(mesh, placements):
    return mesh is not None and any(isinstance(p, dist.Shard) for p in placements)


def _whole(local, mesh, placements):
    """The whole tensor from every rank's piece (collective over the mesh)."""
    if not _is_sharded(mesh, placements) or len(mesh.devices) == 1:
        return local.detach().clone()
    return dist.full_tensor(local.detach().contiguous(), mesh, placements)


def _record(mesh, placements):
    """A sharding as plain data (no hostir class in the pickle)."""
    if mesh is None:
        return None
    return {"devices": [int(d) for d in mesh.devices],
            "placements": [["shard", p.dim] if isinstance(p, dist.Shard) else ["replicate"]
                           for p in placements]}


def _optimizer_names(model, optimizer):
    """The parameter name of each index of optimizer.state_dict()."""
    name_of = {id(p): name for name, p in model.named_parameters()}
    names = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            if id(p) not in name_of:
                raise Error("checkpoint: the optimizer updates a tensor that is not a parameter "
                            "of the model; give the model whose parameters it was built on")
            names.append(name_of[id(p)])
    return names


def _is_per_element(value, parameter):
    """A state tensor laid out as its parameter (Adam's moments), as opposed
    to a scalar (its step count)."""
    return (isinstance(value, torch.Tensor) and value.dim() > 0
            and value.shape == parameter.shape)


def _gather_optimizer(model, optimizer, shardings):
    state_dict = optimizer.state_dict()
    names = _optimizer_names(model, optimizer)
    parameters = dict(model.named_parameters())
    state = {}
    for index, name in enumerate(names):
        entry = state_dict["state"].get(index)
        if entry is None:
            continue
        mesh, placements = shardings[name]
        state[name] = {key: _whole(value, mesh, placements)
                       if _is_per_element(value, parameters[name]) else value
                       for key, value in entry.items()}
    groups = []
    offset = 0
    for group in state_dict["param_groups"]:
        count = len(group["params"])
        groups.append(dict(group, params=names[offset:offset + count]))
        offset += count
    return {"state": state, "param_groups": groups}


def _write_atomically(path, payload):
    """torch.save into a temporary file of path's folder, fsync, rename over
    path, fsync the folder: path is the old file or the new one, whole."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    for stale in glob.glob(os.path.join(glob.escape(folder), f".{glob.escape(base)}.*.tmp")):
        os.unlink(stale)  # left by a save that died
    handle, temporary = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)  # as a plain open() would (mkstemp: 0600)
        with os.fdopen(handle, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)  # the rename itself is durable
    finally:
        os.close(directory)


def _failed_ranks(ok):
    """The ranks whose `ok` is False, on every rank (one small allgather)."""
    if dist.world_size() == 1:
        return [] if ok else [0]
    flags = dist.all_gather_tensor(torch.tensor([1 if ok else 0], dtype=torch.int32))
    return [r for r, flag in enumerate(flags.tolist()) if not flag]


def save(path, model, optimizer=None, extra=None):
    """Writes `model`'s parameters whole (each sharded one gathered over its
    mesh), `optimizer`'s state per parameter name and `extra` (tensors, numbers,
    strings, lists, dicts) to
    `path`, atomically. Collective: every rank calls it with its own shards;
    rank 0 writes. Raises hostir.Error on every rank when the write fails."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise Error(f"checkpoint.save: the folder of {path!r} does not exist; create it first")
    shardings = _shardings(model)
    parameters = {}
    for name, parameter in model.named_parameters():
        mesh, placements = shardings[name]
        parameters[name] = {"tensor": _whole(parameter, mesh, placements),
                            "sharding": _record(mesh, placements)}
    payload = {"format": FORMAT, "ranks": dist.world_size(), "parameters": parameters,
               "optimizer": None if optimizer is None else _gather_optimizer(
                   model, optimizer, shardings),
               "extra": extra}
    ok, failure = True, None
    if dist.rank() == 0:
        try:
            _write_atomically(path, payload)
        except Exception as error:  # every rank must hear of it
            ok, failure = False, error
    failed = _failed_ranks(ok)
    if failure is not None:
        raise Error(f"checkpoint.save: writing {path!r} failed: {failure}; the previous "
                    f"checkpoint there, if any, is unchanged") from failure
    if failed:
        raise Error(f"checkpoint.save: rank {failed[0]} failed to write {path!r} (its error "
                    f"says why); the previous checkpoint there, if any, is unchanged")


def _read(path):
    if not os.path.isfile(path):
        raise Error(f"checkpoint.load: {path!r} does not exist")
    try:
        # A pickle, as torch.load's: load only checkpoints you trust (torch
        # 1.13's weights_only unpickler cannot read floats, e.g. AdamW's lr).
        payload = torch.load(path, map_location="cpu")
    except Exception as error:
        raise Error(f"checkpoint.load: {path!r} is not a readable checkpoint: {error}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise Error(f"checkpoint.load: {path!r} is not a {FORMAT} file "
                    f"(written by hostir.checkpoint.save)")
    return payload


def _shard(name, whole, mesh, placements, local_shape):
    shard = whole if mesh is None else dist.distribute_tensor(whole, mesh, placements)
    if tuple(shard.shape) != tuple(local_shape):
        raise Error(f"checkpoint.load: parameter {name!r} is saved with the whole shape "
                    f"{tuple(whole.shape)}, which gives this rank a shard of "
                    f"{tuple(shard.shape)}, but the model holds {tuple(local_shape)}; "
                    f"load it into a model of the same sizes")
    return shard


def _load_optimizer(saved, model, optimizer, shardings):
    names = _optimizer_names(model, optimizer)
    parameters = dict(model.named_parameters())
    groups = saved["param_groups"]
    current = optimizer.state_dict()
    if [len(g["params"]) for g in groups] != [len(g["params"]) for g in current["param_groups"]]:
        raise Error("checkpoint.load: the optimizer's parameter groups differ from the saved "
                    f"ones ({[len(g['params']) for g in groups]} parameters per group saved, "
                    f"{[len(g['params']) for g in current['param_groups']]} now)")
    index_of = {name: i for i, name in enumerate(names)}
    state = {}
    for name, entry in saved["state"].items():
        if name not in index_of:
            raise Error(f"checkpoint.load: the optimizer state of {name!r} has no parameter of "
                        f"that name in the model")
        mesh, placements = shardings[name]
        parameter = parameters[name]
        state[index_of[name]] = {
            key: _shard(f"{name}' (optimizer state {key!r})", value, mesh, placements,
                        parameter.shape) if (isinstance(value, torch.Tensor) and value.dim() > 0)
            else value for key, value in entry.items()}
    param_groups = [dict(group, params=[index_of[name] for name in group["params"]])
                    for group in groups]
    optimizer.load_state_dict({"state": state, "param_groups": param_groups})


def load(path, model, optimizer=None):
    """Reads a checkpoint of hostir.checkpoint.save into `model` (each
    parameter's shard cut by the model's shardings: any rank count) and
    `optimizer` (its state cut the same way, its hyperparameters as saved);
    returns the saved `extra`. Every rank reads the file; no collective.
    Raises hostir.Error for a missing or foreign file, a parameter missing
    on either side, or one whose saved shape does not fit the model."""
    payload = _read(path)
    shardings = _shardings(model)
    saved = payload["parameters"]
    missing = sorted(set(shardings) - set(saved))
    unexpected = sorted(set(saved) - set(shardings))
    if missing or unexpected:
        raise Error(f"checkpoint.load: {path!r} does not match the model: parameters missing "
                    f"from the file {missing}, in the file but not in the model {unexpected}")
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            mesh, placements = shardings[name]
            whole = saved[name]["tensor"]
            parameter.copy_(_shard(name, whole, mesh, placements, parameter.shape))
    if optimizer is not None:
        if payload["optimizer"] is None:
            raise Error(f"checkpoint.load: {path!r} holds no optimizer state (saved without "
                        f"an optimizer); pass optimizer=None")
        _load_optimizer(payload["optimizer"], model, optimizer, shardings)
    return payload["extra"]
