"""Variables another vendor's stack reads, filled at import for the active
plugin when unset (docs/environment-variables.md, Interoperability); an
explicit export, including an empty one, always wins. Which ones a plugin
needs it declares itself, in its manifest's [environment] table
(torch_fl._manifest): e.g. ascend's TRITON_ENABLE_TASKQUEUE=0 (FlagTree's
Ascend Triton queues launches by default; off, a launch it cannot run
asynchronously fails with its own message) and bpu's
HB_DNN_USER_DEFINED_L2M_SIZES=6:6:6:6 (its runtime reads the L2 split when
it first sets up a model). Filled before FlagGems imports the vendor's Triton.
"""

from __future__ import annotations

from torch_fl import _env, _manifest


def fill(plugin_name: str | None) -> dict[str, str]:
    """Sets `plugin_name`'s declared variables that are unset; returns those it wrote."""
    written = {}
    for name, value in _manifest.environment(plugin_name).items():
        if _env.set_foreign(name, value):
            written[name] = value
    return written
