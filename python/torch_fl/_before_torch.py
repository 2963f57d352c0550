"""What the start-up hook (_torch_fl_startup, run by torch_fl_startup.pth
before torch imports) did, and a switch of its that could not act.

FLAGOS_METAX_CUDART_SHIM acts only there: by ``import torch_fl`` torch has
loaded its CUDA libraries. When the hook did not run (``python -S``, or a
torch_fl whose .pth is not in this interpreter's site-packages), the switch
(or the variable was set only after it ran), the switch is reported here in
one line, with the way to load the shim by hand.
"""

from __future__ import annotations

import sys

from torch_fl import _env

SHIM_VARIABLE = "FLAGOS_METAX_CUDART_SHIM"


def hook():
    """The start-up hook's module, or None when it did not run."""
    return sys.modules.get("_torch_fl_startup")


def shim_loaded() -> str | None:
    """The libcudart.so.12 shim's path when the hook loaded it."""
    h = hook()
    return getattr(h, "shim_loaded", None) if h is not None else None


def check() -> None:
    if not _env.get(SHIM_VARIABLE) or shim_loaded() is not None:
        return
    h = hook()
    if h is not None and getattr(h, "shim_error", None):
        return  # the hook tried, failed, and said why in its own line
    why = ("torch_fl's start-up hook (torch_fl_startup.pth) did not run in this interpreter" if h is None
           else "the variable was not set when the interpreter started")
    print(f"[flagos] {SHIM_VARIABLE}=1, but the libcudart.so.12 shim was not loaded before torch: {why}; "
          "export it before starting Python, or preload the shim: "
          "LD_PRELOAD=<site-packages>/torch_fl/plugins/metax/cudart_shim/libcudart.so.12",
          file=sys.stderr, flush=True)
