"""``torch.flagos``: the flagos device module, shaped like ``torch.cuda``.

Registered by ``import torch_fl`` as ``torch.flagos``. Device, stream, event,
memory and RNG state live in the core (``torch_fl._C``); this module is the
Python face users know from ``torch.cuda``. Initialisation is lazy: the first
tensor on ``flagos`` (or any call below that needs the device) runs
``_lazy_init()``, which also arms the fork check — a child forked after that
cannot use flagos and says so.
"""

from __future__ import annotations

import builtins
import threading
from typing import Any, NoReturn, Optional, Union

import torch

from torch_fl import _C

from .amp import get_amp_supported_dtype, is_bf16_supported
from .graphs import (
    FlagosGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from .memory import (
    MemPool,
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    host_memory_stats,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
    get_per_process_memory_fraction,
    set_per_process_memory_fraction,
    use_mem_pool,
)
from .random import (
    default_generators,
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .ranges import range, range_pop, range_push  # noqa: A004 - torch.cuda.nvtx's names
from .streams import Event, Stream

# A flagos allocation that fails raises torch's own OutOfMemoryError.
OutOfMemoryError = torch.OutOfMemoryError

_initialized = False
_init_lock = threading.Lock()
_queued_calls: list = []

_DeviceLike = Union[torch.device, str, int, None]


def is_available() -> bool:
    """True when the active plugin reports at least one device."""
    return device_count() > 0


def device_count() -> int:
    return _C._device_count()


def is_initialized() -> bool:
    return _initialized and not _C._is_in_bad_fork()


def _is_in_bad_fork() -> bool:
    return _C._is_in_bad_fork()


def _lazy_call(fn, **kwargs) -> None:
    """Runs ``fn`` now if initialised, else right after initialisation."""
    if is_initialized():
        fn()
    else:
        _queued_calls.append(fn)


def _lazy_init() -> None:
    global _initialized
    if is_initialized():
        return
    with _init_lock:
        if is_initialized():
            return
        if _C._is_in_bad_fork():
            raise RuntimeError(
                "[flagos] Cannot re-initialize flagos in forked subprocess. To use flagos with "
                "multiprocessing, you must use the 'spawn' start method"
            )
        _C._lazy_init()
        _initialized = True
        for fn in _queued_calls:
            fn()
        _queued_calls.clear()


def init() -> None:
    _lazy_init()


def _index(device: _DeviceLike, optional: bool = True) -> int:
    if device is None:
        return current_device()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "flagos":
            raise ValueError(f"[flagos] expected a flagos device, got {device}")
        return current_device() if device.index is None else device.index
    return int(device)


def current_device() -> int:
    _lazy_init()
    return _C._get_device()


def set_device(device: _DeviceLike) -> None:
    index = _index(device)
    if index >= 0:
        _C._set_device(index)


class device:
    """Context manager that makes ``device`` current and restores the previous one."""

    def __init__(self, device: Any):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            _lazy_init()
            self.prev_idx = _C._exchange_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _C._set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of tensor ``obj`` current (no-op for non-flagos)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "flagos" else None)


def synchronize(device: _DeviceLike = None) -> None:
    """Waits for all work on every stream of ``device``."""
    _lazy_init()
    _C._synchronize(_index(device))


def current_stream(device: _DeviceLike = None) -> Stream:
    """The calling thread's current stream on ``device``."""
    _lazy_init()
    s = torch.accelerator.current_stream(_index(device))
    return Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


def default_stream(device: _DeviceLike = None) -> Stream:
    """The plugin's default stream of ``device`` (stream id 0)."""
    _lazy_init()
    s = torch.accelerator.current_stream(_index(device))
    return Stream(stream_id=0, device_index=s.device_index, device_type=s.device_type)


def set_stream(stream: torch.Stream) -> None:
    if stream is None:
        return
    _lazy_init()
    torch.accelerator.set_stream(stream)


class StreamContext:
    """Context manager that makes ``stream`` current on its device, restoring after."""

    def __init__(self, stream: Optional[torch.Stream]):
        self.stream = stream
        self.src_prev = None
        self.dst_prev = None
        self.prev_device = -1

    def __enter__(self):
        if self.stream is None:
            return
        self.prev_device = current_device()
        self.src_prev = current_stream(self.prev_device)
        if self.stream.device_index != self.prev_device:
            set_device(self.stream.device_index)
            self.dst_prev = current_stream(self.stream.device_index)
        set_stream(self.stream)

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        if self.dst_prev is not None:
            set_stream(self.dst_prev)
        set_device(self.prev_device)
        set_stream(self.src_prev)
        return False


def stream(stream: Optional[torch.Stream]) -> StreamContext:
    return StreamContext(stream)


class _DeviceProperties:
    """What ``get_device_properties`` returns: plugin-reported facts of one device."""

    def __init__(self, index: int, raw: dict):
        self.index = index
        self.name: str = raw["name"]
        self.arch: str = raw["arch"]
        # torch.cuda's name for the architecture string when torch.version.cuda
        # is unset (torch reads it through the torch.cuda shim on a CPU torch).
        self.gcnArchName: str = raw["arch"]
        self.major: int = raw["major"]
        self.minor: int = raw["minor"]
        self.total_memory: int = raw["total_memory"]
        self.multi_processor_count: int = raw["multi_processor_count"]
        self.uuid: bytes = raw["uuid"]
        self.pci_bus_id = raw["pci_bus_id"]
        self.capabilities: list = raw["capabilities"]
        self.alloc_alignment: int = raw["alloc_alignment"]
        self.stream_priority_range = raw["stream_priority_range"]
        self._interop_index = raw.get("interop_device_index") if "cuda_abi" in self.capabilities else None

    def __getattr__(self, name: str):
        # Fields the ABI does not report (L2_cache_size, warp_size,
        # regs_per_multiprocessor, ...): on a CUDA-ABI plugin beside a CUDA
        # torch they are the interop CUDA device's, which Inductor's
        # benchmarker and Triton's heuristics read through torch.cuda.
        if name.startswith("_") or self._interop_index is None:
            raise AttributeError(f"[flagos] device properties of flagos:{self.index} have no '{name}' "
                                 "(the plugin does not report it)")
        from torch_fl.compat import cuda_shim
        if not cuda_shim.native("is_available")():
            raise AttributeError(f"[flagos] device properties of flagos:{self.index} have no '{name}' "
                                 f"(it comes from CUDA, which this torch {torch.__version__} cannot reach)")
        return getattr(cuda_shim.native("get_device_properties")(int(self._interop_index)), name)

    def __repr__(self) -> str:
        return (
            f"_FlagosDeviceProperties(name='{self.name}', arch='{self.arch}', "
            f"major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count}, "
            f"capabilities={self.capabilities})"
        )


def get_device_properties(device: _DeviceLike = None) -> _DeviceProperties:
    _lazy_init()
    index = _index(device)
    return _DeviceProperties(index, _C._device_properties(index))


def get_device_name(device: _DeviceLike = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: _DeviceLike = None) -> tuple:
    props = get_device_properties(device)
    return props.major, props.minor


def get_arch_list() -> list:
    return sorted({get_device_properties(i).arch for i in builtins.range(device_count())})


def _unavailable(name: str, why: str) -> NoReturn:
    raise RuntimeError(f"[flagos] {name} is not available on flagos: {why}")


def _checked_index(device: _DeviceLike, what: str) -> int:
    index = _index(device)
    if not 0 <= index < device_count():
        raise ValueError(f"[flagos] invalid {what} {index}: {device_count()} flagos devices")
    return index


def can_device_access_peer(device: _DeviceLike, peer: _DeviceLike) -> bool:
    """True when both devices report the ``peer_access`` capability (copies between them
    avoid the host). As in torch.cuda, a device is not its own peer."""
    _lazy_init()
    index, peer_index = _checked_index(device, "device"), _checked_index(peer, "peer device")
    if index == peer_index:
        return False
    return all("peer_access" in get_device_properties(i).capabilities for i in (index, peer_index))


def _nvml_reading(name: str, device: _DeviceLike):
    """torch.cuda's NVML reading ``name`` of the CUDA device under a flagos
    device of a CUDA-ABI plugin (flagos ordinal i is CUDA ordinal i there);
    elsewhere the plugin interface has no such counter."""
    from torch_fl.compile import _capability
    from torch_fl.compat import cuda_shim

    index = _checked_index(device, "device")
    cuda = _capability.interop_cuda_index(index)
    if cuda is None:
        _unavailable(name, f"the plugin interface reports no such counter, and flagos:{index} is no CUDA "
                           "device torch.cuda could ask NVML about")
    return cuda_shim.native(name)(cuda)


def utilization(device: _DeviceLike = None) -> int:
    """Percent of the last sample period a kernel ran (NVML, CUDA-ABI plugins)."""
    return _nvml_reading("utilization", device)


def memory_usage(device: _DeviceLike = None) -> int:
    """Percent of the last sample period device memory was read or written (NVML)."""
    return _nvml_reading("memory_usage", device)


def temperature(device: _DeviceLike = None) -> int:
    """The GPU's temperature in degrees Celsius (NVML)."""
    return _nvml_reading("temperature", device)


def power_draw(device: _DeviceLike = None) -> int:
    """The GPU's power draw in milliwatts (NVML)."""
    return _nvml_reading("power_draw", device)


def clock_rate(device: _DeviceLike = None) -> int:
    """The SM clock in MHz (NVML)."""
    return _nvml_reading("clock_rate", device)


_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode: Union[int, str]) -> None:
    """Only ``"default"`` (0) is accepted: flagos does not detect synchronizing calls."""
    if isinstance(debug_mode, str) and debug_mode not in _SYNC_DEBUG_MODES:
        raise ValueError(f"[flagos] invalid debug_mode {debug_mode!r}: expected one of "
                         "'default', 'warn', 'error' or 0, 1, 2")
    if _SYNC_DEBUG_MODES.get(debug_mode, debug_mode) != 0:
        _unavailable(f"set_sync_debug_mode({debug_mode!r})",
                     "the core does not detect synchronizing calls; only 'default' (0) is")


def get_sync_debug_mode() -> int:
    return 0


# "range" is left out: a star import would shadow the builtin.
__all__ = [
    "Event", "FlagosGraph", "MemPool", "OutOfMemoryError", "Stream", "StreamContext",
    "caching_allocator_alloc", "caching_allocator_delete", "can_device_access_peer",
    "current_device", "current_stream", "default_generators", "default_stream", "device",
    "device_count", "device_of", "empty_cache", "get_amp_supported_dtype", "get_arch_list",
    "get_device_capability", "get_device_name", "get_device_properties", "get_rng_state",
    "get_rng_state_all", "get_sync_debug_mode", "graph", "graph_pool_handle", "host_memory_stats", "init",
    "initial_seed", "is_available", "is_bf16_supported", "is_current_stream_capturing",
    "is_initialized", "make_graphed_callables", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
    "memory_reserved", "memory_snapshot", "memory_stats", "memory_summary", "range_pop",
    "range_push", "reset_accumulated_memory_stats", "reset_max_memory_allocated",
    "reset_peak_memory_stats", "seed", "seed_all", "set_device", "set_per_process_memory_fraction",
    "get_per_process_memory_fraction", "use_mem_pool",
    "set_rng_state", "set_rng_state_all", "set_stream", "set_sync_debug_mode", "stream",
    "synchronize", "utilization", "memory_usage", "temperature", "power_draw", "clock_rate",
]
