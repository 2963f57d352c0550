"""GEMS_VENDOR: FlagGems' own vendor selector, owned by FlagGems, filled in
by torch_fl when unset (docs/environment-variables.md, Interoperability).

Rules:
- an explicit value outside KNOWN_VENDORS raises RuntimeError naming the
  valid ones, at ``import torch_fl``, instead of being passed on;
- an explicit value, including an empty one ("not this vendor"), is never
  overridden;
- unset, it is filled with the FlagGems vendor the active plugin declares
  beside its library (libflagos_<name>.toml, ``[flaggems] vendor = "..."``):
  a vendor plugin brings this knowledge itself, and torch_fl names no vendor.

A plugin that declares none is not a FlagGems platform: the host plugin
(FlagGems' kernels are Triton kernels for an accelerator; the host "device"
is host RAM), bpu (no Triton backend: its kernels are hbdk4-compiled models),
a third-party plugin without the declaration. With one of them active and
GEMS_VENDOR unset nothing is detected, written or raised; whether FlagGems can
be used at all is for the routing layer to report when a FlagGems route is
first resolved.
"""

from __future__ import annotations

import os

from torch_fl import _env, _manifest

NAME = "GEMS_VENDOR"

# FlagGems' vendor names (its runtime/backend/_<vendor> packages) that the
# plugins here declare: the values an explicit GEMS_VENDOR may take.
KNOWN_VENDORS: tuple[str, ...] = ("ascend", "enflame", "hygon", "metax", "mthreads", "nvidia", "tsingmicro")


def validate(value: str) -> str:
    if value not in KNOWN_VENDORS:
        raise RuntimeError(
            f"[flagos] {NAME}={value!r} is not a vendor torch_fl can configure; "
            f"valid values: {', '.join(KNOWN_VENDORS)} (or unset it to detect one)")
    return value


def declared_vendor(plugin_name: str | None) -> str | None:
    """The FlagGems vendor the plugin named `plugin_name` declares beside its
    library ([flaggems] vendor), or None."""
    return _manifest.declared(plugin_name, "flaggems", "vendor", str) or None


def resolve(plugin_name: str | None) -> tuple[str | None, bool]:
    """The vendor in effect for `plugin_name` (None: no FlagGems vendor) and
    whether torch_fl must fill it in. Raises on an explicit value it cannot
    pass on, or a declaration it cannot read; writes nothing."""
    explicit = os.environ.get(NAME)
    if explicit is not None:
        return (validate(explicit) if explicit else None), False
    vendor = declared_vendor(plugin_name)
    return vendor, vendor is not None


def configure(plugin_name: str | None) -> str | None:
    """Validates an explicit GEMS_VENDOR, or fills it with what `plugin_name`
    declares. Returns the vendor in effect (None: no FlagGems vendor)."""
    vendor, fill = resolve(plugin_name)
    if fill:
        _env.set_foreign(NAME, vendor)
    return vendor
