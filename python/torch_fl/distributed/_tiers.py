"""Which tier serves a new group, from the active plugin's facts."""

from __future__ import annotations

import sys
import warnings

import torch

from torch_fl import _C, _env
from torch_fl.distributed import _flagcx

FLAGCX = "flagcx"
COMMUNICATOR = "communicator"
GLOO_ZERO_COPY = "gloo-zero-copy"
GLOO_STAGED = "gloo-staged"

_staged_warned = False


def _host_addressable() -> bool:
    """Whether flagos tensors on the current device can be read by the host
    in place. With no device, no flagos tensor exists to stage either."""
    if torch.flagos.device_count() == 0:
        return True
    props = _C._device_properties(torch.flagos.current_device())
    return "host_addressable" in props["capabilities"]


def fallback_zero_copy() -> bool:
    """Whether the gloo tier under a communicator maps flagos tensors without copies."""
    return _host_addressable()


def choose(flagcx: bool = True) -> str:
    """The tier for a group built now (FlagCX's only where `flagcx`); raises
    when the only one left is forbidden. Warns once per process when it is
    the staged one."""
    if flagcx and flagcx_wanted():
        return FLAGCX
    if torch.flagos.device_count() > 0 and _C.has_collectives():
        return COMMUNICATOR
    return choose_gloo()


def flagcx_wanted() -> bool:
    """Whether a group built now tries FlagCX's plugin first: it is
    installed, has not failed to import, and FLAGOS_DIST_FORCE_NCCL is off."""
    return torch.flagos.device_count() > 0 and _flagcx.wanted()


_flagcx_unavailable_said = False


def flagcx_unavailable(why: str, say: bool) -> str:
    """The next tier for a group FlagCX could not serve; says why once per
    process where `say` (the group's rank 0)."""
    global _flagcx_unavailable_said
    if say and not _flagcx_unavailable_said:
        _flagcx_unavailable_said = True
        print(f"[flagos] distributed: FlagCX's torch plugin is unavailable, so flagos groups use the next "
              f"tier: {why}", file=sys.stderr, flush=True)
    return choose(flagcx=False)


_unavailable_said = False


def communicator_unavailable(why: str, say: bool) -> str:
    """The gloo tier for a group whose plugin has the collectives extension
    but not its library (every rank learns it from rank 0); says why once
    per process where `say` (the group's rank 0)."""
    global _unavailable_said
    if say and not _unavailable_said:
        _unavailable_said = True
        plugin = _C.active_plugin()["name"]
        print(f"[flagos] distributed: the {plugin} plugin's communicator is unavailable, so its groups use "
              f"the gloo tiers: {why.removeprefix('[flagos] ')}", file=sys.stderr, flush=True)
    return choose_gloo()


def choose_gloo() -> str:
    """The gloo tier for a group built now (see choose())."""
    global _staged_warned
    if _host_addressable():
        return GLOO_ZERO_COPY
    plugin = _C.active_plugin()["name"]
    if not _env.get("FLAGOS_DIST_STAGED_GLOO"):
        raise RuntimeError(
            f"[flagos] distributed: the {plugin} plugin's memory is not host-addressable and it has no "
            "communicator (collectives extension and its library), so a flagos group would stage every "
            "operand through the host "
            "(gloo-staged), which FLAGOS_DIST_STAGED_GLOO=0 forbids; unset it to allow staging")
    if not _staged_warned:
        _staged_warned = True
        warnings.warn(
            f"[flagos] distributed: the {plugin} plugin has no communicator and its memory is not "
            "host-addressable; flagos groups copy each operand device->host->device per collective "
            "(gloo-staged). FLAGOS_DIST_STAGED_GLOO=0 makes this an error", stacklevel=4)
    return GLOO_STAGED
