"""NVTX ranges (``torch.cuda.nvtx``) as torch.profiler ranges, where torch has
no NVTX (a CPU build of torch).

A CUDA script annotates its phases with ``torch.cuda.nvtx.range_push/pop``,
``range(...)``, ``range_start/end`` and ``mark``; a CPU build of torch raises
"NVTX functions not installed" at the first one. Installed with the torch.cuda
shim, each becomes a ``record_function`` range (an instant one for ``mark``),
so the annotations show in a torch.profiler trace of flagos work. Under a CUDA
build, torch's NVTX stays.
"""

from __future__ import annotations

import itertools
import threading

import torch


class _ProfilerRanges:
    """torch.cuda.nvtx's ``_nvtx`` calls, answered with record_function."""

    def __init__(self) -> None:
        self._local = threading.local()  # push/pop nest per thread, as NVTX's do
        self._open: dict[int, object] = {}  # range_start/range_end may cross threads
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def _stack(self) -> list:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def rangePushA(self, msg: str) -> int:
        stack = self._stack()
        scope = torch.autograd.profiler.record_function(msg)
        scope.__enter__()
        stack.append(scope)
        return len(stack) - 1

    def rangePop(self) -> int:
        stack = self._stack()
        if not stack:
            return -1  # NVTX's answer for a pop without a push
        stack.pop().__exit__(None, None, None)
        return len(stack)

    def rangeStartA(self, msg: str) -> int:
        scope = torch.autograd.profiler.record_function(msg)
        scope.__enter__()
        with self._lock:
            handle = next(self._ids)
            self._open[handle] = scope
        return handle

    def rangeEnd(self, handle: int) -> None:
        with self._lock:
            scope = self._open.pop(handle, None)
        if scope is not None:
            scope.__exit__(None, None, None)

    def markA(self, msg: str) -> None:
        with torch.autograd.profiler.record_function(msg):
            pass


def install() -> bool:
    """Replaces a CPU build's NVTX stub; False where torch has NVTX."""
    if hasattr(torch._C, "_nvtx"):
        return False
    import torch.cuda.nvtx as nvtx

    if not isinstance(nvtx._nvtx, _ProfilerRanges):
        nvtx._nvtx = _ProfilerRanges()
    return True
