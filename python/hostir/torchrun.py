"""torchrun for Debian's torch 1.13 on Python 3.11, installed with hostir.

torch 1.13's torchrun fails there before starting any worker
(`'NoneType' object has no attribute 'get'` in elastic/multiprocessing/api.py
to_map): Std.from_str("0") iterates the IntFlag Std, and Python 3.11 no
longer yields its zero member NONE, so the redirect setting becomes None.
This wrapper maps that None back to Std.NONE, then runs torchrun unchanged
(every torchrun argument works):

    /usr/bin/python3 -m hostir.torchrun --standalone --nproc_per_node=2 script.py

On a torch whose torchrun works it changes nothing.
"""

import torch.distributed.elastic.multiprocessing as multiprocessing
from torch.distributed.elastic.multiprocessing import api

_to_map = api.to_map


def _to_map_none_is_std_none(val_or_map, local_world_size):
    if val_or_map is None:
        val_or_map = api.Std.NONE
    elif isinstance(val_or_map, dict):
        val_or_map = {k: api.Std.NONE if v is None else v for k, v in val_or_map.items()}
    return _to_map(val_or_map, local_world_size)


api.to_map = _to_map_none_is_std_none
multiprocessing.to_map = _to_map_none_is_std_none

if __name__ == "__main__":
    from torch.distributed.run import main

    main()
