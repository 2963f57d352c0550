"""FLAGOS_METAX_COMPAT: torch.cuda's device queries answered by the flagos device.

FlagGems' metax backend names its device "cuda" and asks torch.cuda how many
devices there are and what they are. On MetaX those questions have no good
answer from torch itself: a generic PyTorch CUDA build's properties query
calls cudaGetDeviceProperties_v2, which MACA does not provide, and a CPU
build of torch sees no device at all. With the switch on and the metax plugin
active, the queries below answer from torch.flagos (the same MetaX devices);
nothing else in torch.cuda changes.

A vendor is a row of SWITCHES: the plugin and the variable that turns it on.
"""

from __future__ import annotations

import sys

import torch

from torch_fl import _env

SWITCHES = {"metax": "FLAGOS_METAX_COMPAT"}

# The torch.cuda functions that are replaced, all device queries.
QUERIES = ("is_available", "device_count", "current_device", "get_device_name",
           "get_device_properties", "get_device_capability")


def _index(device) -> int:
    """torch.cuda's device argument (None, an int, "cuda:1", a torch.device) as a flagos ordinal."""
    if device is None:
        return torch.flagos.current_device()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        return torch.flagos.current_device() if device.index is None else device.index
    return int(device)


def _answers() -> dict:
    flagos = torch.flagos
    return {
        "is_available": flagos.is_available,
        "device_count": flagos.device_count,
        "current_device": flagos.current_device,
        "get_device_name": lambda device=None: flagos.get_device_name(_index(device)),
        "get_device_properties": lambda device=None: flagos.get_device_properties(_index(device)),
        "get_device_capability": lambda device=None: flagos.get_device_capability(_index(device)),
    }


def install(plugin_name: str | None) -> list[str]:
    """Answers torch.cuda's device queries from flagos where a switch asks for
    it; returns the names replaced. A switch for another vendor's plugin is
    reported in one line and changes nothing."""
    replaced: list[str] = []
    for plugin, variable in SWITCHES.items():
        if not _env.get(variable):
            continue
        if plugin != plugin_name:
            print(f"[flagos] {variable}=1 applies to the {plugin} plugin, but the active plugin is "
                  f"{plugin_name}: torch.cuda's device queries are left alone", file=sys.stderr, flush=True)
            continue
        answers = _answers()
        for name in QUERIES:
            setattr(torch.cuda, name, answers[name])
            replaced.append(name)
    return replaced
