"""Loads a plugin wheel's bundled vendor torch (lib_<vendor>/, written by
tools/plugin_wheel/vendor_torch.py) before torch imports.

Armed by torch_fl's start-up hook (_torch_fl_startup) only when such a bundle
is on sys.path, it acts at the process's first ``import torch`` (a finder at
the head of sys.meta_path), so an interpreter that never imports torch loads
nothing. Every library is loaded into the global scope in the
bundle's order, so that torch's own libraries, loading next, bind to them by
soname: in a "core" bundle the vendor's libc10/libtorch_cpu/... stand in for
the installed torch's (whose files are never touched); in a "device" bundle
the installed torch's core libraries its device libraries need load first,
from the installed torch. Loading before torch matters: torch looks its
device hooks up once, at first use.

Nothing is loaded, and `error` says why in one [flagos] line that
``import torch_fl`` raises, when torch was already imported, when the
bundle's core variable (FLAGOS_DCU_VENDOR_CORE) differs from the environment,
when the installed torch's version is not the vendor torch's (unless its
skip variable, FLAGOS_DCU_SKIP_RUNTIME_CHECK, is on), or when a library
fails to load. Imports neither torch nor torch_fl.
"""

from __future__ import annotations

import ctypes
import json
import sys
from pathlib import Path

from _torch_fl_startup import switched_on as _on

path: Path | None = None  # the bundle.json acted on
record: dict = {}         # its contents
loaded: list[str] = []    # the libraries loaded, in order
error: str | None = None  # why nothing (or not everything) was loaded
note: str | None = None   # a check its skip variable let pass


def _installed_torch() -> Path | None:
    """The installed torch's package folder (found on sys.path, not imported)."""
    for entry in sys.path:
        candidate = Path(entry or ".") / "torch"
        if (candidate / "version.py").is_file():
            return candidate
    return None


def _version(torch_dir: Path) -> str | None:
    for line in (torch_dir / "version.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("'\"")
    return None


def _base(version: str | None) -> str | None:
    return version.split("+", 1)[0] if version else None


def _refusal(torch_dir: Path | None) -> str | None:
    """Why this bundle must not load here, under the torch installed at
    `torch_dir`, or None."""
    where = f"{path.parent}"
    vendor = record.get("vendor", "?")
    if "torch" in sys.modules:
        return f"[flagos] {where}: torch was imported before the {vendor} bundle could load"
    core_var = record.get("core_variable")
    if core_var and _on(core_var) != (record.get("layout") == "core"):
        built = int(record.get("layout") == "core")
        return (f"[flagos] {core_var}={int(_on(core_var))} at start-up, but {where} was built with "
                f"{core_var}={built} ({'the vendor core' if built else 'device libraries only'}); the two must "
                f"match: {'export ' + core_var + '=1' if built else 'unset ' + core_var} or rebuild the plugin wheel")
    if torch_dir is None:
        return f"[flagos] {where}: no torch is installed for the {vendor} bundle to load under"
    installed, bundled = _version(torch_dir), record.get("torch_version")
    if bundled and _base(installed) != _base(bundled):
        why = (f"[flagos] {where} holds {vendor}'s torch {bundled}, but torch {installed} is installed; the "
               f"release ({_base(bundled)}) must match")
        skip = record.get("check_variable")
        if not (skip and _on(skip)):
            return why + (f" ({skip}=1 loads it anyway)" if skip else "")
        global note
        note = f"{why}; loaded anyway ({skip}=1)"
    return None


class _BeforeTorch:
    """A meta-path finder that loads the bundle when torch is first imported,
    then steps aside (it finds nothing itself)."""

    def __init__(self, bundle: Path) -> None:
        self.bundle = bundle

    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            sys.meta_path.remove(self)
            load(self.bundle)
        return None


def arm(bundle: Path) -> None:
    """Loads the bundle at `bundle` (bundle.json) right before torch imports."""
    global path
    path = bundle
    if "torch" in sys.modules:
        load(bundle)
    else:
        sys.meta_path.insert(0, _BeforeTorch(bundle))


def load(bundle: Path) -> None:
    """Checks and loads the bundle at `bundle` (bundle.json); see the module doc."""
    global path, record, error
    path = bundle
    try:
        record = json.loads(bundle.read_text())
    except (OSError, ValueError) as exc:
        error = f"[flagos] {bundle}: unreadable ({exc})"
        return
    torch_dir = _installed_torch()
    error = _refusal(torch_dir)
    if error:
        return
    torch_lib = torch_dir / "lib"
    order = [torch_lib / n for n in record.get("from_installed_torch", [])]
    order += [bundle.parent / n for n in record.get("libraries", [])]
    for lib in order:
        try:
            ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            error = f"[flagos] {bundle.parent}: loading {lib.name} failed: {exc}"
            return
        loaded.append(str(lib))
