"""What a plugin declares beside its library, libflagos_<name>.toml
(docs/abi-guide.md, "Requirements"): the one reader of those files on the
Python side, so that what a vendor's stack needs lives with its plugin and
torch_fl names no vendor.

  [flaggems]     vendor = "..."          GEMS_VENDOR to fill in (torch_fl._vendor)
  [environment]  NAME = "value"          foreign variables filled when unset,
                                         before FlagGems imports the vendor's Triton
  [compile]      fork_safe = false       the vendor's compiler must not run in a
                                         forked worker: TORCHINDUCTOR_COMPILE_THREADS=1
  [triton]       flagtree = true         its Triton is FlagTree's build: checked at
                                         import under FLAGOS_USE_FLAGTREE=1
  [compat]       qwen_image_rope = true  diffusers' Qwen-Image rope on flagos
  [assets]       libraries = [...]       runtime libraries its wheel bundles in
                                         <name>_assets/ (tools/plugin_wheel)

A plugin without the file, or a section or key it omits, declares nothing.
"""

from __future__ import annotations

import functools
import os
import tomllib
from pathlib import Path


def read(library: str | os.PathLike) -> dict:
    """The declarations beside the plugin library at `library` ({} without a
    file). Raises RuntimeError naming the file when it does not parse."""
    manifest = Path(library).with_suffix(".toml")
    try:
        with open(manifest, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as e:
        raise RuntimeError(f"[flagos] {manifest}: {e}") from None


def library_of(plugin_name: str) -> str | None:
    """The library of the plugin named `plugin_name`: the active one's, else
    the one discovery would find (None when none is installed)."""
    from torch_fl import _C
    from torch_fl._plugins import entry_point_candidates
    active = _C.active_plugin()
    if active is not None and active["name"] == plugin_name:
        return active["path"]
    return next((p["path"] for p in _C.discover(entry_point_candidates()) if p["name"] == plugin_name), None)


@functools.cache
def of(plugin_name: str | None) -> dict:
    """The declarations of the plugin named `plugin_name` ({} for none)."""
    library = library_of(plugin_name) if plugin_name else None
    return read(library) if library else {}


def typed(value, kind: type, where: str):
    """`value` when it is a `kind`; else RuntimeError naming `where` (the file
    and the key) and the value."""
    if not isinstance(value, kind):
        raise RuntimeError(f"[flagos] {where} must be a {_KIND_NAMES.get(kind, kind.__name__)}, not {value!r}")
    return value


_KIND_NAMES = {str: "string", bool: "bool"}


def declared(plugin_name: str | None, section: str, key: str, kind: type, default=None):
    """One declaration of `plugin_name`'s, `default` when it makes none.
    Raises RuntimeError naming the plugin when the value is not a `kind`."""
    value = of(plugin_name).get(section, {}).get(key, default)
    if value is default:
        return value
    return typed(value, kind, f"libflagos_{plugin_name}.toml: [{section}] {key}")


def environment(plugin_name: str | None) -> dict[str, str]:
    """The foreign variables `plugin_name` declares ([environment])."""
    return {name: typed(value, str, f"libflagos_{plugin_name}.toml: [environment] {name}")
            for name, value in of(plugin_name).get("environment", {}).items()}
