"""The lines a call prints to stderr, kept as data as well as printed.

The core prints its ``[flagos]`` diagnostics straight to file descriptor 2,
so only a descriptor-level capture sees them; what a check reports can then
be both shown as usual and returned to a caller that reports it again
(``python -m torch_fl doctor``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Callable, TypeVar

T = TypeVar("T")


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _flush() -> None:
    """Python's own buffered stderr lines go out first, in order."""
    if sys.stderr is not None:
        sys.stderr.flush()


def captured(run: Callable[[], T]) -> tuple[T, list[str]]:
    """``run()``'s result and the lines written to stderr meanwhile, which
    still reach stderr (once ``run`` returns or raises)."""
    _flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to capture from: nothing would be seen either
        return run(), []
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            result = run()
        finally:
            _flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            data = sink.read()
            _write_all(2, data)
    return result, data.decode(errors="replace").splitlines()
