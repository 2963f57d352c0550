"""Compatibility shims for torch behaviour that assumes in-tree devices.

Tied parameters across ``Module.to("flagos")``. torch keeps a Parameter's
identity through a device move only when the two tensor types are "shallow
copy compatible", a list that names CPU and CUDA but not PrivateUse1
(pytorch#196975; there is no hook to extend it in torch 2.11-2.13). Without
help, every moved Parameter becomes a new object, so weights shared by two
modules (GPT-2's lm_head and token embedding) silently stop being shared.
The shim records, before the outermost ``Module._apply``, every place each
Parameter object sits, and afterwards points all of them at the first
place's new Parameter again. Parameters that were not shared are untouched.
"""

from __future__ import annotations

import threading

import torch

_state = threading.local()
_original_apply = None


def _apply_keeping_ties(self, fn, *args, **kwargs):
    if getattr(_state, "active", False):  # an inner (recursive) call
        return _original_apply(self, fn, *args, **kwargs)
    sites: dict[int, list] = {}
    for module in self.modules():
        for name, param in module._parameters.items():
            if param is not None:
                sites.setdefault(id(param), []).append((module, name))
    _state.active = True
    try:
        result = _original_apply(self, fn, *args, **kwargs)
    finally:
        _state.active = False
    for places in sites.values():
        if len(places) < 2:
            continue
        first_module, first_name = places[0]
        shared = first_module._parameters[first_name]
        for module, name in places[1:]:
            if module._parameters[name] is not shared:
                module._parameters[name] = shared
    return result


def install() -> None:
    """Installs the shims once (import step, after the device is registered)."""
    global _original_apply
    if _original_apply is not None:
        return
    _original_apply = torch.nn.Module._apply
    torch.nn.Module._apply = _apply_keeping_ties
