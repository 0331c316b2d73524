"""Checkpoints of examples/train_gpt.py's sharded model (hostir.checkpoint):
a resumed run continues the loss curve bit for bit, a checkpoint loads onto
another rank count, a save that fails or dies leaves the previous one whole."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

import hostir
from conftest import build_dir

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
TEXT = "/usr/share/common-licenses/GPL-3"
MODEL = ["--layers", "2", "--hidden", "32", "--heads", "4", "--ffn", "64", "--context", "32",
         "--batch", "1"]


def environment():
    env = dict(os.environ, HOSTIR_COMM_TIMEOUT_S="30", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(hostir.__file__).resolve().parents[1]), str(HERE)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def launch(ranks, command, env=None):
    if ranks > 1:
        launcher = build_dir() / "tools" / "hostir"
        if not launcher.exists():
            pytest.skip(f"{launcher} is not built")
        command = [str(launcher), "launch", "-n", str(ranks), "--grace-period", "1", "--"] + command
    result = subprocess.run(command, env=env or environment(), capture_output=True, text=True,
                            timeout=240)
    return result.returncode, result.stdout + result.stderr


def train(tmp_path, name, ranks, steps, *flags):
    if not os.path.isfile(TEXT):
        pytest.skip(f"{TEXT} (Debian's base-files) is not on this machine")
    report = tmp_path / f"{name}.json"
    code, output = launch(ranks, [sys.executable, str(ROOT / "examples" / "train_gpt.py"),
                                  *MODEL, "--steps", str(steps), "--quiet", "--json", str(report),
                                  *flags])
    assert code == 0, output
    for rank in range(ranks):
        assert f"rank {rank} of {ranks}: PASSED" in output, output
    return json.loads(report.read_text()), output


def losses(report):
    return {s["step"]: s["loss"] for s in report["steps"]}


def test_resume_continues_the_loss_curve_bitwise(tmp_path):
    straight, _ = train(tmp_path, "straight", 2, 4)
    checkpoint = tmp_path / "gpt.pt"
    first, _ = train(tmp_path, "first", 2, 2, "--save", str(checkpoint))
    resumed, output = train(tmp_path, "resumed", 2, 4, "--load", str(checkpoint))
    assert "loaded " + str(checkpoint) + ": saved after step 2 on 2 rank(s)" in output, output
    assert resumed["config"]["first_step"] == 3
    # Bit for bit: the losses (float32 values, exact in JSON) of steps 3 and 4.
    assert losses(first) == {k: v for k, v in losses(straight).items() if k <= 2}
    assert losses(resumed) == {k: v for k, v in losses(straight).items() if k > 2}, (
        losses(resumed), losses(straight))
    # The reference model in the checkpoint resumes too.
    assert [s["reference_loss"] for s in resumed["steps"]] == \
        [s["reference_loss"] for s in straight["steps"][2:]]


def test_resume_flag_starts_fresh_without_a_checkpoint_then_continues(tmp_path):
    checkpoint = tmp_path / "gpt.pt"
    report, output = train(tmp_path, "fresh", 1, 1, "--resume", str(checkpoint),
                           "--save", str(checkpoint))
    assert report["config"]["first_step"] == 1 and checkpoint.exists()
    report, output = train(tmp_path, "again", 1, 2, "--resume", str(checkpoint),
                           "--save", str(checkpoint))
    assert report["config"]["first_step"] == 2, output


def test_a_checkpoint_reshards_onto_other_rank_counts(tmp_path):
    """1 -> 2 -> 4 -> 2 -> 1 ranks, a step each: every run loads the last
    one's checkpoint, checks all its grads at its first step against the
    single-process reference (loaded from the same checkpoint) and its
    parameters after its last, and saves for the next."""
    previous, step = None, 0
    for ranks in (1, 2, 4, 2, 1):
        step += 1
        checkpoint = tmp_path / f"after{step}.pt"
        flags = ["--save", str(checkpoint)]
        if previous is not None:
            flags += ["--load", str(previous)]
        report, output = train(tmp_path, f"step{step}", ranks, step, *flags)
        if previous is not None:
            assert f"saved after step {step - 1} on {last_ranks} rank(s), resharded onto " \
                   f"{ranks}" in output, output
        for rank in range(ranks):
            assert f"rank {rank} of {ranks}: step {step} grads against torch" in output, output
        assert report["summary"]["loss_check"] is True
        assert report["summary"]["max_parameter_diff"] < 1e-4, report["summary"]
        previous, last_ranks = checkpoint, ranks


def test_a_save_that_fails_or_dies_leaves_the_previous_checkpoint_whole(tmp_path):
    checkpoint = tmp_path / "gpt.pt"
    env = environment()
    env["CKPT"] = str(checkpoint)
    code, output = launch(2, [sys.executable, str(HERE / "checkpoint_crash_script.py")], env)
    assert code != 0, output
    # The injected OSError: every rank raises, the old file stays, no temporary file.
    assert "rank 0: failed save raised: checkpoint.save: writing" in output, output
    assert "No space left on device" in output, output
    assert "rank 1: failed save raised: checkpoint.save: rank 0 failed to write" in output, output
    assert "rank 0: after the failed save: unchanged True, temporary files []" in output, output
    # Killed half-way through writing: the checkpoint is the first save's, whole.
    assert "rank 0: killed half-way through the save" in output, output
    assert "should have died returned" not in output, output
    first = (tmp_path / "gpt.pt.first.sha256").read_text()
    assert hashlib.sha256(checkpoint.read_bytes()).hexdigest() == first
    stale = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert stale and all(p.startswith(".gpt.pt.") for p in stale), stale
    saved = torch.load(checkpoint)
    assert saved["extra"] == {"step": 1} and saved["ranks"] == 2
    # The next save clears what the dead one left.
    model = torch.nn.Linear(2, 2)
    hostir.checkpoint.save(str(checkpoint), model)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    hostir.checkpoint.load(str(checkpoint), model)


def test_load_errors_name_the_problem(tmp_path):
    model = torch.nn.Linear(2, 2)
    path = tmp_path / "linear.pt"
    with pytest.raises(hostir.Error, match="does not exist"):
        hostir.checkpoint.load(str(path), model)
    torch.save({"weight": torch.ones(2)}, path)
    with pytest.raises(hostir.Error, match="is not a hostir.checkpoint/1 file"):
        hostir.checkpoint.load(str(path), model)
    hostir.checkpoint.save(str(path), model)
    with pytest.raises(hostir.Error, match=r"parameters missing from the file \[\], in the file "
                                           r"but not in the model \['bias'\]"):
        hostir.checkpoint.load(str(path), torch.nn.Linear(2, 2, bias=False))
    with pytest.raises(hostir.Error, match=r"'weight' is saved with the whole shape \(2, 2\)"):
        hostir.checkpoint.load(str(path), torch.nn.Linear(3, 2))
    with pytest.raises(hostir.Error, match="holds no optimizer state"):
        hostir.checkpoint.load(str(path), model, torch.optim.SGD(model.parameters(), lr=1))
    with pytest.raises(hostir.Error, match="folder of .* does not exist"):
        hostir.checkpoint.save(str(tmp_path / "missing" / "x.pt"), model)
