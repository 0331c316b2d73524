"""hostir.distributed in one process (a world of one) and under launchers;
inputs that require grad (nn.Module weights)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

import hostir
import hostir.distributed as dist
from conftest import build_dir

HERE = pathlib.Path(__file__).resolve().parent
DIDx = hostir.ParallelType.DIDx


def test_module_weights_that_require_grad():
    lin = torch.nn.Linear(4, 3)
    x = torch.randn(5, 4, requires_grad=True)
    with hostir.FusionDefinition() as fd:
        tx = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        tw = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        tb = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.relu(fd.ops.linear(tx, tw, tb)))
    # Without no_grad, as a user calls it with a module's parameters.
    (out,) = fd.execute([x, lin.weight, lin.bias])
    assert not out.requires_grad
    torch.testing.assert_close(out, torch.relu(lin(x)).detach())
    with torch.no_grad():
        (out,) = fd.execute([x, lin.weight, lin.bias])
    torch.testing.assert_close(out, torch.relu(lin(x)).detach())
    # The inputs keep their autograd state.
    assert lin.weight.requires_grad and x.requires_grad


def test_preallocated_output_that_requires_grad():
    with hostir.FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.relu(t))
    x = torch.randn(6, requires_grad=True)
    buffer = torch.empty(6, requires_grad=True)
    (out,) = fd.execute([x], output=[buffer])
    torch.testing.assert_close(buffer.detach(), torch.relu(x).detach())
    assert not out.requires_grad


def test_execute_with_one_tensor_not_a_list():
    with hostir.FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.relu(t))
    with pytest.raises(hostir.Error, match=r"list of tensors.*fd.execute\(\[x\]\)"):
        fd.execute(torch.randn(2))


def test_world_of_one_environment():
    assert dist.rank() == 0 and dist.world_size() == 1 and dist.local_rank() == 0


def test_device_mesh_from_tensor_and_nested_list():
    mesh = hostir.DeviceMesh(torch.arange(4).reshape(2, 2))
    assert list(mesh.devices) == [0, 1, 2, 3] and list(mesh.shape) == [2, 2]
    nested = hostir.DeviceMesh([[0, 1], [2, 3]])
    assert nested == mesh
    assert 3 in nested and 4 not in nested
    flat = hostir.DeviceMesh(torch.arange(3))
    assert list(flat.devices) == [0, 1, 2]
    with pytest.raises(hostir.Error, match="not rectangular"):
        hostir.DeviceMesh([[0, 1], [2]])
    with pytest.raises(hostir.Error, match="integer dtype"):
        hostir.DeviceMesh(torch.zeros(2))
    with pytest.raises(hostir.Error, match="must be ints"):
        hostir.DeviceMesh(["a"])


def test_distribute_tensor_shard_and_replicate():
    full = torch.arange(24.0).reshape(4, 6)
    mesh = hostir.DeviceMesh([[0, 1], [2, 3]])
    # Device 3 is at (1, 1): row block 1 of 2, column block 1 of 2.
    local = dist.distribute_tensor(full, mesh, [dist.Shard(0), dist.Shard(1)], device=3)
    torch.testing.assert_close(local, full[2:4, 3:6])
    local = dist.distribute_tensor(full, mesh, [dist.Replicate(), dist.Shard(1)], device=2)
    torch.testing.assert_close(local, full[:, 0:3])
    assert dist.distribute_tensor(full, mesh, [dist.Shard(0), dist.Shard(1)], device=7) is None
    # Uneven pieces as torch.chunk and DTensor's Shard cut them (issue 37):
    # 4 rows over 3 devices are 2, 2 and 0; 6 columns over 4 devices 2, 2, 2, 0.
    three = hostir.DeviceMesh([0, 1, 2])
    pieces = [dist.distribute_tensor(full, three, [dist.Shard(0)], device=d) for d in range(3)]
    assert [tuple(p.shape) for p in pieces] == [(2, 6), (2, 6), (0, 6)]
    torch.testing.assert_close(torch.cat(pieces), full)
    four = hostir.DeviceMesh([0, 1, 2, 3])
    pieces = [dist.distribute_tensor(full, four, [dist.Shard(1)], device=d) for d in range(4)]
    assert [p.shape[1] for p in pieces] == [2, 2, 2, 0]
    torch.testing.assert_close(torch.cat(pieces, dim=1), full)
    # A 2-D mesh cuts each dim over its own mesh dimension: 5 rows as 3 + 2.
    five = torch.arange(30.0).reshape(5, 6)
    local = dist.distribute_tensor(five, mesh, [dist.Shard(0), dist.Shard(1)], device=2)
    torch.testing.assert_close(local, five[3:5, 0:3])
    with pytest.raises(hostir.Error, match="one Shard"):
        dist.distribute_tensor(full, mesh, [dist.Shard(0)], device=0)
    # A world of one: nothing to gather for a mesh of one device.
    one = hostir.DeviceMesh([0])
    torch.testing.assert_close(dist.full_tensor(full, one, [dist.Shard(0)]), full)


def sharded_relu(mesh, rows=None):
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[rows or -1, 4], contiguity=[True, True])
        fd.sched.set_device_mesh(x, mesh)
        fd.sched.split(x, 0, len(mesh.devices), inner_split=False)
        fd.sched.parallelize(x, 0, DIDx)
        y = fd.ops.relu(x)
        fd.sched.set_device_mesh(y, mesh)
        fd.sched.split(y, 0, len(mesh.devices), inner_split=False)
        fd.sched.parallelize(y, 0, DIDx)
        fd.add_output(y)
    return fd


def test_shard_for_and_placements():
    fd = sharded_relu(hostir.DeviceMesh([0]), rows=8)
    mesh, placements = dist.input_placements(fd, 0)
    assert list(mesh.devices) == [0] and placements == [dist.Shard(0)]
    full = torch.randn(8, 4)
    torch.testing.assert_close(dist.shard_for(fd, 0, full), full)
    (y,) = fd.execute([full], global_tensors=True)
    torch.testing.assert_close(y, torch.relu(full))
    assert dist.output_placements(fd, 0)[1] == [dist.Shard(0)]


def test_shard_for_shape_mismatch_names_input_and_shapes():
    fd = sharded_relu(hostir.DeviceMesh([0]), rows=8)
    with pytest.raises(hostir.Error, match=r"input 0 .*\(8, 4\).*\(16, 4\)"):
        dist.shard_for(fd, 0, torch.randn(16, 4))


def test_sharded_fusion_alone_says_to_use_a_launcher():
    fd = sharded_relu(hostir.DeviceMesh([0, 1]))
    with pytest.raises(hostir.Error, match=r"runs alone.*hostir launch -n 2"):
        fd.execute([torch.randn(4, 4)])


def run_script(command, ranks, **extra_env):
    env = dict(os.environ, HOSTIR_COMM_TIMEOUT_S="60", OMP_NUM_THREADS="1", **extra_env)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1]), str(HERE)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for rank in range(ranks):
        assert f"rank {rank} of {ranks}: OK" in output, output
        # hostir's exit handler shut the job's process groups down while
        # Python was whole (a rank aborted at exit without it, now and then).
        assert f"rank {rank} at exit: communicator shut down" in output, output


def test_distributed_helpers_under_hostir_launch():
    launcher = build_dir() / "tools" / "hostir"
    if not launcher.exists():
        pytest.skip(f"{launcher} is not built")
    run_script([str(launcher), "launch", "-n", "2", "--", sys.executable,
                str(HERE / "distributed_script.py")], 2)


def test_distributed_helpers_under_torchrun():
    run_script([sys.executable, "-m", "hostir.torchrun", "--standalone",
                "--nproc_per_node=2", str(HERE / "distributed_script.py")], 2)


def test_trace_pid_is_the_rank(tmp_path):
    # Each rank writes its own file; its lanes' pid is the rank, not the OS pid,
    # so the files merge side by side.
    run_script([sys.executable, "-m", "hostir.torchrun", "--standalone",
                "--nproc_per_node=2", str(HERE / "distributed_script.py")], 2,
               HOSTIR_TRACE=str(tmp_path / "trace.json"))
    for rank in range(2):
        events = json.loads((tmp_path / f"trace.rank{rank}.json").read_text())
        if isinstance(events, dict):
            events = events["traceEvents"]
        assert events and {event["pid"] for event in events} == {rank}, events[:3]


def test_unknown_op_lists_the_nearest_names():
    with hostir.FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        with pytest.raises(AttributeError, match=r"no op 'rleu'; did you mean relu.*the ops are:"):
            fd.ops.rleu(t)
        with pytest.raises(AttributeError, match=r"no op 'conv2d';.*the ops are: .*sum"):
            fd.ops.conv2d(t)
        fd.add_output(fd.ops.relu(t))


def test_nvfuser_keyword_aliases_for_reductions():
    with hostir.FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.sum(t, dims=[1], keepdim=True))
        fd.add_output(fd.ops.max(t, axes=[0], keepdim=False))
        with pytest.raises(hostir.Error, match="axes once"):
            fd.ops.sum(t, [0], dims=[1])
    x = torch.randn(3, 5)
    s, m = fd.execute([x])
    torch.testing.assert_close(s, x.sum(1, keepdim=True))
    torch.testing.assert_close(m, x.max(0).values)


def test_transpose_properties():
    with hostir.FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        b = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True])
        v = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(a @ a.T)
        fd.add_output(b.mT)
        with pytest.raises(hostir.Error, match="rank 3"):
            b.T
        with pytest.raises(hostir.Error, match="at least 2"):
            v.mT
    x, y = torch.randn(3, 4), torch.randn(2, 3, 5)
    out, yt = fd.execute([x, y, torch.randn(2)])
    torch.testing.assert_close(out, x @ x.T)
    torch.testing.assert_close(yt, y.mT)


# --- hostir.chunk_choice, hostir.trace and the collectives in a world of one ----------


def test_layer_cost_is_the_mlp_block_with_attention_added():
    # The formula hostir sp-layer prices (block_costs.h), from Python.
    mlp = hostir.chunk_choice.mlp_block_cost(2048, 1024, 4096, 2)
    layer = hostir.chunk_choice.transformer_layer_cost(2048, 1024, 4096, 2)
    assert layer.link_bytes == 2 * mlp.link_bytes == 2 * 2 * 1024 * 1024 * 4
    assert layer.gemm == mlp.gemm == (2048, 1024, 2048)
    projections, attention = 4 * 2 * 2048 * 1024 * 512, 2 * 2 * 2048 * 2048 * 512
    assert layer.flops == mlp.flops + projections + attention
    # 2 chunks of 1024 rows compute in 8 tiles of 256: (8 + 1) / 16 of the scores;
    # 32 chunks of 64 rows in 32 tiles: 33 / 64 (any count is priced).
    assert layer.flops_with(2) == mlp.flops + projections + attention * 9 / 16
    assert layer.flops_with(32) == mlp.flops + projections + attention * 33 / 64
    assert (layer.collectives_per_chunk, mlp.collectives_per_chunk) == (4, 2)


def test_choose_in_one_process_picks_a_candidate_and_says_why():
    cost = hostir.chunk_choice.BlockCost(link_bytes=0, flops=1e9, collectives_per_chunk=2,
                                         ops_per_chunk=6, flops_by_chunks={}, gemm=[256, 64, 64])
    choice = hostir.chunk_choice.choose(cost, [1, 2])
    # No link: the pick follows the measured GEMM rates (smaller chunks can stay
    # in cache), each candidate predicted and the pick explained.
    assert choice["chunks"] in (1, 2) and set(choice["predicted_ms"]) == {1, 2}
    assert choice["inputs"]["bandwidth_MBps"] == 0
    assert "predicted" in choice["reason"] and choice["inputs"]["gemm_gflops"] > 0


@pytest.mark.parametrize("call, message", [
    (lambda: hostir.chunk_choice.choose("layer", [2]), r"cost must be a .*BlockCost"),
    (lambda: hostir.chunk_choice.choose(hostir.chunk_choice.mlp_block_cost(64, 8, 64, 1), []),
     r"candidates must be positive ints, got \[\]"),
    (lambda: hostir.chunk_choice.choose(hostir.chunk_choice.mlp_block_cost(64, 8, 64, 1), [0]),
     r"candidates must be positive ints"),
    (lambda: hostir.chunk_choice.mlp_block_cost(63, 8, 64, 2),
     r"tokens \(63\) must divide by the 2 devices"),
    (lambda: hostir.chunk_choice.transformer_layer_cost(64, 0, 64, 1),
     r"hidden must be a positive int, got 0"),
    (lambda: hostir.chunk_choice.BlockCost(link_bytes=1, flops=1, collectives_per_chunk=1,
                                           ops_per_chunk=1, flops_by_chunks={}, gemm=[1, 2]),
     r"gemm has 2 extents; give \[m, k, n\]"),
    (lambda: hostir.chunk_choice.BlockCost(link_bytes=-1, flops=1, collectives_per_chunk=1,
                                           ops_per_chunk=1, flops_by_chunks={}, gemm=[1, 2, 3]),
     r"must not be negative"),
])
def test_chunk_choice_bad_input(call, message):
    with pytest.raises(hostir.Error, match=message):
        call()


def test_trace_of_one_execute_in_one_process(tmp_path):
    with hostir.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.relu(fd.ops.add(x, x)))
    fd.execute([torch.randn(8, 8)])
    with hostir.trace(tmp_path / "one.json") as traced:
        fd.execute([torch.randn(8, 8)])
    assert traced.path == str(tmp_path / "one.json") and traced.events > 0
    events = json.loads((tmp_path / "one.json").read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == traced.events
    # Each trace starts empty: the second holds nothing of the run before it.
    fd.execute([torch.randn(8, 8)])
    with hostir.trace(tmp_path / "two.json") as again:
        pass
    assert again.events == 0


_TRACE_INSIDE_A_TRACE = """
import json, sys, torch, hostir
with hostir.FusionDefinition() as fd:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
    fd.add_output(fd.ops.relu(fd.ops.add(x, x)))
folder = sys.argv[1]
fd.execute([torch.randn(8, 8)])                       # before: only HOSTIR_TRACE sees it
with hostir.trace(folder + "/outer.json") as outer:
    fd.execute([torch.randn(8, 8)])
    with hostir.trace(folder + "/inner.json") as inner:
        fd.execute([torch.randn(8, 8)])
fd.execute([torch.randn(8, 8)])                       # after: only HOSTIR_TRACE sees it
print(json.dumps({"outer": outer.events, "inner": inner.events}))
"""


def test_trace_inside_a_recording_trace_keeps_the_outer_one_whole(tmp_path):
    # HOSTIR_TRACE records the whole process; hostir.trace blocks inside it
    # (and one inside another) write their stretch and neither clear nor
    # stop the trace around them.
    env = dict(os.environ, HOSTIR_TRACE=str(tmp_path / "process.json"))
    env.pop("RANK", None)
    result = subprocess.run([sys.executable, "-c", _TRACE_INSIDE_A_TRACE, str(tmp_path)],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    counts = json.loads(result.stdout.strip().splitlines()[-1])

    def complete(name):
        events = json.loads((tmp_path / name).read_text())["traceEvents"]
        return [e for e in events if e["ph"] == "X"]

    per_run = counts["inner"]
    assert per_run > 0 and counts["outer"] == 2 * per_run
    assert len(complete("inner.json")) == per_run
    assert len(complete("outer.json")) == 2 * per_run
    # The process trace also holds the compile stage's one preparation of
    # the executor (its stream's worker and thread budget, 17f61dd).
    process = complete("process.json")
    prepares = [e for e in process if e.get("cat") == "prepare"]
    assert len(prepares) == 1
    assert len(process) - len(prepares) == 4 * per_run


def test_trace_is_written_when_the_block_raises(tmp_path):
    with pytest.raises(ValueError, match="stop"):
        with hostir.trace(tmp_path / "raised.json") as traced:
            raise ValueError("stop")
    assert traced.path == str(tmp_path / "raised.json")
    assert "traceEvents" in json.loads((tmp_path / "raised.json").read_text())


def test_trace_into_a_missing_folder_is_refused_before_running(tmp_path):
    with pytest.raises(hostir.Error, match=r"folder of '.*nowhere/t.json' does not exist"):
        hostir.trace(tmp_path / "nowhere" / "t.json")


def test_collectives_on_plain_tensors_in_a_world_of_one():
    x = torch.randn(4, 3)
    torch.testing.assert_close(dist.all_gather_tensor(x, gather_dim=1), x)
    torch.testing.assert_close(dist.reduce_scatter_tensor(x, scatter_dim=-1), x)
    with pytest.raises(hostir.Error, match=r"dim 2 is not an axis of a tensor of shape \(4, 3\)"):
        dist.reduce_scatter_tensor(x, 2)
    with pytest.raises(hostir.Error, match=r"expected a torch.Tensor, got list"):
        dist.all_gather_tensor([1, 2])


def test_thread_budget_is_what_an_execute_applies():
    budget = dist.thread_budget(number_of_streams=4)
    assert budget["intra_op_threads"] >= 1 and "intra-op thread" in budget["description"]
    with pytest.raises(hostir.Error, match=r"number_of_streams must be a positive int"):
        dist.thread_budget(number_of_streams=0)
