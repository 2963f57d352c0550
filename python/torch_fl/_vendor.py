"""GEMS_VENDOR: FlagGems' own vendor selector, owned by FlagGems, filled in
by torch_fl when unset (docs/environment-variables.md, Interoperability).

Rules:
- an explicit value outside KNOWN_VENDORS raises RuntimeError naming the
  valid ones, at ``import torch_fl``, instead of being passed on;
- an explicit value, including an empty one ("not this vendor"), is never
  overridden;
- unset, it is filled from the active plugin's accelerator. An accelerator
  plugin whose vendor torch_fl cannot name raises: it never silently picks one.

Decision (host and third-party plugins): the host plugin is not a FlagGems
platform (FlagGems' kernels are Triton kernels for an accelerator; the host
"device" is host RAM), so with the host plugin active and GEMS_VENDOR unset
nothing is detected, nothing is written, and nothing raises. The same holds
for any plugin that is not one of the nine accelerators. Whether FlagGems can
then be used at all is for the routing layer to report when a FlagGems route
is first resolved.
"""

from __future__ import annotations

import os

from torch_fl import _env

NAME = "GEMS_VENDOR"

# The FlagGems vendor each accelerator plugin maps to. ppu: FlagGems has no
# PPU backend; PPU's SDK is a CUDA toolkit and its Triton targets it as CUDA,
# so it takes FlagGems' nvidia backend (as a PPU build of torch is a CUDA
# build) — unverified on PPU hardware. tsingmicro takes FlagGems' own
# "tsingmicro" (its runtime/backend/_tsingmicro vendor_name). bpu is not a
# FlagGems platform (no Triton backend; its kernels are hbdk4-compiled
# models): like the host plugin, nothing is detected or written for it.
ACCELERATOR_VENDORS: dict[str, str | None] = {
    "cuda": "nvidia",
    "metax": "metax",
    "dcu": "hygon",
    "ascend": "ascend",
    "musa": "mthreads",
    "gcu": "enflame",
    "ppu": "nvidia",
    "tsingmicro": "tsingmicro",
}

KNOWN_VENDORS: tuple[str, ...] = tuple(sorted({v for v in ACCELERATOR_VENDORS.values() if v}))


def validate(value: str) -> str:
    if value not in KNOWN_VENDORS:
        raise RuntimeError(
            f"[flagos] {NAME}={value!r} is not a vendor torch_fl can configure; "
            f"valid values: {', '.join(KNOWN_VENDORS)} (or unset it to detect one)")
    return value


def resolve(plugin_name: str | None) -> tuple[str | None, bool]:
    """The vendor in effect for `plugin_name`'s accelerator (None: no FlagGems
    vendor) and whether torch_fl must fill it in. Raises on an explicit value
    it cannot pass on, or a vendor it cannot name; writes nothing."""
    explicit = os.environ.get(NAME)
    if explicit is not None:
        return (validate(explicit) if explicit else None), False
    if plugin_name not in ACCELERATOR_VENDORS:
        return None, False  # host or a third-party plugin: not a FlagGems platform
    vendor = ACCELERATOR_VENDORS[plugin_name]
    if vendor is None:
        raise RuntimeError(
            f"[flagos] cannot detect the FlagGems vendor for the {plugin_name} plugin; "
            f"set {NAME} to one of: {', '.join(KNOWN_VENDORS)}")
    return vendor, True


def configure(plugin_name: str | None) -> str | None:
    """Validates an explicit GEMS_VENDOR, or fills it for `plugin_name`'s
    accelerator. Returns the vendor in effect (None: no FlagGems vendor)."""
    vendor, fill = resolve(plugin_name)
    if fill:
        _env.set_foreign(NAME, vendor)
    return vendor
