"""Issue 37 item 1: the sequence-parallel MLP block forward over token
counts the ranks need not divide, {1, 2, 7, 1000, 4095, 4097} x chunks {1,
3, 7, 16}, on 1 to 4 ranks, against single-process torch
(uneven_sweep_script.py; before the pipelined allgather + GEMM cut every
rank's chunks from the largest shard, each uneven case with chunks raised
"uneven shards")."""

import pytest

from test_autograd import _launch


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_mlp_block_over_uneven_token_counts_matches_torch(ranks):
    _launch(ranks, script="uneven_sweep_script.py")
