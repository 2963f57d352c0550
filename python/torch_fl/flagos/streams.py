"""``torch.flagos.Stream`` and ``torch.flagos.Event``: torch's generic Stream and
Event on the flagos device, with the constructor signatures of torch.cuda's."""

from __future__ import annotations

import torch


def _flagos_device(device) -> torch.device:
    from torch_fl import flagos

    flagos._lazy_init()
    return torch.device("flagos", flagos._index(device))


class Stream(torch.Stream):
    """A flagos stream. ``Stream()`` takes one from the device's pool (priority
    < 0 picks the high-priority pool); ``Stream(stream_id=..., device_index=...,
    device_type=...)`` rebuilds one from its triple."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        if kwargs:
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=_flagos_device(device), priority=priority)

    def __repr__(self) -> str:
        return f"<torch.flagos.Stream device=flagos:{self.device_index} stream_id={self.stream_id}>"


class _EventMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, torch.Event) and obj.device.type == "flagos"


class Event(metaclass=_EventMeta):
    """A flagos event: ``Event(enable_timing=True)`` makes ``elapsed_time``
    available. Instances are plain ``torch.Event`` objects on the current
    flagos device (torch's C++ Event methods reject subclasses of it), and
    ``isinstance(e, torch.flagos.Event)`` holds for any flagos torch.Event."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        if interprocess:
            raise RuntimeError("[flagos] interprocess events are not supported")
        return torch.Event(device=_flagos_device(None), enable_timing=enable_timing, blocking=blocking)
