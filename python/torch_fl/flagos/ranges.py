"""Named ranges for the profiler, in the shape of ``torch.cuda.nvtx``.

flagos has no vendor tracing API of its own: a range is torch's profiler
``record_function``, so it shows up in ``torch.profiler`` traces (and does
nothing when no profiler runs). Ranges are per thread, as NVTX ranges are.
"""

from __future__ import annotations

import contextlib
import threading

from torch.autograd.profiler import record_function

_stack = threading.local()


def _open() -> list:
    if not hasattr(_stack, "ranges"):
        _stack.ranges = []
    return _stack.ranges


def range_push(msg: str) -> int:
    """Opens a range named ``msg`` on this thread; returns its zero-based depth."""
    ranges = _open()
    rf = record_function(msg)
    rf.__enter__()
    ranges.append(rf)
    return len(ranges) - 1


def range_pop() -> int:
    """Closes this thread's innermost range; returns its depth, or -1 when none is open."""
    ranges = _open()
    if not ranges:
        return -1
    ranges.pop().__exit__(None, None, None)
    return len(ranges)


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):  # noqa: A001 - torch.cuda.nvtx.range's name
    """Context manager: the enclosed code is one profiler range named ``msg.format(*args, **kwargs)``."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
