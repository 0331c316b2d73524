"""Run by test_distributed.py on every rank: hostir.distributed's helpers
(init, distribute_tensor/full_tensor, shard_for, gather_output, execute with
global tensors, a wrong shard's error; the collectives on plain tensors, the
chunk-count choice every rank agrees on, a trace of one execute). Prints
"rank R of D: OK", and at exit the communicator's state
(it is shut down by then)."""

import atexit
import json
import os
import tempfile

import torch


def _report_communicator_at_exit():
    # Registered before hostir's own exit handler, so it runs after it: the
    # process groups must be gone while Python is whole (no thread of
    # theirs may take the GIL once the interpreter finalizes).
    from hostir import _C
    print(f"rank {os.environ['RANK']} at exit: communicator {_C.communicator_state()}",
          flush=True)


atexit.register(_report_communicator_at_exit)

import hostir  # noqa: E402
import hostir.distributed as dist  # noqa: E402

DIDx = hostir.ParallelType.DIDx

rank = dist.init()
d = dist.world_size()
assert rank == dist.rank()
mesh = hostir.DeviceMesh(torch.arange(d))

torch.manual_seed(0)  # every rank holds the same whole tensors
full = torch.randn(4 * d, 6)
local = dist.distribute_tensor(full, mesh, [dist.Shard(0)])
torch.testing.assert_close(local, full.chunk(d, 0)[rank])
torch.testing.assert_close(dist.full_tensor(local, mesh, [dist.Shard(0)]), full)
# Uneven pieces (issue 37), as torch.chunk and DTensor's Shard cut them: 4d + 1
# rows (the last rank fewer) and 1 row (every rank but the first holds none)
# come back whole, on both dims.
for rows in (4 * d + 1, 1):
    uneven = torch.randn(rows, 6)
    for dim, whole in ((0, uneven), (1, uneven.t().contiguous())):
        piece = dist.distribute_tensor(whole, mesh, [dist.Shard(dim)])
        start = min(rank * -(-rows // d), rows)
        assert piece.shape[dim] == min(start + -(-rows // d), rows) - start, piece.shape
        torch.testing.assert_close(dist.full_tensor(piece, mesh, [dist.Shard(dim)]), whole)

with hostir.FusionDefinition() as fd:
    x = fd.define_tensor(shape=[4 * d, 6], contiguity=[True, True])
    fd.sched.set_device_mesh(x, mesh)
    fd.sched.split(x, 0, d, inner_split=False)
    fd.sched.parallelize(x, 0, DIDx)
    y = fd.ops.relu(x)
    fd.sched.set_device_mesh(y, mesh)
    fd.sched.split(y, 0, d, inner_split=False)
    fd.sched.parallelize(y, 0, DIDx)
    fd.add_output(y)

x_local = dist.shard_for(fd, 0, full)
(y_local,) = fd.execute([x_local])
torch.testing.assert_close(y_local, torch.relu(full).chunk(d, 0)[rank])
torch.testing.assert_close(dist.gather_output(fd, 0, y_local), torch.relu(full))
(y_full,) = fd.execute([full], global_tensors=True)
torch.testing.assert_close(y_full, torch.relu(full))
try:
    dist.shard_for(fd, 0, full[: 4])
except hostir.Error as error:
    assert "input 0" in str(error) and str((4 * d, 6)) in str(error), error
else:
    raise AssertionError("a tensor of the wrong global shape was accepted")

# Collectives on plain tensors: rank r contributes r + 1 everywhere.
mine = torch.full((2 * d, 3), float(rank + 1))
gathered = dist.all_gather_tensor(mine[:2])
torch.testing.assert_close(gathered, torch.cat([torch.full((2, 3), float(r + 1)) for r in range(d)]))
torch.testing.assert_close(dist.all_gather_tensor(mine[:2], 1).shape, torch.Size([2, 3 * d]))
total = float(d * (d + 1) // 2)
torch.testing.assert_close(dist.reduce_scatter_tensor(mine), torch.full((2, 3), total))
ramp = torch.arange(6 * d, dtype=torch.float32).view(3, 2 * d) * (rank + 1)
torch.testing.assert_close(dist.reduce_scatter_tensor(ramp, scatter_dim=1),
                           (torch.arange(6 * d, dtype=torch.float32).view(3, 2 * d) * total)
                           [:, 2 * rank:2 * rank + 2])
# Integers sum exactly; a transposed (non-contiguous) input is read as its values.
ints = torch.arange(4 * d, dtype=torch.int64).view(2 * d, 2) * (rank + 1)
torch.testing.assert_close(dist.reduce_scatter_tensor(ints),
                           (torch.arange(4 * d).view(2 * d, 2) * int(total))[2 * rank:2 * rank + 2])
torch.testing.assert_close(dist.reduce_scatter_tensor(mine.t().contiguous().t()),
                           torch.full((2, 3), total))
try:
    dist.reduce_scatter_tensor(torch.ones(2 * d + 1, 3))
except hostir.Error as error:
    assert "does not divide by the" in str(error), error
else:
    raise AssertionError("an indivisible reduce-scatter was accepted")

# The blocks' collectives alone, as the programs of 1 and 4 chunks move them.
communication = dist.BlockCommunication(torch.ones(8, 3), 8 * d, blocks=2)
communication.run(1)
communication.run(4)
# 3 chunks of 8 rows: 3, 3 and 2 rows, as the pipelined program splits them
# (what each chunk moves: CollectivesTest.BlockCommunicationMovesEveryChunksRows).
communication.run(3)
try:
    communication.run(0)
except hostir.Error as error:
    assert "0 chunks; give at least one" in str(error), error
else:
    raise AssertionError("0 chunks were accepted")

# Every rank builds the program of the same chunk count, whatever its own link.
choice = hostir.chunk_choice.choose(hostir.chunk_choice.mlp_block_cost(64 * d, 32, 64 * d, d),
                                    [1, 2, 4])
assert choice["chunks"] in (1, 2, 4) and choice["inputs"]["bandwidth_MBps"] > 0, choice
# The probe's wait per wake-up for a CPU, which every chunk's collectives pay.
assert choice["inputs"]["wake_wait_ms"] >= 0 and "a wake-up waits" in choice["reason"], choice
chosen = dist.all_gather_tensor(torch.tensor([choice["chunks"]]))
assert chosen.unique().numel() == 1, chosen

# A trace of one sharded execute: this rank's own file, its pid the rank.
if "HOSTIR_TRACE" not in os.environ:
    with tempfile.TemporaryDirectory() as folder:
        with hostir.trace(os.path.join(folder, "run.json")) as traced:
            (y_local,) = fd.execute([full], global_tensors=True)
        assert traced.path == os.path.join(folder, f"run.rank{rank}.json"), traced.path
        events = json.load(open(traced.path))["traceEvents"]
        assert traced.events > 0 and {e["pid"] for e in events if e["ph"] == "X"} == {rank}

dist.barrier()
print(f"rank {rank} of {d}: OK", flush=True)
