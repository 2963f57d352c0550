"""The vendor torch a plugin wheel bundles (lib_<vendor>/), as torch_fl's
start-up hook loaded it before torch (python/_torch_fl_bundle.py).

With that plugin active, ``import torch_fl`` fails in one [flagos] line when
the hook refused or failed to load the bundle, or when the plugin's bundle is
there but the hook did not load it (``python -S``, or a plugin outside
torch_fl_plugin_<name>/ on sys.path): a half-loaded vendor torch would show up later
as wrong-looking routing, not as an error.
"""

from __future__ import annotations

import sys
from pathlib import Path


def hook():
    """The loader module when the start-up hook found a bundle, else None."""
    return sys.modules.get("_torch_fl_bundle")


def record(plugin_name: str) -> dict | None:
    """The bundle.json of the vendor torch loaded for `plugin_name`, or None."""
    h = hook()
    if h is None or h.error or h.record.get("vendor") != plugin_name:
        return None
    return h.record


def check(plugin: dict) -> None:
    name = plugin["name"]
    h = hook()
    if h is not None and h.record.get("vendor") == name:
        if h.error:
            raise RuntimeError(h.error)
        if h.note:
            print(h.note, file=sys.stderr, flush=True)
        return
    own = Path(plugin["path"]).parent / f"lib_{name}" / "bundle.json"
    if own.is_file():
        why = ("torch_fl's start-up hook (torch_fl_startup.pth) did not run in this interpreter"
               if "_torch_fl_startup" not in sys.modules else
               f"torch_fl's start-up hook looks for torch_fl_plugin_{name}/lib_{name}/ on sys.path, where a pip-installed "
               f"plugin wheel puts it")
        raise RuntimeError(f"[flagos] {own.parent} holds {name}'s torch, but it was not loaded before torch: {why}")
