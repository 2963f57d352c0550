"""The flagos device as Dynamo and Inductor see it.

Streams, events, synchronisation, device count and current device come from
the same core as ``torch.flagos``. Properties are the plugin's, except on
CUDA-ABI plugins with a CUDA torch, where Triton's heuristics need the fields
only torch.cuda reports (registers per SM, warp size, ...): there they are the
interop CUDA device's.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface

from torch_fl import _C
from torch_fl.compat import cuda_shim
from torch_fl.compile import _capability
from torch_fl.flagos import amp

_flagos = torch.flagos


def _index(device: Any = None) -> int:
    if device is None:
        return _flagos.current_device()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        return _flagos.current_device() if device.index is None else device.index
    return int(device)


def device_properties(device: Any = None) -> Any:
    index = _index(device)
    cuda = _capability.interop_cuda_index(index)
    if cuda is None:
        return _flagos.get_device_properties(index)
    return cuda_shim.native("get_device_properties")(cuda)


class FlagosInterface(DeviceInterface):
    device = _flagos.device
    Event = _flagos.Event
    Stream = _flagos.Stream

    class Worker:
        """What Inductor's compile workers may ask without touching the device:
        answered in the parent, where torch_fl is imported."""

        @staticmethod
        def set_device(device: int) -> None:
            _flagos.set_device(device)

        @staticmethod
        def current_device() -> int:
            return _flagos.current_device()

        @staticmethod
        def get_device_properties(device: Any = None) -> Any:
            return device_properties(device)

    current_device = staticmethod(_flagos.current_device)
    set_device = staticmethod(_flagos.set_device)
    device_count = staticmethod(_flagos.device_count)
    stream = staticmethod(_flagos.stream)
    current_stream = staticmethod(_flagos.current_stream)
    set_stream = staticmethod(_flagos.set_stream)
    synchronize = staticmethod(_flagos.synchronize)
    get_device_properties = staticmethod(device_properties)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        _flagos.set_stream(_flagos.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type))

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        return _C._current_raw_stream(device_idx)

    @staticmethod
    def exchange_device(device: int) -> int:
        return _C._exchange_device(device)

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return _C._exchange_device(device) if device >= 0 else -1

    @staticmethod
    def is_available() -> bool:
        return _flagos.is_available()

    @staticmethod
    def get_compute_capability(device: Any = None) -> Any:
        cuda = _capability.interop_cuda_index(_index(device))
        if cuda is None:
            return ""
        major, minor = cuda_shim.native("get_device_capability")(cuda)
        return major * 10 + minor

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return amp.is_bf16_supported(including_emulation)

    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return _flagos.memory_allocated(device)

    @staticmethod
    def is_triton_capable(device: Any = None) -> bool:
        return _capability.codegen(_index(device)) == "triton"

    @staticmethod
    def raise_if_triton_unavailable(device: Any = None) -> None:
        if not FlagosInterface.is_triton_capable(device):
            raise RuntimeError(f"[flagos] no Triton codegen for flagos here; {_capability.describe(_index(device))}")
