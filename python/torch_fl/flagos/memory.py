"""Memory of the flagos caching allocator, in torch.cuda's shapes.

The figures come from the core allocator through torch.accelerator (which
reads the same c10::DeviceAllocator), so ``torch.flagos.memory_allocated()``
and ``torch.accelerator.memory_allocated()`` always agree.
``FLAGOS_USE_CACHING_ALLOCATOR=0`` turns caching off: every allocation then
goes straight to the plugin and reserved equals allocated.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Dict, Tuple

import torch

from torch_fl import _C


def _index(device) -> int:
    from torch_fl import flagos

    flagos._lazy_init()
    return flagos._index(device)


def memory_stats(device=None) -> Dict[str, Any]:
    """Flat dict: "allocated_bytes.all.current", "num_alloc_retries", ... (torch.cuda keys)."""
    return torch.accelerator.memory_stats(_index(device))


def memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None) -> None:
    torch.accelerator.reset_peak_memory_stats(_index(device))


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated torch.cuda name: resets *all* peak statistics, as torch.cuda's does."""
    warnings.warn(
        "torch.flagos.reset_max_memory_allocated now calls torch.flagos.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(_index(device))


def empty_cache() -> None:
    """Returns every cached, unused block of every device to the plugin."""
    from torch_fl import flagos

    if flagos.is_initialized():
        torch.accelerator.empty_cache()


def mem_get_info(device=None) -> Tuple[int, int]:
    """(free, total) bytes of the device as the plugin reports them."""
    return tuple(_C._mem_get_info(_index(device)))


def memory_snapshot(device=None) -> list:
    """One dict per segment: address, total_size, allocated_size, segment_type, blocks."""
    return _C._memory_snapshot(_index(device))


# caching_allocator_alloc's blocks: each raw pointer is held by a uint8 tensor
# from the caching allocator until caching_allocator_delete drops it.
_raw_blocks: Dict[int, torch.Tensor] = {}
_raw_lock = threading.Lock()


def caching_allocator_alloc(size: int, device=None, stream=None) -> int:
    """``size`` bytes from the caching allocator on ``device``, for use on ``stream``
    (default: the current one); returns the address. Free with ``caching_allocator_delete``."""
    from torch_fl import flagos

    index = _index(device)
    with flagos.device(index), flagos.stream(stream):
        block = torch.empty(int(size), dtype=torch.uint8, device=torch.device("flagos", index))
    ptr = block.data_ptr()
    if ptr:
        with _raw_lock:
            _raw_blocks[ptr] = block
    return ptr


def caching_allocator_delete(mem_ptr: int) -> None:
    """Returns a block from ``caching_allocator_alloc`` to the cache (0 is a no-op)."""
    if not mem_ptr:
        return
    with _raw_lock:
        block = _raw_blocks.pop(int(mem_ptr), None)
    if block is None:
        raise RuntimeError(f"[flagos] caching_allocator_delete: {int(mem_ptr):#x} was not "
                           "allocated by torch.flagos.caching_allocator_alloc")
    del block


def host_memory_stats() -> Dict[str, int]:
    """The pinned-host cache's statistics, in ``torch.cuda.host_memory_stats``'
    keys: ``allocations.*`` and ``allocated_bytes.*`` (current, peak,
    allocated, freed: blocks held by the cache, in use or cached),
    ``num_host_alloc`` and ``num_host_free`` (calls to the plugin)."""
    return dict(_C._host_memory_stats())


def _snapshot(device=None) -> dict:
    """``torch.cuda.memory._snapshot``'s shape: the caching allocator's
    segments; no device traces (see ``_record_memory_history``)."""
    return {"segments": memory_snapshot(device), "device_traces": []}


def _record_memory_history(enabled="all", *args, **kwargs) -> None:
    """Stopping is a no-op; recording is not available."""
    from torch_fl import flagos

    if enabled is None or enabled is False:
        return
    flagos._unavailable("memory._record_memory_history",
                        "the flagos caching allocator keeps no per-allocation history; "
                        "memory._snapshot() and memory_snapshot() give its segments and blocks")


class MemPool:
    """``torch.cuda.MemPool`` is not available on flagos (see ``__init__``)."""

    def __init__(self, *args, **kwargs):
        from torch_fl import flagos

        flagos._unavailable("MemPool", "the flagos caching allocator has no user-made pools; "
                            "graph capture's private pools are torch.flagos.graph_pool_handle()")


def use_mem_pool(pool, device=None):
    MemPool()


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    """Caps what the caching allocator may reserve on ``device`` at
    ``fraction`` of its total memory, as torch.cuda's does: an allocation past
    it raises torch.OutOfMemoryError (after the cache went back). 1 lifts it."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._set_memory_fraction(_index(device), fraction)


def get_per_process_memory_fraction(device=None) -> float:
    """The fraction set_per_process_memory_fraction set on ``device`` (1.0: no cap)."""
    return _C._memory_fraction(_index(device))


def _fmt(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A human-readable table of the allocator's statistics for ``device``."""
    index = _index(device)
    stats = memory_stats(index)
    pools = ("all",) if abbreviated else ("all", "large_pool", "small_pool")
    rows = [
        ("Allocated memory", "allocated_bytes", True),
        ("Active memory", "active_bytes", True),
        ("Requested memory", "requested_bytes", True),
        ("Reserved memory", "reserved_bytes", True),
        ("Non-releasable memory", "inactive_split_bytes", True),
        ("Allocations", "allocation", False),
        ("Active allocs", "active", False),
        ("Reserved segments", "segment", False),
        ("Non-releasable allocs", "inactive_split", False),
    ]
    width = 75
    lines = ["=" * width, f" flagos memory summary, device {index}".ljust(width), "-" * width]
    lines.append(
        f" retries: {stats.get('num_alloc_retries', 0)}   OOMs: {stats.get('num_ooms', 0)}   "
        f"device allocs/frees: {stats.get('num_device_alloc', 0)}/{stats.get('num_device_free', 0)}"
    )
    lines.append("-" * width)
    lines.append(f" {'Metric':<28}{'Cur':>11}{'Peak':>11}{'Alloc':>12}{'Freed':>12}")
    for title, key, is_bytes in rows:
        lines.append("-" * width)
        for pool in pools:
            name = title if pool == "all" else f"  from {pool.replace('_', ' ')}"
            vals = [stats.get(f"{key}.{pool}.{k}", 0) for k in ("current", "peak", "allocated", "freed")]
            cells = [_fmt(v) if is_bytes else str(v) for v in vals]
            lines.append(f" {name:<28}{cells[0]:>11}{cells[1]:>11}{cells[2]:>12}{cells[3]:>12}")
    lines.append("=" * width)
    return "\n".join(lines) + "\n"
