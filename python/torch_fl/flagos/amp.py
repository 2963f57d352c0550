"""Autocast support: ``torch.autocast("flagos", dtype=...)`` and
``torch.amp.GradScaler("flagos")`` use the core's AutocastPrivateUse1 kernels."""

from __future__ import annotations

from typing import List

import torch


def get_amp_supported_dtype() -> List[torch.dtype]:
    """Lower-precision dtypes autocast may use on flagos."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True on every plugin: bfloat16 tensors and bfloat16 autocast work on any flagos device."""
    return True
