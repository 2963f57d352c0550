"""The torch.cuda shim (off with FLAGOS_DISABLE_CUDA_SHIM): torch.cuda's
everyday functions answered by the flagos device.

A CUDA script asks torch.cuda whether there is a GPU, which one, how much
memory it holds, and synchronizes or seeds through it. Where this shim is
installed, those names answer from torch.flagos; a device argument may say
cuda ("cuda:1", torch.device("cuda", 1)) or flagos. Everything else in
torch.cuda (kernels' own CUDA paths, cudnn, nvtx, graphs) is left alone.

``native(name)`` is torch's own function, for code that means the real CUDA
runtime (the cuda plugin asks it for the hardware under flagos).
"""

from __future__ import annotations

import threading

import torch

from torch_fl.compat.cuda_alias import _flagos  # torch.cuda's device argument as flagos'

# torch.cuda name -> torch.flagos name, for the functions with a device argument.
WITH_DEVICE = {
    "current_stream": "current_stream", "default_stream": "default_stream",
    "get_device_capability": "get_device_capability", "get_device_name": "get_device_name",
    "get_device_properties": "get_device_properties", "max_memory_allocated": "max_memory_allocated",
    "max_memory_reserved": "max_memory_reserved", "mem_get_info": "mem_get_info",
    "memory_allocated": "memory_allocated", "memory_reserved": "memory_reserved",
    "memory_stats": "memory_stats", "memory_summary": "memory_summary",
    "reset_max_memory_allocated": "reset_max_memory_allocated",
    "reset_peak_memory_stats": "reset_peak_memory_stats", "set_device": "set_device",
    "synchronize": "synchronize", "get_rng_state": "get_rng_state",
    "get_per_process_memory_fraction": "get_per_process_memory_fraction",
}
# The same name on both, no device argument to translate.
SAME = (
    "current_device", "device_count", "empty_cache", "get_rng_state_all", "host_memory_stats", "init",
    "initial_seed",
    "is_available", "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all", "seed",
    "seed_all", "set_rng_state_all", "set_stream", "stream", "Stream", "Event",
)
CONTEXTS = ("device", "device_of")

_replaced: dict[str, object] = {}  # name -> torch's own function


# torch.cuda's own functions that do not need torch's CUDA state initialised.
_NO_INIT = ("is_available", "is_initialized", "device_count", "init", "stream", "Stream", "Event")
_init_lock = threading.Lock()


def native(name: str):
    """torch.cuda's own ``name``, whether or not the shim is installed."""
    if name not in _NO_INIT:
        _native_lazy_init()
    return _replaced[name] if name in _replaced else getattr(torch.cuda, name)


def _native_lazy_init() -> None:
    """torch.cuda's own lazy initialisation. torch.cuda's functions find
    is_initialized() among the module's globals, where the shim answers for
    flagos, so torch's _lazy_init would return early and leave, e.g.,
    get_device_properties' helper undefined; it runs here with torch's own
    is_initialized put back for the duration, once."""
    if torch.cuda._initialized or "is_initialized" not in _replaced or not native("is_available")():
        return
    with _init_lock:
        if torch.cuda._initialized:
            return
        shim = torch.cuda.is_initialized
        torch.cuda.is_initialized = _replaced["is_initialized"]
        try:
            torch.cuda._lazy_init()
        finally:
            torch.cuda.is_initialized = shim


def _with_device(fn):
    def answer(device=None, *args, **kwargs):
        return fn(_flagos(device), *args, **kwargs)

    answer.__name__ = fn.__name__
    answer.__doc__ = f"torch.flagos.{fn.__name__}, for torch.cuda (the torch.cuda shim)."
    return answer


def _set_rng_state(new_state, device="cuda"):
    return torch.flagos.set_rng_state(new_state, _flagos(device))


def _set_per_process_memory_fraction(fraction, device=None):
    return torch.flagos.set_per_process_memory_fraction(fraction, _flagos(device))


def _context(cls):
    class Context(cls):
        def __init__(self, device):
            super().__init__(_flagos(device) if not isinstance(device, torch.Tensor) else device)

    Context.__name__ = Context.__qualname__ = cls.__name__
    return Context


def answers() -> dict:
    flagos = torch.flagos
    table = {name: _with_device(getattr(flagos, target)) for name, target in WITH_DEVICE.items()}
    table.update({name: getattr(flagos, name) for name in SAME})
    table.update({name: _context(getattr(flagos, name)) for name in CONTEXTS})
    table["set_rng_state"] = _set_rng_state
    table["set_per_process_memory_fraction"] = _set_per_process_memory_fraction
    return table


def install() -> list[str]:
    """Answers torch.cuda's everyday functions from flagos (once); returns the names."""
    if _replaced:
        return sorted(_replaced)
    for name, value in answers().items():
        _replaced[name] = getattr(torch.cuda, name, None)
        setattr(torch.cuda, name, value)
    # torch's own device-generic code (DDP, distributed checkpointing) asks
    # this first and would take "cuda" from the shim's is_available(); the
    # tensors it then meets are flagos'.
    torch._utils._get_available_device_type = lambda: "flagos"
    from torch_fl.compat import nvtx_ranges

    nvtx_ranges.install()
    return sorted(_replaced)
