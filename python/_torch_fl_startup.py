"""torch_fl's interpreter start-up hook: what must happen before `import torch`.

Installed at the top of site-packages with the one-line torch_fl_startup.pth,
which Python's site module runs when an interpreter starts (not under
``python -S``). Two things cannot wait for ``import torch_fl``, because by
then torch has loaded:

- ``FLAGOS_METAX_CUDART_SHIM=1``: load the libcudart.so.12 shim
  (plugins/cudalike/cudart_shim) into the global scope, so that a generic
  PyTorch CUDA build's libcudart.so.12 references bind to it and through it
  to MACA's cu-bridge;
- on a MUSA build (the build record's accelerator, or ``FLAGOS_PLUGIN=musa``),
  set ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` if unset, so that an installed
  torch_musa does not claim PrivateUse1 while torch imports;
- arm the loading of the vendor torch a ppu or dcu plugin wheel bundles
  (lib_<vendor>/, _torch_fl_bundle: at the first ``import torch``), unless
  FLAGOS_PLUGIN names another plugin.

It imports neither torch nor torch_fl, and costs a few environment lookups
and file checks when none applies. ``import torch_fl`` reads what it did from this module
(torch_fl._before_torch) and reports a switch that had no effect.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent

SHIM_VARIABLE = "FLAGOS_METAX_CUDART_SHIM"
# Where the shim is installed: beside the metax plugin, in torch_fl's wheel or
# in the plugin wheel torch_fl-plugin-metax.
SHIM_PATHS = (SITE / "torch_fl" / "plugins" / "metax" / "cudart_shim" / "libcudart.so.12",
              SITE / "torch_fl_plugin_metax" / "cudart_shim" / "libcudart.so.12")

# Plugins whose wheel may bundle their vendor's torch (tools/plugin_wheel/vendor_torch.py).
BUNDLE_VENDORS = ("ppu", "dcu")

# Accelerator -> the foreign variables it fills before torch imports (set if unset).
BEFORE_TORCH = {
    "musa": {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"},
}

# The registry's boolean words (core/runtime/env/registry.cpp); a value that
# is not one means the default, off, here, and import torch_fl's environment
# scan reports it in its one line. test/python/test_vendor_env.py checks the two agree.
TRUE_WORDS = ("1", "true", "on", "yes")

shim_loaded: str | None = None  # the shim's path once loaded
shim_error: str | None = None   # why FLAGOS_METAX_CUDART_SHIM=1 loaded nothing
filled: dict[str, str] = {}     # the foreign variables this hook set


def switched_on(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in TRUE_WORDS


def accelerators() -> set[str]:
    """The build record's accelerator and an explicitly chosen plugin's name."""
    found = set()
    record = SITE / "torch_fl" / "_build_config.py"
    try:
        for line in record.read_text().splitlines():
            if line.startswith("ACCELERATOR = "):
                found.add(line.split("=", 1)[1].strip().strip("'\""))
                break
    except OSError:
        pass
    plugin = os.environ.get("FLAGOS_PLUGIN", "").strip().lower()
    if plugin:
        # A name, or a path to libflagos_<name>.so (docs/environment-variables.md).
        name = plugin.rsplit("/", 1)[-1]
        found.add(name[len("libflagos_"):-len(".so")] if name.startswith("libflagos_") and name.endswith(".so")
                  else name)
    return found


def load_shim() -> None:
    global shim_loaded, shim_error
    if "torch" in sys.modules:
        shim_error = "torch was imported before the shim could load"
        return
    path = next((p for p in SHIM_PATHS if p.is_file()), None)
    if path is None:
        shim_error = ("no libcudart.so.12 shim in " + " or ".join(str(p.parent) for p in SHIM_PATHS)
                      + " (this torch_fl has no metax plugin)")
        return
    import ctypes

    try:
        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        shim_error = f"{path}: {exc}"
        return
    shim_loaded = str(path)


def bundle_path() -> Path | None:
    """The bundle.json of a vendor torch to load: the first
    torch_fl_plugin_<vendor>/lib_<vendor>/ on sys.path, for the vendor
    FLAGOS_PLUGIN names, or any when it is unset."""
    vendors = BUNDLE_VENDORS
    if os.environ.get("FLAGOS_PLUGIN", "").strip():
        vendors = tuple(v for v in BUNDLE_VENDORS if v in accelerators())
    for vendor in vendors:
        for entry in sys.path:
            candidate = Path(entry or ".") / f"torch_fl_plugin_{vendor}" / f"lib_{vendor}" / "bundle.json"
            if candidate.is_file():
                return candidate
    return None


_ran = False


def run() -> None:
    # Once per interpreter: site may process one site-packages folder twice
    # (a venv over a site-packages that also holds it), running the .pth again.
    global _ran
    if _ran:
        return
    _ran = True
    bundle = bundle_path()
    if bundle is not None:
        import _torch_fl_bundle

        _torch_fl_bundle.arm(bundle)
    if switched_on(SHIM_VARIABLE):
        load_shim()
        if shim_error:
            print(f"[flagos] {SHIM_VARIABLE}=1: {shim_error}", file=sys.stderr, flush=True)
    pending = {name: value for acc in BEFORE_TORCH for name, value in BEFORE_TORCH[acc].items()
               if name not in os.environ}
    if not pending:
        return
    for acc in accelerators() & BEFORE_TORCH.keys():
        for name, value in BEFORE_TORCH[acc].items():
            if name not in os.environ:  # an explicit export, even an empty one, wins
                os.environ[name] = value
                filled[name] = value
