"""torch.distributed on flagos: the "flagos" c10d backend (docs/distributed.md).

``import torch_fl`` registers it (torch.distributed's public
``Backend.register_backend``) as the default backend of the flagos device, so
``init_process_group()``, ``init_process_group("flagos")`` and
``init_device_mesh("flagos", ...)`` work, and a "flagos" group serves CPU
tensors too. Each group runs on one tier, chosen when it is created and
reported by :func:`tier`:

- ``flagcx``: FlagCX's torch plugin (the ``flagcx`` package) is installed;
  its backend serves the group's flagos tensors, gloo its CPU tensors
  (``FLAGOS_DIST_FORCE_NCCL=1`` skips it);
- ``communicator``: the plugin brings its own communicator (the ABI's
  collectives extension); collectives run on a device stream, ordered by
  events, CPU tensors still through gloo;
- ``gloo-zero-copy``: the plugin's device memory is host-addressable; gloo
  runs on CPU views of the flagos tensors, no copies;
- ``gloo-staged``: every other plugin; each flagos operand is copied to the
  host, reduced by gloo, and copied back (``FLAGOS_DIST_STAGED_GLOO=0``
  makes building such a group an error).

``FLAGOS_DIST_REDIRECT_GLOO`` (on by default) answers a plain "gloo" request
with gloo for CPU tensors and the flagos backend for flagos tensors.
"""

from __future__ import annotations

from torch_fl.distributed._registry import BACKEND_NAME, TIERS, register, tier

__all__ = ["BACKEND_NAME", "TIERS", "register", "tier"]
