"""Variables another vendor's stack reads, filled at import for the active
platform when unset (docs/environment-variables.md, Interoperability); an
explicit export, including an empty one, always wins.

  ascend  TRITON_ENABLE_TASKQUEUE=0: FlagTree's Ascend Triton queues kernel
          launches by default; off, a launch it cannot run asynchronously
          fails with its own message instead of being silently overridden.
          Filled before FlagGems is imported, which imports that Triton.
  bpu     HB_DNN_USER_DEFINED_L2M_SIZES=6:6:6:6: the BPU runtime's L2 split
          over its four cores, the value the vendor's runtime demos export;
          the runtime reads it when it first sets up a model, so it has to be
          there before the first inference.
"""

from __future__ import annotations

from torch_fl import _env

FILLED: dict[str, dict[str, str]] = {
    "ascend": {"TRITON_ENABLE_TASKQUEUE": "0"},
    "bpu": {"HB_DNN_USER_DEFINED_L2M_SIZES": "6:6:6:6"},
}


def fill(plugin_name: str | None) -> dict[str, str]:
    """Sets `plugin_name`'s variables that are unset; returns those it wrote."""
    written = {}
    for name, value in FILLED.get(plugin_name or "", {}).items():
        if _env.set_foreign(name, value):
            written[name] = value
    return written
