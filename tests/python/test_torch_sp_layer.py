"""benchmarks/overlap/torch_sp_layer.py, the hand-written torch.distributed
baseline of `hostir sp-layer`, at tiny sizes on 2 local ranks: its serial and
pipelined layers match the single-process torch layer on every rank."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "overlap" / "torch_sp_layer.py"


def test_torch_sp_layer_two_ranks(tmp_path, free_port):
    out = tmp_path / "torch_layer.json"
    # 2 ranks of 16 tokens: chunks 2, 4, 8 divide them, 3 does not (skipped).
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--tokens", "32", "--hidden", "16", "--heads", "4",
         "--ffn", "32", "--chunks", "2,3,4,8", "--runs", "1", "--warmup", "0",
         "--port", str(free_port), "--timeout", "120", "--json", str(out)],
        capture_output=True, text=True, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "check: PASSED" in result.stdout, output
    for rank in (0, 1):
        assert f"[rank {rank}] check pipelined 8 against the single-process torch layer" in output
    assert "skipping chunk counts [3]" in result.stderr, output
    report = json.loads(out.read_text())
    assert report["check"] is True and report["max_abs_diff"] < 1e-4
    assert [p["chunks"] for p in report["pipelined"]] == [2, 4, 8]
    assert all(p["check"] for p in report["pipelined"])
    assert sorted(report["breakdown"]) == ["1", "2", "4", "8"]
    assert report["config"]["heads"] == 4 and report["config"]["ranks"] == 2
