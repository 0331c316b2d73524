"""Issue 37's sweep beyond the MLP forward: the MLP block's training step
and the transformer layer's forward and training step over token counts
the ranks need not divide x chunks {1, 3, 7, 16}, on 1 to 4 ranks, against
single-process torch (uneven_training_sweep_script.py; before the
attention's chunked reduce-scatter padded every rank's rows to the largest
shard, each uneven layer case with chunks raised "uneven shards")."""

import pytest

from test_autograd import _launch


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_training_step_and_layer_over_uneven_token_counts_match_torch(ranks):
    _launch(ranks, script="uneven_training_sweep_script.py")
