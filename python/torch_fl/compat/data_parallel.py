"""``nn.DataParallel`` over a module on flagos.

DataParallel replicates a module with CUDA-only broadcasts and scatters, so
a module on flagos (a CUDA script under the alias, or any script) failed at
its first forward. Its own one-device behaviour is kept instead: the
module runs on the device its parameters are on, inputs moved there as
DataParallel's scatter would, with one [flagos] line the first time saying
that several devices take one process each (DistributedDataParallel,
``torchrun``). Modules on other devices run DataParallel unchanged.
"""

from __future__ import annotations

import sys

import torch

MODULE = "torch.nn.parallel.data_parallel"
_said = False


def _flagos_device(module: torch.nn.Module) -> torch.device | None:
    for t in module.parameters():
        return t.device if t.device.type == "flagos" else None
    for t in module.buffers():
        return t.device if t.device.type == "flagos" else None
    return None


def install(module) -> None:
    cls = module.DataParallel
    original = cls.forward
    if getattr(original, "_flagos", False):
        return

    def forward(self, *inputs, **kwargs):
        device = _flagos_device(self.module)
        if device is None:
            return original(self, *inputs, **kwargs)
        global _said
        if not _said and len(self.device_ids) > 1:
            _said = True
            print(f"[flagos] nn.DataParallel runs its module on {device} only: its replication is CUDA-only; "
                  f"use DistributedDataParallel with one process per device (torchrun) for several",
                  file=sys.stderr, flush=True)
        inputs, kwargs = torch.utils._pytree.tree_map_only(torch.Tensor, lambda t: t.to(device), (inputs, kwargs))
        return self.module(*inputs, **kwargs)

    forward._flagos = True
    cls.forward = forward
