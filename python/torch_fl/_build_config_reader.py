"""Reads the build record, torch_fl/_build_config.py.

The record is written at configure time by tools/build_config and installed
next to _C; it is not in the source tree. It is the only thing a run-time
reader consults about the build: the FLAGOS_ACCELERATOR and FLAGOS_BUILD_*
exports of the current shell are never re-read, so a stale export cannot make
an installed build describe itself wrongly.
"""

from __future__ import annotations

import importlib
from typing import Any

MODULE = "torch_fl._build_config"


def record() -> dict[str, Any]:
    """The record's public names (ACCELERATOR, KERNELS, VERSIONS, ...)."""
    try:
        module = importlib.import_module(MODULE)
    except ImportError as exc:
        raise RuntimeError(
            "[flagos] this torch_fl has no build record (torch_fl/_build_config.py): it was not "
            "installed by its build; rebuild it (make setup)") from exc
    return {k: v for k, v in vars(module).items() if k.isupper()}


def kernel_switch(kernel: str, variable: str, default: bool = False) -> tuple[bool, str]:
    """Whether this build compiled the `kernel` set (KERNELS[kernel], which the
    FLAGOS_BUILD_* `variable` decided), and why not when it did not."""
    if record().get("KERNELS", {}).get(kernel, default):
        return True, ""
    return False, f"this build did not compile {kernel} ({variable}=OFF)"
