"""diffusers' Qwen-Image rotary embedding, kept off the complex exponential
on a flagos device (GCU and Ascend only; docs/compile.md, "Framework shims").

diffusers keys the Qwen-Image rope on the device in two places that have to
agree: each rope module's ``_get_device_freqs`` (QwenEmbedRope,
QwenEmbedLayer3DRope) produces the operand, and the attention processor's
rotation consumes it. As released on PyPI (checked against 0.42.1) the
operand is always the complex exponential and the rotation is the module
function ``apply_rotary_emb_qwen(x, freqs, use_real=False)``, a complex
multiply. Some diffusers builds add a per-device table, ``ROPE_PER_DEVICE``,
with a real-valued ``apply_rotary_emb_qwen_neuron`` for devices without a
complex dtype.

For the flagos device this installs both halves:

  operand   ``_get_device_freqs(flagos)`` returns the rotation angles (float32,
            the complex table's shape), computed on the CPU, where the complex
            table lives, and moved to the device once per device;
  rotation  ``rotate`` — out = x*cos + rot(x)*sin over interleaved (real,
            imaginary) pairs, the values of the complex multiply and of
            apply_rotary_emb_qwen_neuron, with each angle's cos and sin
            duplicated by stack+flatten instead of a stride-0
            repeat_interleave broadcast. It is reached through
            ``ROPE_PER_DEVICE["flagos"]`` where diffusers has that table, and
            otherwise through ``apply_rotary_emb_qwen``, which takes it when
            handed real angles and calls diffusers' own function otherwise.

Why: on GCU the topsaten stack serves the complex multiply slowly enough to
dominate a transformer forward; on Ascend complex operands cannot be built at
all (Unsupported dtype for ACL: ComplexFloat). The patch is confined to
diffusers: no operator route changes. FLAGOS_DISABLE_QWENIMAGE_ROPE=1 leaves
diffusers as it ships.
"""

from __future__ import annotations

import functools

import torch

MODULE = "diffusers.models.transformers.transformer_qwenimage"
ROPE_CLASSES = ("QwenEmbedRope", "QwenEmbedLayer3DRope")
DEVICE = "flagos"
_ANGLES = "_flagos_rope_angles"


def rotate(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """x [B, S, H, D] rotated by `angles` [S, D/2], as diffusers' complex path
    computes it (in float32, returned in x's dtype)."""
    cos = torch.cos(angles.float())
    sin = torch.sin(angles.float())
    cos = torch.stack([cos, cos], dim=-1).flatten(-2).unsqueeze(1)  # [S, 1, D]
    sin = torch.stack([sin, sin], dim=-1).flatten(-2).unsqueeze(1)
    real, imag = x.float().reshape(*x.shape[:-1], -1, 2).unbind(-1)
    rotated = torch.stack([-imag, real], dim=-1).flatten(-2)
    return (x.float() * cos + rotated * sin).to(x.dtype)


def _is_flagos(device) -> bool:
    return device is not None and torch.device(device).type == DEVICE


def _wrap_device_freqs(original):
    @functools.wraps(original)
    def _get_device_freqs(self, device):
        if not _is_flagos(device):
            return original(self, device)
        cache = self.__dict__.setdefault(_ANGLES, {})
        key = str(torch.device(device))
        if key not in cache:
            cache[key] = (torch.angle(self.pos_freqs).to(device), torch.angle(self.neg_freqs).to(device))
        return cache[key]

    _get_device_freqs._flagos = True
    return _get_device_freqs


def _wrap_apply(original):
    @functools.wraps(original)
    def apply_rotary_emb_qwen(x, freqs_cis, use_real=True, use_real_unbind_dim=-1):
        # Only this module's operand is a real tensor on the complex path.
        if not use_real and isinstance(freqs_cis, torch.Tensor) and not freqs_cis.is_complex():
            return rotate(x, freqs_cis)
        return original(x, freqs_cis, use_real=use_real, use_real_unbind_dim=use_real_unbind_dim)

    apply_rotary_emb_qwen._flagos = True
    return apply_rotary_emb_qwen


def _table_rotation(x, freqs, *args, **kwargs):
    return rotate(x, freqs)


def install(module) -> None:
    """Registers the flagos device in `module` (diffusers' transformer_qwenimage)."""
    for name in ROPE_CLASSES:
        cls = getattr(module, name, None)
        method = getattr(cls, "_get_device_freqs", None)
        if method is not None and not getattr(method, "_flagos", False):
            cls._get_device_freqs = _wrap_device_freqs(method)
    table = getattr(module, "ROPE_PER_DEVICE", None)
    if isinstance(table, dict):
        table.setdefault(DEVICE, _table_rotation)
    else:
        original = module.apply_rotary_emb_qwen
        if not getattr(original, "_flagos", False):
            module.apply_rotary_emb_qwen = _wrap_apply(original)
