"""Shims for another framework's assumption about the device (not a vendor's
runtime): each one module with its switch, installed by ``install()`` at
import (docs/environment-variables.md, "framework shims"). Each waits for its
framework's module to load, so ``import torch_fl`` imports none of them.

  flex_attention   every plugin;
  qwen_image_rope  the gcu and ascend plugins, whose stacks serve (gcu) or
                   build (ascend) diffusers' complex rotary operands badly.
"""

from __future__ import annotations

from torch_fl import _env
from torch_fl._after_import import after_import

QWEN_IMAGE_ROPE_PLATFORMS = ("gcu", "ascend")


def install(plugin_name: str | None = None) -> None:
    if not _env.get("FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT"):
        from torch_fl.compat import flex_attention
        after_import("torch.nn.attention.flex_attention", flex_attention.relax_device_gate)
    if plugin_name in QWEN_IMAGE_ROPE_PLATFORMS and not _env.get("FLAGOS_DISABLE_QWENIMAGE_ROPE"):
        from torch_fl.compat import qwen_image_rope
        after_import(qwen_image_rope.MODULE, qwen_image_rope.install)
