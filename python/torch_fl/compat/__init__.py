"""Shims for another framework's assumption about the device (not a vendor's
runtime): each one module with its switch, installed by ``install()`` at
import, on every plugin (docs/environment-variables.md, "framework shims")."""

from __future__ import annotations

from torch_fl import _env
from torch_fl._after_import import after_import


def install() -> None:
    if not _env.get("FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT"):
        from torch_fl.compat import flex_attention
        after_import("torch.nn.attention.flex_attention", flex_attention.relax_device_gate)
