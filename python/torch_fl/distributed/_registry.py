"""Registration of the "flagos" backend with torch.distributed, and the
record of which tier each group got."""

from __future__ import annotations

import os
import sys
import weakref
from datetime import timedelta

import torch
import torch.distributed as dist

from torch_fl import _C
from torch_fl.distributed import _flagcx, _redirect, _tiers

BACKEND_NAME = "flagos"
TIERS = (_tiers.FLAGCX, _tiers.COMMUNICATOR, _tiers.GLOO_ZERO_COPY, _tiers.GLOO_STAGED)

# group name -> tier; names are unique per process (torch derives them).
_tier_by_group: dict[str, str] = {}
_backends: "weakref.WeakValueDictionary[str, object]" = weakref.WeakValueDictionary()


def _create(opts, pg_options) -> object:
    """torch's extended creator call: one backend for one new group."""
    chosen = _tiers.choose()
    timeout = opts.timeout if isinstance(opts.timeout, timedelta) else timedelta(seconds=1800)
    backend = None
    if chosen == _tiers.FLAGCX:
        # Only flagos tensors reach it: such a group's BackendConfig gives CPU
        # tensors to gloo itself (_redirect.resolve).
        try:
            backend = _flagcx.create(opts, pg_options, timeout)
        except _flagcx.Unavailable as e:
            chosen = _tiers.flagcx_unavailable(str(e), say=opts.group_rank == 0)
    gloo = dist.ProcessGroupGloo(opts.store, opts.group_rank, opts.group_size, timeout) if backend is None else None
    if chosen == _tiers.COMMUNICATOR:
        # CPU tensors, and what the communicator lacks, still go through gloo.
        fallback = _C.GlooTierBackend(gloo, zero_copy=_tiers.fallback_zero_copy())
        try:
            backend = _C.CommBackend(opts.store, opts.group_rank, opts.group_size,
                                     int(timeout.total_seconds() * 1000), fallback, torch.flagos.current_device())
        except _C.CommUnavailable as e:  # raised on every rank alike
            chosen = _tiers.communicator_unavailable(str(e), say=opts.group_rank == 0)
    if backend is None:
        backend = _C.GlooTierBackend(gloo, zero_copy=chosen == _tiers.GLOO_ZERO_COPY)
    _tier_by_group[opts.group_id] = chosen
    if opts.group_rank == 0:
        via = f"{_flagcx.SELECTOR}={os.environ.get(_flagcx.SELECTOR, '')}, " if chosen == _tiers.FLAGCX else ""
        print(f"[flagos] distributed: group '{opts.group_id}' ({opts.group_size} ranks) "
              f"runs on tier {chosen} ({via}{_C.active_plugin()['name']} plugin)", file=sys.stderr, flush=True)
    return backend


def tier(group: dist.ProcessGroup | None = None) -> str:
    """The tier serving `group`'s flagos tensors (default: the world group).
    Raises for a group the flagos backend does not serve."""
    group = group if group is not None else dist.distributed_c10d._get_default_group()
    name = group.group_name
    if name not in _tier_by_group:
        raise ValueError(f"[flagos] distributed: group '{name}' is not served by the flagos backend "
                         f"(its backend: {dist.get_backend(group)})")
    return _tier_by_group[name]


_registered = False


def register() -> None:
    """Registers "flagos" (devices: flagos and cpu) once per process, and the
    gloo redirect. Called by ``import torch_fl``."""
    global _registered
    if _registered or not dist.is_available():
        return
    dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True, devices=["flagos", "cpu"])
    _redirect.install()
    _registered = True
