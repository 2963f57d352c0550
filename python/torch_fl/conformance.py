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
    """A plugin name (as installed) or a path to its library -> library path."""
    if os.sep in spec or spec.endswith(".so"):
        path = Path(spec).resolve()
        if not path.exists():
            raise FileNotFoundError(f"[flagos] plugin library {path} does not exist")
        return str(path)
    found = {c["name"]: c["path"] for c in _C.discover(entry_point_candidates())}
    if spec not in found:
        names = ", ".join(sorted(found)) or "none"
        raise LookupError(f"[flagos] no plugin named '{spec}' is installed (found: {names})")
    return found[spec]


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
