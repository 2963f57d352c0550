"""``python -m torch_fl conformance``: certify a plugin with the native runner.

The runner (``flagos-conformance``) is a small executable that needs neither
torch nor the core: it loads the plugin library in its own process, so a
plugin that crashes cannot take the caller down. See docs/conformance.md.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from torch_fl import _C
from torch_fl._plugins import entry_point_candidates


def runner_path() -> Path:
    """The installed runner: torch_fl/bin/flagos-conformance, beside _C."""
    path = Path(_C.__file__).resolve().parent / "bin" / "flagos-conformance"
    if not path.exists():
        raise FileNotFoundError(f"[flagos] conformance runner not found at {path}; reinstall torch_fl")
    return path


def resolve_plugin(spec: str) -> str:
    """A plugin name in any case (or its bare file name, libflagos_<name>.so),
    looked up among the installed plugins, never in the current directory;
    or a path to its library (it has a '/') -> library path."""
    if os.sep in spec:
        path = Path(spec).resolve()
        if not path.exists():
            raise FileNotFoundError(f"[flagos] plugin library {path} does not exist")
        return str(path)
    name = spec
    if name.startswith("libflagos_") and name.endswith(".so") and len(name) > len("libflagos_.so"):
        name = name[len("libflagos_"):-len(".so")]
    found = {c["name"].lower(): c["path"] for c in _C.discover(entry_point_candidates())}
    if name.lower() not in found:
        names = ", ".join(sorted(found)) or "none"
        raise LookupError(f"[flagos] no plugin named '{spec}' is installed (found: {names}; "
                          f"a library in the current directory is ./libflagos_{name}.so)")
    return found[name.lower()]


def run(plugin: str, options: list[str], json_path: str | None, groups: list[str]) -> int:
    """Runs the suite; returns the runner's exit code (0 when nothing failed)."""
    cmd = [str(runner_path()), resolve_plugin(plugin)]
    for opt in options:
        cmd += ["--option", opt]
    for group in groups:
        cmd += ["--group", group]
    if json_path:
        cmd += ["--json", json_path]
    return subprocess.call(cmd)
