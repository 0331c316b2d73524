"""pytest plugin of the shim: the suite's GPU checks (is_pre_volta and the like read
torch.cuda's device properties) answered "no": the device reports a compute
capability newer than every check's. Nothing else."""

import collections

import torch

_Properties = collections.namedtuple("_Properties", ["major", "minor", "name"])

torch.cuda.current_device = lambda: 0
torch.cuda.get_device_properties = lambda device=None: _Properties(10, 0, "cpu (hostir)")
