"""FLAGOS_DIST_REDIRECT_GLOO, and the default backend of a flagos process.

torch resolves a group's backend string in one place, BackendConfig. When
the process accelerator is flagos:
- "gloo" (FLAGOS_DIST_REDIRECT_GLOO on, the default) becomes
  "cpu:gloo,flagos:flagos": CPU tensors keep gloo, flagos tensors get the
  flagos backend instead of gloo's "unsupported device type flagos";
- no backend at all becomes the same "cpu:gloo,flagos:flagos", as torch
  makes "cpu:gloo,cuda:nccl" of it on CUDA (torch alone would map only the
  accelerator's device type). torch then gives such a group gloo as its
  default backend (what DDP's logger and getDefaultBackend ask for), so gloo
  must be one of its backends.
Where FlagCX's torch plugin is to serve the group's flagos tensors (the
flagcx tier), "flagos" becomes "cpu:gloo,flagos:flagos" too: FlagCX takes no
CPU tensors, and torch builds a "flagos"-only group's backend once for both
device types.
The group keeps the name it was asked for (dist.get_backend still says "gloo").
"""

from __future__ import annotations

import torch
import torch.distributed.distributed_c10d as c10d

from torch_fl import _env
from torch_fl.distributed import _tiers

_original_init = None
_SPLIT = "cpu:gloo,flagos:flagos"  # CPU tensors to gloo itself, flagos tensors to the flagos backend


def _accelerator_is_flagos() -> bool:
    acc = torch._C._get_accelerator()
    return acc is not None and acc.type == "flagos"


def resolve(backend: str) -> str:
    """The backend string torch is given instead of `backend`."""
    name = str(backend).lower()
    if name == "flagos" and _tiers.flagcx_wanted():
        return _SPLIT
    if not _accelerator_is_flagos():
        return backend
    if name == c10d.Backend.UNDEFINED:
        return _SPLIT
    if name == "gloo" and _env.get("FLAGOS_DIST_REDIRECT_GLOO"):
        return _SPLIT
    return backend


def install() -> None:
    global _original_init
    if _original_init is not None:
        return
    _original_init = c10d.BackendConfig.__init__

    def __init__(self, backend):  # noqa: N807 (torch's own method name)
        _original_init(self, resolve(backend))

    c10d.BackendConfig.__init__ = __init__
